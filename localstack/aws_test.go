// Package localstack holds the integration tests that run against AWS
// emulators (DynamoDB Local + versitygw, moto, or LocalStack) and the HTTP
// black-box suite. Endpoints come only from AWS_ENDPOINT_URL*; without them
// the AWS tests skip, so a plain `go test ./...` stays offline.
package localstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/url"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/awsstore"
	"github.com/tuningbox/tuningbox/shared/store/storetest"
)

var emulator struct {
	once sync.Once
	cfg  awsstore.Config
	err  error
}

// awsConfig returns the table and bucket of this test run, created once on the
// emulators named by AWS_ENDPOINT_URL*, or skips the test when none is named.
func awsConfig(t *testing.T) awsstore.Config {
	t.Helper()
	endpoints := map[string]string{}
	for _, name := range []string{"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL_S3"} {
		if v := os.Getenv(name); v != "" {
			endpoints[name] = v
		}
	}
	if endpoints["AWS_ENDPOINT_URL"] == "" && (endpoints["AWS_ENDPOINT_URL_DYNAMODB"] == "" || endpoints["AWS_ENDPOINT_URL_S3"] == "") {
		t.Skip("no emulator: set AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_DYNAMODB and AWS_ENDPOINT_URL_S3); " +
			"localstack/run-integration.sh does, see localstack/README.md")
	}
	for name, v := range endpoints {
		u, err := url.Parse(v)
		if err != nil || !loopback(u.Hostname()) {
			t.Fatalf("%s=%q: the integration tests only run against emulators on the loopback interface", name, v)
		}
	}
	emulator.once.Do(func() {
		suffix := randomSuffix()
		emulator.cfg = awsstore.Config{Table: "tuningbox-it-" + suffix, Bucket: "tuningbox-it-" + suffix, PathStyle: true}
		emulator.err = awsstore.EnsureResources(context.Background(), emulator.cfg)
	})
	if emulator.err != nil {
		t.Fatalf("create table and bucket: %v", emulator.err)
	}
	return emulator.cfg
}

// connect returns a backend on this run's table and bucket, with clients built the way production builds them.
func connect(t *testing.T) store.Backend {
	t.Helper()
	b, err := awsstore.Connect(t.Context(), awsConfig(t))
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	return b
}

func loopback(host string) bool {
	return host == "127.0.0.1" || host == "::1" || host == "localhost"
}

