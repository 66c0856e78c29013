package localstack

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/middleware"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/awsstore"
)

// configServer serves the ConfigDB API and the node registry over b on
// 127.0.0.1 the way the server does (blobs behind its in-memory cache, the
// node level bound to the registry), counting each request's AWS calls.
type configServer struct {
	*httptest.Server
	mu   sync.Mutex
	last *awsstore.CallCounter // the AWS calls of the latest request
}

func newConfigServer(t *testing.T, b store.Backend) *configServer {
	t.Helper()
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	mux, err := app.Routes(b, cfg, "config", "templates")
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.Wrap(mux, httpapi.Options{})
	s := &configServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, calls := awsstore.WithCallCounter(r.Context())
		s.mu.Lock()
		s.last = calls
		s.mu.Unlock()
		api.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *configServer) calls() *awsstore.CallCounter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

// TestEffectiveReadCalls: a warm effective lookup of a node-level resource in a
// 3-level environment costs at most one DynamoDB request and no S3 GET, also
// when the node is given by FQDN on the short path (its zone and role from the
// registry). It logs the counts of the write path and of cold and conditional reads too.
func TestEffectiveReadCalls(t *testing.T) {
	b := connect(t)
	srv := newConfigServer(t, b)
	f, _ := nodeLevelDocuments(t, srv)

	effective := f.doc("astute", "values", "nodes", f.node.FQDN) + "?effective"
	want := `{"a":"node v2","b":{"x":2},"c":"role override"}`

	// A fresh server (empty caches) over the same store: the cold read.
	cold := newConfigServer(t, b)
	coldClient := clientFor(t, cold.URL)
	coldClient.wantJSON("GET", effective, want)
	t.Logf("read calls: cold effective lookup: %s", cold.calls())

	f.wantJSON("GET", effective, want) // the short path's first read on srv resolves the node
	t.Logf("read calls: first effective lookup by short path (node resolved): %s", srv.calls())
	warm := f.wantJSON("GET", effective, want)
	calls := srv.calls()
	t.Logf("read calls: warm effective lookup: %s", calls)
	if n := total(calls.DynamoDB()); n > 1 {
		t.Errorf("warm effective lookup made %d DynamoDB requests (%v), want at most 1", n, calls.DynamoDB())
	}
	if n := calls.S3()["GetObject"]; n != 0 {
		t.Errorf("warm effective lookup made %d S3 GETs, want 0", n)
	}

	f.want(http.StatusNotModified, "GET", effective, nil, "If-None-Match", warm.header.Get("ETag"))
	t.Logf("read calls: conditional effective lookup (304): %s", srv.calls())
}

