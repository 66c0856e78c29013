package apptest

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/events"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/keyspace"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/schema"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// Functions builds the handler the way the stack deploys it, over one fresh
// in-memory store: a handler per endpoint group, routed by path prefix as API
// Gateway does; the authorizer's handler in front of every route but the
// public GETs, its answer reaching the group as on Lambda (so the groups never
// verify credentials); and admin/password created as the first administrator
// by the stack's custom resource, from a secret. Each function sees the store
// through a view that fails the test when the function touches a partition or
// a blob that its grant (shared/app/keyspace, from which infra writes the IAM
// policies) lacks. Every exchange is checked against the OpenAPI document.
func Functions(t testing.TB, admin, password string, logger *slog.Logger) *Stack {
	t.Helper()
	b := mem.New()
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	granted := func(name string) store.Backend { return Granted(t, b, name) }

	const secretARN = "arn:aws:secretsmanager:us-east-1:000000000000:secret:tuningbox-admin"
	secret, _ := json.Marshal(map[string]string{"username": admin, "password": password})
	firstAdmin := app.FirstAdministrator(granted(routes.GroupAuth).Index, func(context.Context, string) (string, error) { return string(secret), nil }, logger)
	if _, _, err := firstAdmin(context.Background(), cfn.Event{RequestType: cfn.RequestCreate, ResourceProperties: map[string]any{app.AdminSecretProperty: secretARN}}); err != nil {
		t.Fatal(err)
	}

	authorize, err := app.Authorizer(granted(keyspace.Authorizer), cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	groups := map[string]http.Handler{}
	for _, name := range routes.Groups() {
		// As the functions link them: only the config function checks JSON
		// Schemas, and none exports Prometheus metrics.
		var opts app.Options
		if name == routes.GroupConfig {
			opts.Schemas = configdb.WithSchemas(schema.Compile)
		}
		if groups[name], err = app.NewHandler(granted(name), cfg, logger, opts, name); err != nil {
			t.Fatal(err)
		}
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		group := groupOf(r.URL.Path)
		next, ok := groups[group]
		if !ok {
			writeError(w, http.StatusNotFound, "no route")
			return
		}
		if r.Method == http.MethodGet && slices.ContainsFunc(routes.PublicPaths(group), func(p string) bool { return gatewayMatch(p, r.URL.Path) }) {
			next.ServeHTTP(w, r)
			return
		}
		principal, ok := authorizerAnswer(t, authorize, r)
		if !ok {
			writeError(w, http.StatusUnauthorized, "the authorizer refused the credentials")
			return
		}
		next.ServeHTTP(w, r.WithContext(httpapi.WithAuthorizerContext(r.Context(), principal)))
	})
	return &Stack{Handler: routestest.Validating(t, h), Unchecked: h, Backend: b, Config: cfg}
}

// Granted is function's view of b: a call outside the function's access
// (shared/app/keyspace) fails the test, as its IAM policy would refuse it.
func Granted(t testing.TB, b store.Backend, function string) store.Backend {
	access, ok := keyspace.Functions[function]
	if !ok {
		t.Fatalf("function %s has no access in shared/app/keyspace", function)
	}
	return store.Backend{Index: grantedIndex{b.Index, t, function, access}, Blobs: grantedBlobs{b.Blobs, t, function, access.Blobs}}
}

// gatewayMatch reports whether an API Gateway route path takes path: the
// same path, or for a greedy {proxy+} one segment or more below its prefix.
func gatewayMatch(route, path string) bool {
	if prefix, greedy := strings.CutSuffix(route, "/{proxy+}"); greedy {
		return len(path) > len(prefix)+1 && strings.HasPrefix(path, prefix+"/")
	}
	return route == path
}

// groupOf is the group whose paths API Gateway routes path to ("" for none).
func groupOf(path string) string {
	for _, g := range routes.Groups() {
		for _, p := range routes.Prefixes(g) {
			if path == p || strings.HasPrefix(path, p+"/") {
				return g
			}
		}
	}
	return ""
}