func randomSuffix() string {
	b := make([]byte, 6)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func TestContract(t *testing.T) {
	b := connect(t)
	storetest.Run(t, func(*testing.T) store.Backend { return b })
}

// TestBlobPutCreatesNoNewVersion: blobs are immutable, and a put of content that is
// already stored neither replaces the object nor adds a version to the versioned bucket.
func TestBlobPutCreatesNoNewVersion(t *testing.T) {
	b := connect(t)
	cfg := awsConfig(t)
	content := []byte("stored three times " + randomSuffix())
	var hash string
	for range 3 {
		h, err := b.Blobs.Put(t.Context(), content)
		if err != nil {
			t.Fatalf("Put: %v", err)
		}
		hash = h
	}
	awsCfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
	out, err := s3c.ListObjectVersions(t.Context(), &s3.ListObjectVersionsInput{Bucket: &cfg.Bucket, Prefix: aws.String("blobs/" + hash)})
	if err != nil {
		t.Fatalf("ListObjectVersions: %v", err)
	}
	if len(out.Versions) != 1 {
		t.Fatalf("%d versions of blobs/%s after three puts of the same content, want 1", len(out.Versions), hash)
	}
}

// TestBlobDeleteIsUndoable: the sweep's delete leaves the bytes as a
// noncurrent version under a delete marker, and removing the marker (the
// restore drill of docs/aws.md) brings the blob back.
func TestBlobDeleteIsUndoable(t *testing.T) {
	b := connect(t)
	cfg := awsConfig(t)
	content := []byte("swept and restored " + randomSuffix())
	hash, err := b.Blobs.Put(t.Context(), content)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if err := b.Blobs.Delete(t.Context(), hash); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if _, err := b.Blobs.Get(t.Context(), hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
	}
	awsCfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	s3c := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
	key := "blobs/" + hash
	out, err := s3c.ListObjectVersions(t.Context(), &s3.ListObjectVersionsInput{Bucket: &cfg.Bucket, Prefix: &key})
	if err != nil {
		t.Fatalf("ListObjectVersions: %v", err)
	}
	if len(out.Versions) != 1 || len(out.DeleteMarkers) != 1 || !aws.ToBool(out.DeleteMarkers[0].IsLatest) {
		t.Fatalf("after Delete: %d versions and %d delete markers, want the bytes under one current marker", len(out.Versions), len(out.DeleteMarkers))
	}
	if _, err := s3c.DeleteObject(t.Context(), &s3.DeleteObjectInput{Bucket: &cfg.Bucket, Key: &key, VersionId: out.DeleteMarkers[0].VersionId}); err != nil {
		t.Fatalf("remove the delete marker: %v", err)
	}
	got, err := b.Blobs.Get(t.Context(), hash)
	if err != nil || string(got) != string(content) {
		t.Fatalf("Get after removing the marker: %q, %v; want %q", got, err, content)
	}
}

// TestRestoreDrill is the restore drill of docs/aws.md on the store: a
// document written, the index as it was then kept (point-in-time recovery;
// moto's RestoreTableToPointInTime copies the table when called, so it is
// called at that point), the document deleted and its blob swept, then the
// blobs' delete markers removed: the restored index reads the same document
// back from the bucket.
func TestRestoreDrill(t *testing.T) {
	b := connect(t)
	cfg := awsConfig(t)
	ctx := t.Context()
	if err := store.InitGC(ctx, b.Index, b.Blobs); err != nil {
		t.Fatal(err)
	}
	// The sweep takes only blobs stored after its epoch, which InitGC may
	// have set just now; S3 dates objects to the second.
	time.Sleep(1100 * time.Millisecond)
	doc := store.Key{Partition: "drill#" + randomSuffix(), Sort: "values"}
	content := []byte(`{"restored": "` + randomSuffix() + `"}`)
	ref, err := store.PutBlob(ctx, b.Index, b.Blobs, content)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Index.Write(ctx, append([]store.Op{store.Put(doc, []byte(ref.Hash))}, ref.Ops...)...); err != nil {
		t.Fatal(err)
	}

	awsCfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ddb := dynamodb.NewFromConfig(awsCfg)
	restored := cfg.Table + "-restored-" + randomSuffix()
	if _, err := ddb.RestoreTableToPointInTime(ctx, &dynamodb.RestoreTableToPointInTimeInput{
		SourceTableName: &cfg.Table, TargetTableName: &restored, UseLatestRestorableTime: aws.Bool(true),
	}); err != nil {
		if unknown := (*smithy.GenericAPIError)(nil); errors.As(err, &unknown) && unknown.Code == "UnknownOperationException" {
			t.Skipf("this emulator has no point-in-time recovery (DynamoDB Local): %v", err)
		}
		t.Fatalf("RestoreTableToPointInTime: %v", err)
	}

	// The document goes, with its blob reference; the sweep (no grace) deletes the blob.
	var deletes []store.Op
	for _, op := range ref.Ops {
		if op.Kind == store.OpPut {
			deletes = append(deletes, store.Delete(op.Key))
		}
	}
	if err := b.Index.Write(ctx, append(deletes, store.Delete(doc))...); err != nil {
		t.Fatal(err)
	}
	if report, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil || report.Removed == 0 {
		t.Fatalf("sweep: %+v, %v; want the document's blob removed", report, err)
	}
	if _, err := b.Blobs.Get(ctx, ref.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the swept blob: %v, want ErrNotFound", err)
	}

	// Step 3 of the drill: remove the current delete markers under blobs/.
	s3c := s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
	versions, err := s3c.ListObjectVersions(ctx, &s3.ListObjectVersionsInput{Bucket: &cfg.Bucket, Prefix: aws.String("blobs/")})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range versions.DeleteMarkers {
		if aws.ToBool(m.IsLatest) {
			if _, err := s3c.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &cfg.Bucket, Key: m.Key, VersionId: m.VersionId}); err != nil {
				t.Fatal(err)
			}
		}
	}

	// Step 4: the restored index reads the document back.
	back, err := awsstore.Connect(ctx, awsstore.Config{Table: restored, Bucket: cfg.Bucket, PathStyle: true})
	if err != nil {
		t.Fatal(err)
	}
	item, err := back.Index.Get(ctx, doc)
	if err != nil {
		t.Fatalf("the document in the restored index: %v", err)
	}
	got, err := back.Blobs.Get(ctx, string(item.Value))
	if err != nil || string(got) != string(content) {
		t.Fatalf("the document's blob read through the restored index: %q, %v; want %q", got, err, content)
	}
}
