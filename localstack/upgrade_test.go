package localstack

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/tuningbox/tuningbox/shared/store/awsstore"
	"github.com/tuningbox/tuningbox/shared/store/releasestore"
)

// releaseDumps are the emulators' table and bucket as earlier builds wrote
// them, in testdata/ (NAME.json, a dump) with what that build read from them
// (NAME.reads.json), oldest first. testdata/README.md says how each was made.
var releaseDumps = []string{"aws-store-215eeeb"}

var writeReleaseDump = flag.String("write-release-dump", "", "write testdata/NAME.json and NAME.reads.json with this build on the emulators, then check them")

// dump is a table's items as DynamoDB's JSON gives them (`aws dynamodb
// scan`: {"pk":{"S":...},"val":{"B":<base64>},...}) and its bucket's
// objects: the bytes the stored format is made of, whichever build reads them.
type dump struct {
	Items   []map[string]attribute `json:"items"`
	Objects map[string][]byte      `json:"objects"`
}

// attribute is one attribute value of an item, of the types tuningbox stores.
type attribute struct {
	S *string `json:"S,omitempty"`
	N *string `json:"N,omitempty"`
	B *[]byte `json:"B,omitempty"`
}

func fromAttributeValue(t *testing.T, v types.AttributeValue) attribute {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return attribute{S: &v.Value}
	case *types.AttributeValueMemberN:
		return attribute{N: &v.Value}
	case *types.AttributeValueMemberB:
		return attribute{B: &v.Value}
	}
	t.Fatalf("an attribute of type %T, which a dump does not hold", v)
	return attribute{}
}

func (a attribute) value(t *testing.T) types.AttributeValue {
	switch {
	case a.S != nil:
		return &types.AttributeValueMemberS{Value: *a.S}
	case a.N != nil:
		return &types.AttributeValueMemberN{Value: *a.N}
	case a.B != nil:
		return &types.AttributeValueMemberB{Value: *a.B}
	}
	t.Fatal("an attribute of the dump has no value")
	return nil
}

// TestReleaseDumpsRead: the table items and bucket objects an earlier build
// wrote, loaded as they are into a fresh table and bucket of the emulators,
// read with this build as that build read them: every document version,
// effective document and audit record.
func TestReleaseDumpsRead(t *testing.T) {
	awsConfig(t) // skips without emulators
	if *writeReleaseDump != "" {
		writeDump(t, *writeReleaseDump)
	}
	for _, name := range releaseDumps {
		t.Run(name, func(t *testing.T) {
			var d dump
			var want releasestore.Reads
			readJSON(t, name+".json", &d)
			readJSON(t, name+".reads.json", &want)
			cfg := freshStore(t)
			ddb, s3c := rawClients(t)
			ctx := t.Context()
			for _, item := range d.Items {
				values := make(map[string]types.AttributeValue, len(item))
				for name, a := range item {
					values[name] = a.value(t)
				}
				if _, err := ddb.PutItem(ctx, &dynamodb.PutItemInput{TableName: &cfg.Table, Item: values}); err != nil {
					t.Fatal(err)
				}
			}
			for key, body := range d.Objects {
				if _, err := s3c.PutObject(ctx, &s3.PutObjectInput{Bucket: &cfg.Bucket, Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
					t.Fatal(err)
				}
			}
			b, err := awsstore.Connect(ctx, cfg)
			if err != nil {
				t.Fatal(err)
			}
			releasestore.Compare(t, releasestore.Read(t, b), want)
		})
	}
}

// writeDump fills a fresh table and bucket with this build
// (releasestore.Write) and writes testdata/NAME.json with their items and
// objects, and NAME.reads.json with what this build reads from them.
func writeDump(t *testing.T, name string) {
	cfg := freshStore(t)
	ctx := t.Context()
	b, err := awsstore.Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	releasestore.Write(t, b)
	reads := releasestore.Read(t, b)

	ddb, s3c := rawClients(t)
	d := dump{Objects: map[string][]byte{}}
	scan := dynamodb.NewScanPaginator(ddb, &dynamodb.ScanInput{TableName: &cfg.Table, ConsistentRead: aws.Bool(true)})
	for scan.HasMorePages() {
		page, err := scan.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			out := make(map[string]attribute, len(item))
			for name, v := range item {
				out[name] = fromAttributeValue(t, v)
			}
			d.Items = append(d.Items, out)
		}
	}
	// In key order: a dump written again differs only where the build's writes do.
	slices.SortFunc(d.Items, func(a, b map[string]attribute) int {
		return cmp.Or(strings.Compare(*a["pk"].S, *b["pk"].S), strings.Compare(*a["sk"].S, *b["sk"].S))
	})
	list := s3.NewListObjectsV2Paginator(s3c, &s3.ListObjectsV2Input{Bucket: &cfg.Bucket})
	for list.HasMorePages() {
		page, err := list.NextPage(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range page.Contents {
			got, err := s3c.GetObject(ctx, &s3.GetObjectInput{Bucket: &cfg.Bucket, Key: o.Key})
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(got.Body)
			got.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			d.Objects[*o.Key] = body
		}
	}
	writeJSON(t, name+".json", d)
	writeJSON(t, name+".reads.json", reads)
}

// freshStore creates a table and bucket of their own on the emulators (the
// run's own hold what other tests write).
func freshStore(t *testing.T) awsstore.Config {
	t.Helper()
	run := awsConfig(t)
	suffix := randomSuffix()
	cfg := awsstore.Config{Table: run.Table + "-" + suffix, Bucket: run.Bucket + "-" + suffix, PathStyle: true}
	if err := awsstore.EnsureResources(context.Background(), cfg); err != nil {
		t.Fatalf("create table and bucket: %v", err)
	}
	return cfg
}

// rawClients are SDK clients of the emulators, for what the store does not do.
func rawClients(t *testing.T) (*dynamodb.Client, *s3.Client) {
	t.Helper()
	awsCfg, err := config.LoadDefaultConfig(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return dynamodb.NewFromConfig(awsCfg), s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true })
}

func readJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func writeJSON(t *testing.T, name string, v any) {
	t.Helper()
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll("testdata", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name), append(data, '\n'), 0o644); err != nil {
		t.Fatal(fmt.Errorf("write %s: %w", name, err))
	}
}
