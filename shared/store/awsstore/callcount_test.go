package awsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/tuningbox/tuningbox/shared/store"
)

// scriptedHTTP answers every request with the next status of its script (200 once the script runs out).
type scriptedHTTP struct{ statuses []int }

func (s *scriptedHTTP) Do(r *http.Request) (*http.Response, error) {
	status := http.StatusOK
	if len(s.statuses) > 0 {
		status, s.statuses = s.statuses[0], s.statuses[1:]
	}
	body := "{}"
	if status != http.StatusOK {
		body = `{"__type":"InternalServerError","message":"try again"}`
	}
	return &http.Response{
		StatusCode: status,
		Header:     http.Header{"Content-Type": {"application/x-amz-json-1.0"}},
		Body:       io.NopCloser(strings.NewReader(body)),
		Request:    r,
	}, nil
}

// noWaitRetryer is the SDK's standard retryer without its backoff delays.
func noWaitRetryer() aws.Retryer {
	return retry.NewStandard(func(o *retry.StandardOptions) {
		o.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
	})
}

// The SDK's own lines (here its retry of a 500) go to the Config's logger.
func TestSDKLinesGoToTheLogger(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "") // a CA bundle needs the SDK's own HTTP client, not the scripted one
	var logs bytes.Buffer
	b, err := Connect(t.Context(), Config{Table: "t", Bucket: "b", Logger: slog.New(slog.NewJSONHandler(&logs, nil))},
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("test", "test", "")),
		config.WithHTTPClient(&scriptedHTTP{statuses: []int{http.StatusInternalServerError}}),
		config.WithRetryer(noWaitRetryer),
		config.WithClientLogMode(aws.LogRetries))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Index.BatchGet(t.Context(), []store.Key{keyA}); err != nil {
		t.Fatal(err)
	}
	var retried bool
	for line := range strings.Lines(logs.String()) {
		var l map[string]any
		if err := json.Unmarshal([]byte(line), &l); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		retried = retried || l["source"] == "aws-sdk" && strings.Contains(l["msg"].(string), "retry")
	}
	if !retried {
		t.Errorf("no line of the SDK's retry in the logger's output:\n%s", logs.String())
	}
}

func TestCallCounter(t *testing.T) {
	httpc := &scriptedHTTP{statuses: []int{http.StatusInternalServerError}} // the first request fails once
	creds := credentials.NewStaticCredentialsProvider("test", "test", "")
	noWait := noWaitRetryer()
	ddb := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String("http://127.0.0.1:9"),
		HTTPClient: httpc, Retryer: noWait, DisableValidateResponseChecksum: true,
		APIOptions: []func(*middleware.Stack) error{CountCalls},
	})
	s3c := s3.New(s3.Options{
		Region: "us-east-1", Credentials: creds, BaseEndpoint: aws.String("http://127.0.0.1:9"), UsePathStyle: true,
		HTTPClient: httpc, Retryer: noWait,
		APIOptions: []func(*middleware.Stack) error{CountCalls},
	})
	b := New(ddb, s3c, Config{Table: "t", Bucket: "b"})

	ctx, counter := WithCallCounter(context.Background())
	if _, err := b.Index.Get(ctx, keyA); err == nil {
		t.Fatal("Get of an item the fake does not return succeeded")
	}
	if _, err := b.Index.BatchGet(ctx, []store.Key{keyA, keyB}); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Blobs.Put(ctx, []byte("hello")); err != nil {
		t.Fatal(err)
	}
	// Outside the counted context nothing is counted.
	if _, err := b.Index.BatchGet(context.Background(), []store.Key{keyA}); err != nil {
		t.Fatal(err)
	}

	if got, want := counter.DynamoDB(), map[string]int{"GetItem": 2, "BatchGetItem": 1}; !maps.Equal(got, want) {
		t.Errorf("DynamoDB calls %v, want %v (the failed attempt counts)", got, want)
	}
	if got, want := counter.S3(), map[string]int{"PutObject": 1}; !maps.Equal(got, want) {
		t.Errorf("S3 calls %v, want %v", got, want)
	}
	if got, want := counter.String(), "DynamoDB BatchGetItem=1 GetItem=2; S3 PutObject=1"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