// nodeLevelDocuments fills a [zone, role, nodes] environment through srv:
// values at the global and zone levels, overrides at the role level, and two
// versions of the node's values. It returns the fixture and the node's level path.
func nodeLevelDocuments(t *testing.T, srv *configServer) (*fixture, []string) {
	f := setUp(t, clientFor(t, srv.URL))
	f.registerNode(t)
	node := []string{"zone", "z1", "role", "compute", "nodes", f.node.FQDN}
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), `{"a":1,"b":{"x":1},"c":"global"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z1"), `{"b":{"x":2}}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "overrides", "zone", "z1", "role", "compute"), `{"c":"role override"}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", node...), `{"a":"node"}`)
	t.Logf("write calls: first version of a node-level document: %s", srv.calls())
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", node...), `{"a":"node v2"}`)
	t.Logf("write calls: next version of a node-level document: %s", srv.calls())
	return f, node
}

// TestDocumentWriteCalls: what a new version of a node-level document costs
// a server that wrote the document before (the README's write cost): one
// BatchGetItem (the level path's items and the head), one GetItem (the
// blob's collection guard), one TransactWriteItems (version, head, audit
// record, blob reference) and one S3 PutObject. nodeLevelDocuments logs the
// first two versions' counts, which resolve the path and fill the caches.
func TestDocumentWriteCalls(t *testing.T) {
	srv := newConfigServer(t, connect(t))
	f, node := nodeLevelDocuments(t, srv)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", node...), `{"a":"node v3"}`)
	calls := srv.calls()
	t.Logf("write calls: warm write of a node-level document version: %s", calls)
	want := map[string]int{"TransactWriteItems": 1, "BatchGetItem": 1, "GetItem": 1}
	for op, n := range calls.DynamoDB() {
		if n > want[op] {
			t.Errorf("DynamoDB %s=%d, want at most %d", op, n, want[op])
		}
	}
	if got := calls.DynamoDB()["TransactWriteItems"]; got != 1 {
		t.Errorf("TransactWriteItems=%d, want 1 (the version and its audit record in one transaction)", got)
	}
	if s3 := calls.S3(); s3["PutObject"] != 1 || total(s3) != 1 {
		t.Errorf("S3 calls %v, want PutObject=1 only", s3)
	}
}

func total(ops map[string]int) int {
	n := 0
	for _, c := range ops {
		n += c
	}
	return n
}

// faultyDynamoDB fails every write while failWrites is set, as a throttled or
// unavailable DynamoDB would, after the request reached it.
type faultyDynamoDB struct {
	awsstore.DynamoDBAPI
	failWrites atomic.Bool
}

var errInjected = &types.InternalServerError{Message: aws.String("injected fault: DynamoDB internal error")}

func (f *faultyDynamoDB) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	if f.failWrites.Load() {
		return nil, errInjected
	}
	return f.DynamoDBAPI.UpdateItem(ctx, in, opts...)
}

func (f *faultyDynamoDB) DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	if f.failWrites.Load() {
		return nil, errInjected
	}
	return f.DynamoDBAPI.DeleteItem(ctx, in, opts...)
}

func (f *faultyDynamoDB) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	if f.failWrites.Load() {
		return nil, errInjected
	}
	return f.DynamoDBAPI.TransactWriteItems(ctx, in, opts...)
}

// TestIndexWriteFailsAfterBlobPut: the new version's blob reaches S3, then the
// DynamoDB write fails. The client gets a JSON 500 that leaks nothing, readers
// keep getting the previous version (from this server and from a fresh one),
// and the next write succeeds.
func TestIndexWriteFailsAfterBlobPut(t *testing.T) {
	cfg := awsConfig(t)
	awsCfg, err := config.LoadDefaultConfig(t.Context(), config.WithAPIOptions([]func(*middleware.Stack) error{awsstore.CountCalls}))
	if err != nil {
		t.Fatal(err)
	}
	ddb := &faultyDynamoDB{DynamoDBAPI: dynamodb.NewFromConfig(awsCfg)}
	b := awsstore.New(ddb, s3.NewFromConfig(awsCfg, func(o *s3.Options) { o.UsePathStyle = true }), cfg)
	srv := newConfigServer(t, b)
	f := setUp(t, clientFor(t, srv.URL))
	path := f.doc("astute", "values", "zone", "z1", "role", "compute")
	f.want(http.StatusNoContent, "PUT", path, `{"v":1}`)
	f.wantJSON("GET", path+"?effective", `{"v":1}`)

	ddb.failWrites.Store(true)
	r := f.want(http.StatusInternalServerError, "PUT", path, `{"v":2}`) // the client checks the JSON error body
	if body := string(r.body); strings.Contains(body, "injected") || strings.Contains(body, "DynamoDB") {
		t.Errorf("500 body leaks the cause: %s", body)
	}
	if puts := srv.calls().S3()["PutObject"]; puts != 1 {
		t.Fatalf("the failed write made %d S3 PutObject calls, want 1 (blob first, then the index)", puts)
	}
	ddb.failWrites.Store(false)

	for _, c := range []*client{f.client, clientFor(t, newConfigServer(t, b).URL)} {
		c.wantJSON("GET", path, `{"v":1}`)
		c.wantJSON("GET", path+"?effective", `{"v":1}`)
		var versions []configdb.Version
		c.want(http.StatusOK, "GET", path+"/versions", nil).decode(t, &versions)
		if len(versions) != 1 || versions[0].Version != 1 {
			t.Fatalf("versions after the failed write: %+v, want only version 1", versions)
		}
	}
	f.want(http.StatusNoContent, "PUT", path, `{"v":2}`)
	f.wantJSON("GET", path+"?effective", `{"v":2}`)
}

// TestHierarchyRace: the removal of a hierarchy level and the first document
// written at it, raced on the AWS backend; never both succeed.
func TestHierarchyRace(t *testing.T) {
	const trials = 60
	writes, removals := configdbtest.HierarchyRace(t, connect(t), trials)
	t.Logf("%d trials: the write won %d, the level removal %d, never both", trials, writes, removals)
}

// TestVersionWriters: on the AWS backend, a version names its writer in the
// same atomic write as its audit record, and explain reads it from there.
func TestVersionWriters(t *testing.T) {
	configdbtest.VersionWriters(t, connect(t))
}
