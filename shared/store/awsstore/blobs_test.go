package awsstore

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/tuningbox/tuningbox/shared/store"
)

type fakeS3 struct {
	S3API  // calls the tests do not script panic on the nil interface
	puts   int
	put    func(*s3.PutObjectInput) error
	object map[string][]byte
	getErr error
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	f.puts++
	return &s3.PutObjectOutput{}, f.put(in)
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if f.getErr != nil {
		return nil, f.getErr
	}
	data, ok := f.object[aws.ToString(in.Key)]
	if !ok {
		return nil, &types.NoSuchKey{Message: aws.String("no such key")}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(data))}, nil
}

// httpError is what the SDK returns for an error response without a modelled error type.
func httpError(status int) error {
	return &awshttp.ResponseError{ResponseError: &smithyhttp.ResponseError{
		Response: &smithyhttp.Response{Response: &http.Response{StatusCode: status}},
		Err:      errors.New(http.StatusText(status)),
	}}
}

const helloHash = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824" // sha256("hello")

func TestBlobPut(t *testing.T) {
	stored := map[string][]byte{"blobs/" + helloHash: []byte("hello")}
	tests := []struct {
		name      string
		responses []error // one per PutObject call
		objects   map[string][]byte
		// unconditional is the PutObject call (from 1) from which If-None-Match is not sent (0: never).
		unconditional int
		wantErr       error
	}{
		{name: "stored", responses: []error{nil}},
		{name: "already stored: 412 from If-None-Match", responses: []error{httpError(http.StatusPreconditionFailed)}, objects: stored},
		{name: "a swept blob's delete marker taken for it: put again over the marker", unconditional: 2,
			responses: []error{httpError(http.StatusPreconditionFailed), nil}},
		{name: "concurrent put of the same key: retried", responses: []error{httpError(http.StatusConflict), nil}},
		{name: "server error", responses: []error{httpError(http.StatusInternalServerError)}, wantErr: errOther},
		{name: "no response at all", responses: []error{errors.New("connection refused")}, wantErr: errOther},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := &fakeS3{object: tt.objects}
			fake.put = func(in *s3.PutObjectInput) error {
				conditional := tt.unconditional == 0 || fake.puts < tt.unconditional
				if aws.ToString(in.Key) != "blobs/"+helloHash || (aws.ToString(in.IfNoneMatch) == "*") != conditional {
					t.Fatalf("PutObject key %q If-None-Match %q", aws.ToString(in.Key), aws.ToString(in.IfNoneMatch))
				}
				if body, _ := io.ReadAll(in.Body); string(body) != "hello" {
					t.Fatalf("PutObject body %q", body)
				}
				return tt.responses[fake.puts-1]
			}
			b := &blobs{s3: fake, bucket: "b"}
			hash, err := b.Put(context.Background(), []byte("hello"))
			checkErr(t, err, tt.wantErr)
			if err == nil && hash != helloHash {
				t.Fatalf("hash %s, want %s", hash, helloHash)
			}
			if fake.puts != len(tt.responses) {
				t.Fatalf("%d PutObject calls, want %d", fake.puts, len(tt.responses))
			}
		})
	}
}

func TestBlobGet(t *testing.T) {
	fake := &fakeS3{object: map[string][]byte{"blobs/" + helloHash: []byte("hello")}}
	b := &blobs{s3: fake, bucket: "b"}
	ctx := context.Background()
	if data, err := b.Get(ctx, helloHash); err != nil || string(data) != "hello" {
		t.Fatalf("Get = %q, %v", data, err)
	}
	for _, hash := range []string{strings.Repeat("0", 64), "../etc/passwd", strings.ToUpper(helloHash)} {
		if _, err := b.Get(ctx, hash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get(%q) = %v, want ErrNotFound", hash, err)
		}
	}
	fake.getErr = httpError(http.StatusForbidden)
	_, err := b.Get(ctx, helloHash)
	checkErr(t, err, errOther)
}