// authorizerAnswer asks the authorizer as an HTTP API does (payload 2.0,
// simple response) and returns its context when it lets the request through.
func authorizerAnswer(t testing.TB, authorize func(context.Context, json.RawMessage) (any, error), r *http.Request) (map[string]any, bool) {
	if r.Header.Get("Authorization") == "" {
		return nil, false // API Gateway refuses before the authorizer: its identity source is missing
	}
	headers := map[string]string{}
	for k, v := range r.Header {
		headers[strings.ToLower(k)] = strings.Join(v, ",")
	}
	ev := events.APIGatewayV2CustomAuthorizerV2Request{Version: "2.0", Type: "REQUEST", RawPath: r.URL.Path, Headers: headers,
		IdentitySource: []string{r.Header.Get("Authorization")}}
	ev.RequestContext.HTTP.Method, ev.RequestContext.HTTP.Path = r.Method, r.URL.Path
	ev.RequestContext.HTTP.SourceIP, _, _ = strings.Cut(r.RemoteAddr, ":")
	payload, _ := json.Marshal(ev)
	out, err := authorize(r.Context(), payload)
	if err != nil {
		t.Errorf("authorizer: %v", err)
		return nil, false
	}
	answer, ok := out.(events.APIGatewayV2CustomAuthorizerSimpleResponse)
	if !ok {
		t.Errorf("authorizer answered %T", out)
		return nil, false
	}
	return answer.Context, answer.IsAuthorized
}

func writeError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(httpapi.ErrorBody{Error: httpapi.ErrorDetail{Code: status, Message: message}})
}

// grantedIndex is a function's view of the index: a call on a partition
// outside its access fails the test (the IAM policy would refuse it).
type grantedIndex struct {
	store.Index
	t      testing.TB
	name   string
	access keyspace.Access
}

func (g grantedIndex) check(op string, prefixes []string, partition string) {
	if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(partition, p) }) {
		g.t.Errorf("function %s: %s on partition %q, outside its grant %v (shared/app/keyspace)", g.name, op, partition, prefixes)
	}
}

func (g grantedIndex) Get(ctx context.Context, k store.Key) (store.Item, error) {
	g.check("GetItem", g.access.Read, k.Partition)
	return g.Index.Get(ctx, k)
}

func (g grantedIndex) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	for _, k := range keys {
		g.check("BatchGetItem", g.access.Read, k.Partition)
	}
	return g.Index.BatchGet(ctx, keys)
}

func (g grantedIndex) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	g.check("Query", g.access.Read, q.Partition)
	return g.Index.Query(ctx, q)
}

func (g grantedIndex) Write(ctx context.Context, ops ...store.Op) error {
	for _, op := range ops {
		g.check(fmt.Sprintf("write (op kind %d)", op.Kind), g.access.Write, op.Key.Partition)
	}
	return g.Index.Write(ctx, ops...)
}

// grantedBlobs is a function's view of the blob bucket, by its blob access.
type grantedBlobs struct {
	store.Blobs
	t      testing.TB
	name   string
	access keyspace.BlobAccess
}

func (g grantedBlobs) check(op string, need keyspace.BlobAccess) {
	if g.access < need {
		g.t.Errorf("function %s: blob %s beyond its blob access %d (shared/app/keyspace)", g.name, op, g.access)
	}
}

func (g grantedBlobs) Put(ctx context.Context, data []byte) (string, error) {
	g.check("Put", keyspace.BlobsReadWrite)
	return g.Blobs.Put(ctx, data)
}

func (g grantedBlobs) Get(ctx context.Context, hash string) ([]byte, error) {
	g.check("Get", keyspace.BlobsRead)
	return g.Blobs.Get(ctx, hash)
}

func (g grantedBlobs) List(ctx context.Context, fn func(string, time.Time) error) error {
	g.check("List", keyspace.BlobsCollect)
	return g.Blobs.List(ctx, fn)
}

func (g grantedBlobs) Delete(ctx context.Context, hash string) error {
	g.check("Delete", keyspace.BlobsCollect)
	return g.Blobs.Delete(ctx, hash)
}
