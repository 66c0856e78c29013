package awsstore

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/tuningbox/tuningbox/shared/retry"
	"github.com/tuningbox/tuningbox/shared/store"
)

// S3API is the part of the S3 client the blob store uses.
type S3API interface {
	PutObject(context.Context, *s3.PutObjectInput, ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(context.Context, *s3.GetObjectInput, ...func(*s3.Options)) (*s3.GetObjectOutput, error)
	ListObjectsV2(context.Context, *s3.ListObjectsV2Input, ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	DeleteObject(context.Context, *s3.DeleteObjectInput, ...func(*s3.Options)) (*s3.DeleteObjectOutput, error)
}

// blobPrefix is the key prefix of every blob object.
const blobPrefix = "blobs/"

type blobs struct {
	s3     S3API
	bucket string
}

func (b *blobs) Put(ctx context.Context, data []byte) (string, error) {
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	in := &s3.PutObjectInput{
		Bucket:         &b.bucket,
		Key:            aws.String(blobPrefix + hash),
		ContentType:    aws.String("application/octet-stream"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum[:])),
		// Never replace an object: the same key always holds the same bytes, and
		// a conditional put of stored content costs one request and no new version.
		IfNoneMatch: aws.String("*"),
	}
	for attempt := 0; attempt < retry.Default.Attempts; attempt++ {
		if err := retry.Default.Wait(ctx, attempt); err != nil {
			return "", err
		}
		in.Body = bytes.NewReader(data)
		_, err := b.s3.PutObject(ctx, in)
		if err == nil {
			return hash, nil
		}
		switch statusOf(err) {
		case http.StatusPreconditionFailed: // stored before, unless only a swept blob's delete marker is there
			if in.IfNoneMatch == nil {
				return hash, nil
			}
			if _, err := b.Get(ctx, hash); !errors.Is(err, store.ErrNotFound) {
				return hash, err
			}
			// Some S3 implementations (versitygw) take a delete marker for the
			// object: the blob is put again, unconditionally, over the marker.
			in.IfNoneMatch = nil
			continue
		case http.StatusConflict: // a concurrent conditional put of the same key: try again
			continue
		}
		return "", fmt.Errorf("put blob %s: %w", hash, err)
	}
	return "", fmt.Errorf("put blob %s: concurrent writes did not settle after %d attempts", hash, retry.Default.Attempts)
}

func (b *blobs) Get(ctx context.Context, hash string) ([]byte, error) {
	if !isHash(hash) {
		return nil, store.ErrNotFound // no content has this name
	}
	out, err := b.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: &b.bucket, Key: aws.String(blobPrefix + hash)})
	if err != nil {
		if errors.As(err, new(*types.NoSuchKey)) {
			return nil, store.ErrNotFound
		}
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	return data, nil
}

func (b *blobs) List(ctx context.Context, fn func(hash string, created time.Time) error) error {
	pages := s3.NewListObjectsV2Paginator(b.s3, &s3.ListObjectsV2Input{Bucket: &b.bucket, Prefix: aws.String(blobPrefix)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		for _, o := range page.Contents {
			hash := strings.TrimPrefix(aws.ToString(o.Key), blobPrefix)
			if !isHash(hash) {
				continue
			}
			if err := fn(hash, aws.ToTime(o.LastModified)); err != nil {
				return err
			}
		}
	}
	return nil
}

// Delete removes the blob's current version only: in the versioned bucket
// that leaves a delete marker over the bytes, which the bucket's lifecycle
// expires after the table's point-in-time-recovery window
// (infra/storage.go), so an index restored within that window can have its
// blobs back by removing their markers (docs/aws.md, the restore drill).
func (b *blobs) Delete(ctx context.Context, hash string) error {
	if !isHash(hash) {
		return nil
	}
	if _, err := b.s3.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &b.bucket, Key: aws.String(blobPrefix + hash)}); err != nil {
		return fmt.Errorf("delete blob %s: %w", hash, err)
	}
	return nil
}

// statusOf returns the HTTP status of the response a call failed with (0 when there was none).
func statusOf(err error) int {
	var re *awshttp.ResponseError
	if !errors.As(err, &re) {
		return 0
	}
	return re.HTTPStatusCode()
}

// isHash reports whether s is a lowercase hex SHA-256.
func isHash(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
