package routes_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
)

// TestDocumentValidates loads the served document with kin-openapi and
// validates it as OpenAPI 3.1 (its JSON Schemas as 2020-12).
func TestDocumentValidates(t *testing.T) {
	doc, err := routestest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.OpenAPI != routes.OpenAPIVersion {
		t.Fatalf("openapi %q, want %s", doc.OpenAPI, routes.OpenAPIVersion)
	}
	operations := 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			operations++
			if op.OperationID == "" || op.Summary == "" {
				t.Errorf("%s %s has no operationId or summary", method, path)
			}
		}
	}
	if operations != len(routes.Table) {
		t.Errorf("%d operations in the document, %d routes in the table", operations, len(routes.Table))
	}
	t.Logf("OpenAPI %s document: %d paths, %d operations, %d schemas, %d bytes; kin-openapi validates it",
		doc.OpenAPI, doc.Paths.Len(), operations, len(doc.Components.Schemas), len(routes.Document()))
}

// TestMultiSegmentParameters: a {name...} wildcard is one documented path
// parameter that says it spans segments.
func TestMultiSegmentParameters(t *testing.T) {
	doc, err := routestest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range routes.Table {
		if !strings.Contains(r.Path, "...}") {
			continue
		}
		n++
		op := doc.Paths.Find(routes.OpenAPIPath(r.Path)).GetOperation(r.Method)
		found := false
		for _, p := range op.Parameters {
			if p.Value.In == "path" && p.Value.Extensions[routes.MultiSegmentExtension] == true {
				found = true
			}
		}
		if !found {
			t.Errorf("%s %s: no path parameter marked %s", r.Method, r.Path, routes.MultiSegmentExtension)
		}
	}
	if n == 0 {
		t.Fatal("no multi-segment route in the table")
	}
}

// TestFind matches requests with the mux's semantics, path values included.
func TestFind(t *testing.T) {
	tests := []struct {
		method, target, id string
		values             map[string]string
	}{
		{"GET", "/api/v1/config", "versions", nil},
		{"HEAD", "/api/v1/config/", "versions", nil},
		{"GET", "/api/v1/openapi.json", "openapi", nil},
		// The document routes, behind a level path of any depth (the level matcher).
		{"GET", "/api/v1/config/environments/1/nodes/7/resources/a/b/values?effective", "config.documents.effective",
			map[string]string{"env": "1", "resource": "a/b", "kind": "values"}},
		{"GET", "/api/v1/config/environments/1/nodes/7/resources/a/b/values?effective=false", "config.values.get",
			map[string]string{"env": "1", "resource": "a/b", "kind": "values"}},
		{"GET", "/api/v1/config/environments/e/resources/override/plugins/values", "config.values.get",
			map[string]string{"env": "e", "resource": "override/plugins"}},
		{"GET", "/api/v1/config/environments/1/role/a/nodes/7/resources/r/override", "config.overrides.get",
			map[string]string{"env": "1", "resource": "r", "kind": "override"}},
		{"HEAD", "/api/v1/config/environments/1/resources/r/overrides/versions", "config.documents.versions",
			map[string]string{"resource": "r", "kind": "overrides"}},
		{"PUT", "/api/v1/config/environments/1/nodes/7/resources/r/values", "config.values.put", map[string]string{"resource": "r"}},
		{"PUT", "/api/v1/config/environments/1/resources/r/overrides", "config.overrides.put", map[string]string{"resource": "r"}},
		{"PATCH", "/api/v1/config/environments/1/resources/a/values/keys/set", "config.keys.set", map[string]string{"resource": "a", "kind": "values"}},
		{"PATCH", "/api/v1/config/environments/1/x/y/resources/a/overrides/keys/delete", "config.keys.delete", map[string]string{"resource": "a", "kind": "overrides"}},
		{"PATCH", "/api/v1/config/environments/1/resources/a/values", "", nil},
		{"PUT", "/api/v1/config/environments/1/resources/a/values/versions", "", nil},
		{"GET", "/api/v1/config/environments/1/nodes/resources/a/values", "", nil},
		{"GET", "/api/v1/config/environments/1/resources/a/valuez", "", nil},
		{"GET", "/api/v1/config/environments/1/resources/values", "", nil},
		{"GET", "/api/v1/config/environments/1/hierarchy_levels", "config.levels.list", map[string]string{"env": "1"}},
		{"POST", "/api/v1/transactions/t1/nodes/n7/claim/", "graphs.transactions.claim", map[string]string{"uuid": "t1", "node": "n7"}},
		{"PUT", "/api/v1/config/components", "", nil},
		{"GET", "/api/v1/nothing", "", nil},
	}
	for _, tt := range tests {
		m, ok := routes.Find(httptest.NewRequest(tt.method, tt.target, nil))
		if ok != (tt.id != "") || m.ID != tt.id {
			t.Errorf("%s %s: %q %v, want %q", tt.method, tt.target, m.ID, ok, tt.id)
			continue
		}
		for k, v := range tt.values {
			if m.Values[k] != v {
				t.Errorf("%s %s: %s=%q, want %q", tt.method, tt.target, k, m.Values[k], v)
			}
		}
	}
}

// TestCheckQuery: declared parameters pass, unknown and repeated ones are
// invalid, and so are values not of their declared type and parameters newer
// than the request's microversion; the error names the parameter.
func TestCheckQuery(t *testing.T) {
	doc := "/api/v1/config/environments/1/nodes/7/resources/a/values"
	tests := []struct {
		method, target string
		version        httpapi.Version
		fault          string // "" when the query parses
	}{
		{"GET", doc + "?effective", httpapi.V1_0, ""},
		{"GET", doc + "?effective=TRUE&show_lookup=no", httpapi.V1_0, ""},
		{"GET", doc + "?effective=nonsense", httpapi.V1_0, `effective="nonsense": expected a boolean`},
		{"GET", doc + "?efective", httpapi.V1_0, `unknown query parameter "efective"`},
		{"GET", doc + "?key=a&key=b", httpapi.V1_0, ""}, // tuning-box reads the first
		{"GET", doc + "?version=2", httpapi.V1_0, ""},
		{"GET", doc + "?version=0", httpapi.V1_0, `version="0": expected a positive integer`},
		{"GET", doc + "?version=x", httpapi.V1_0, `version="x": expected a positive integer`},
		{"GET", doc + "?effective&wait=2.5", httpapi.V1_3, ""},
		{"GET", doc + "?effective&wait=soon", httpapi.V1_3, `wait="soon": expected a number of seconds`},
		{"GET", doc + "?effective&wait=NaN", httpapi.V1_3, `wait="NaN"`},
		{"GET", doc + "?as_of=2026-01-01T00:00:00Z", httpapi.V1_3, ""},
		{"GET", doc + "?as_of=yesterday", httpapi.V1_3, `as_of="yesterday": expected an RFC 3339 time`},
		{"GET", doc + "?effective&explain", httpapi.V1_2, "the explain parameter needs API microversion 1.3"},
		{"GET", "/api/v1/nodes?limit=1&limit=2", httpapi.V1_0, "more than once"},
		{"PUT", doc + "?dry_run=true", httpapi.V1_3, ""},
		{"PUT", doc + "?dry_run=true", httpapi.V1_0, "the dry_run parameter needs API microversion 1.3"},
		{"PUT", doc + "?as_of=2026-01-01T00:00:00Z", httpapi.V1_3, `unknown query parameter "as_of"`},
		{"GET", "/api/v1/config/components?x=1", httpapi.V1_0, "takes none"},
		{"GET", "/api/v1/nodes?hostname=a&limit=2", httpapi.V1_0, ""},
		{"GET", "/api/v1/graphs?fetch_related=nonsense", httpapi.V1_0, `fetch_related="nonsense": expected a boolean`},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.target, nil)
		r = r.WithContext(httpapi.WithVersion(r.Context(), tt.version))
		m, ok := routes.Find(r)
		if !ok {
			t.Fatalf("%s %s: no route", tt.method, tt.target)
		}
		err := m.CheckQuery(r)
		if tt.fault == "" && err != nil || tt.fault != "" && (err == nil || !strings.Contains(err.Error(), tt.fault)) {
			t.Errorf("%s %s at %s: %v, want %q", tt.method, tt.target, tt.version, err, tt.fault)
		}
	}
	r := httptest.NewRequest("GET", doc+"?effective=0&version=3&show_lookup", nil)
	q := routes.QueryOf(r)
	if n, ok := q.Integer("version"); q.Flag("effective") || !q.Flag("show_lookup") || n != 3 || !ok || q.Flag("explain") {
		t.Errorf("QueryOf: effective %v, show_lookup %v, version %d %v", q.Flag("effective"), q.Flag("show_lookup"), n, ok)
	}
}

// TestRouter: a mounted route is served with its path values, the match
// recorded on the request (WithMatch) or found on the spot; a route not
// mounted is 404, a method the path does not take 405 with Allow, and an
// unclean path is redirected to the clean one, as http.ServeMux would.
func TestRouter(t *testing.T) {
	router := routes.NewRouter(1 << 20)
	router.Mount(routes.Handlers{"config.environments.get": func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "environment "+r.PathValue("env"))
	}})
	if got := router.Patterns(); len(got) != 1 || got[0] != "GET /api/v1/config/environments/{env}" {
		t.Fatalf("patterns %v", got)
	}
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		router.ServeHTTP(w, r)
		return w
	}
	// Found on the spot, recorded by the policy's WithMatch or the router's,
	// and from the matches the router keeps: each path with its own values.
	for _, env := range []string{"e%2F1", "e2", "e%2F1", "e2"} {
		target := "/api/v1/config/environments/" + env
		want, _ := url.PathUnescape(env)
		for _, r := range []*http.Request{
			httptest.NewRequest("GET", target, nil),
			routes.WithMatch(httptest.NewRequest("GET", target, nil)),
			router.WithMatch(httptest.NewRequest("GET", target, nil)),
		} {
			if w := serve(r); w.Code != http.StatusOK || w.Body.String() != "environment "+want {
				t.Errorf("GET %s: %d %q", target, w.Code, w.Body)
			}
		}
	}
	tests := []struct {
		method, target string
		status         int
		header, value  string
	}{
		{"GET", "/api/v1/config/components", http.StatusNotFound, "Content-Type", "application/json"},
		{"GET", "/api/v1/nothing", http.StatusNotFound, "Content-Type", "application/json"},
		{"POST", "/api/v1/config/environments/1", http.StatusMethodNotAllowed, "Allow", "DELETE, GET, HEAD, PATCH, PUT"},
		{"GET", "/api/v1/config//environments/1?a=1", http.StatusTemporaryRedirect, "Location", "/api/v1/config/environments/1?a=1"},
		{"GET", "/api/v1/config//environments/1?a=2", http.StatusTemporaryRedirect, "Location", "/api/v1/config/environments/1?a=2"},
	}
	for _, tt := range tests {
		w := serve(httptest.NewRequest(tt.method, tt.target, nil))
		if w.Code != tt.status || w.Header().Get(tt.header) != tt.value {
			t.Errorf("%s %s: %d, %s %q; want %d, %q", tt.method, tt.target, w.Code, tt.header, w.Header().Get(tt.header), tt.status, tt.value)
		}
	}
}

// The API Gateway paths of the prefixes reach every route of the table, and
// each reaches at least one: no route of the API serves nothing.
func TestGatewayPathsReachEveryRouteAndNothingElse(t *testing.T) {
	reaches := func(gatewayPath, path string) bool {
		if prefix, ok := strings.CutSuffix(gatewayPath, "/{proxy+}"); ok {
			return strings.HasPrefix(path, prefix+"/")
		}
		return path == gatewayPath
	}
	var paths []string
	for _, g := range routes.Groups() {
		for _, p := range routes.Prefixes(g) {
			paths = append(paths, routes.GatewayPaths(p)...)
		}
		paths = append(paths, routes.PublicPaths(g)...)
	}
	used := map[string]bool{}
	for _, r := range routes.Table {
		reached := false
		for _, p := range paths {
			if reaches(p, r.Path) && (r.Access != routes.Public || r.Method == "GET") {
				reached, used[p] = true, true
			}
		}
		if !reached {
			t.Errorf("no gateway path reaches %s %s", r.Method, r.Path)
		}
	}
	for _, p := range paths {
		if !used[p] {
			t.Errorf("gateway path %s reaches no route", p)
		}
	}
}

// TestLevelRoutes: the document routes share one ServeMux pattern per method;
// the router's kept matches tell a read from an effective read of the same
// path by the query, and a method the document path does not take is 405
// with the methods it does.
func TestLevelRoutes(t *testing.T) {
	router := routes.NewRouter(1 << 20)
	answer := func(id string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			m, _ := routes.MatchOf(r)
			_, _ = io.WriteString(w, id+" "+m.Values["resource"])
		}
	}
	router.Mount(routes.Handlers{
		"config.values.get": answer("values"), "config.documents.effective": answer("effective"),
		"config.values.put": answer("put"), "config.keys.set": answer("set"),
	})
	doc := "/api/v1/config/environments/1/nodes/n1/resources/override/plugins/values"
	tests := []struct {
		method, target string
		status         int
		body, allow    string
	}{
		{"GET", doc, http.StatusOK, "values override/plugins", ""},
		{"GET", doc + "?effective", http.StatusOK, "effective override/plugins", ""},
		{"GET", doc + "?effective=no", http.StatusOK, "values override/plugins", ""},
		{"GET", doc + "?effective=%74rue", http.StatusOK, "effective override/plugins", ""},
		// ?effective is read as the query parser reads it: an escaped name, and a pair it skips skipped.
		{"GET", doc + "?%65ffective", http.StatusOK, "effective override/plugins", ""},
		{"GET", doc + "?effective=1;x&effective", http.StatusOK, "effective override/plugins", ""},
		{"GET", doc, http.StatusOK, "values override/plugins", ""},
		{"PUT", doc, http.StatusOK, "put override/plugins", ""},
		{"PATCH", doc + "/keys/set", http.StatusOK, "set override/plugins", ""},
		{"PATCH", doc, http.StatusMethodNotAllowed, "", "GET, HEAD, PUT"},
		{"POST", doc + "/keys/set", http.StatusMethodNotAllowed, "", "PATCH"},
		{"GET", "/api/v1/config/environments/1/nodes/n1/resources/r/nothing", http.StatusNotFound, "", ""},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		router.ServeHTTP(w, router.WithMatch(httptest.NewRequest(tt.method, tt.target, nil)))
		if w.Code != tt.status || tt.body != "" && w.Body.String() != tt.body || w.Header().Get("Allow") != tt.allow {
			t.Errorf("%s %s: %d %q (Allow %q), want %d %q (Allow %q)", tt.method, tt.target, w.Code, w.Body, w.Header().Get("Allow"), tt.status, tt.body, tt.allow)
		}
	}
}

// TestDocumentOperations: each ConfigDB document operation is in the
// document at its global path with the level path explained, its bodies
// typed (a document itself stays any JSON, and says so), and the effective
// read requires ?effective, what takes a request to it.
func TestDocumentOperations(t *testing.T) {
	doc, err := routestest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range routes.Table {
		if !r.Levels {
			continue
		}
		n++
		op := doc.Paths.Find(routes.OpenAPIPath(r.Path)).GetOperation(r.Method)
		if op == nil || op.OperationID != r.ID || op.Extensions[routes.LevelPathExtension] != true ||
			!strings.Contains(op.Description, "nodes/{node}/resources/{resource}/values") {
			t.Errorf("%s: not documented with its level path: %+v", r.ID, op)
			continue
		}
		for status, resp := range op.Responses.Map() {
			content := resp.Value.Content.Get("application/json")
			if status == "default" || content == nil {
				continue
			}
			if name := strings.TrimPrefix(content.Schema.Ref, "#/components/schemas/"); name == "Any" || name == "Object" || name == "Array" {
				t.Errorf("%s %s answers an untyped %s", r.ID, status, name)
			}
		}
		if r.When != "" && (op.Parameters.GetByInAndName("query", r.When) == nil || !op.Parameters.GetByInAndName("query", r.When).Required) {
			t.Errorf("%s: ?%s is not required", r.ID, r.When)
		}
	}
	if n != 10 {
		t.Errorf("%d document operations in the table, want 10 (values and overrides read and write, versions, a key's history, keys/set, keys/delete, effective, the watchers' read)", n)
	}
	if d := doc.Components.Schemas["Document"].Value; d.Type != nil || !strings.Contains(d.Description, "Any JSON") {
		t.Errorf("a document is not any JSON: %+v", d)
	}
	for _, name := range []string{"Preview", "DocumentVersions", "Explanation", "Lookup", "KeyOps", "KeyHistory"} {
		if s := doc.Components.Schemas[name]; s == nil || s.Value.Type == nil {
			t.Errorf("schema %s is not typed", name)
		}
	}
}

// untypedBodies are the operations whose body may be any JSON at all: a
// ConfigDB document is what its writer stored, and a keys/set batch carries
// the values its writer gives (a resource definition's PATCH takes one).
var untypedBodies = map[string]bool{
	"config.values.get answer":          true,
	"config.overrides.get answer":       true,
	"config.documents.effective answer": true,
	"config.documents.watch answer":     true,
	"config.values.put request":         true,
	"config.overrides.put request":      true,
	"config.keys.set request":           true,
	"config.keys.delete request":        true,
	"config.definitions.patch request":  true,
}

// TestEveryOperationIsTyped: every answer and request body has a schema that
// says its shape (generated from shared/wire), not a bare object, list or
// any value, but for the ConfigDB documents'.
func TestEveryOperationIsTyped(t *testing.T) {
	doc, err := routestest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	operations, typedAnswers := 0, 0
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			operations++
			answerTyped := true
			for status, resp := range op.Responses.Map() {
				if !strings.HasPrefix(status, "2") {
					continue
				}
				for mediaType, content := range resp.Value.Content {
					if !typed(content.Schema) {
						answerTyped = false
						if !untypedBodies[op.OperationID+" answer"] {
							t.Errorf("%s %s: the %s answer (%s) is untyped", method, path, status, mediaType)
						}
					}
				}
			}
			if answerTyped {
				typedAnswers++
			}
			if op.RequestBody == nil {
				continue
			}
			for mediaType, content := range op.RequestBody.Value.Content {
				if !typed(content.Schema) && !untypedBodies[op.OperationID+" request"] {
					t.Errorf("%s %s: the %s request body is untyped", method, path, mediaType)
				}
			}
		}
	}
	t.Logf("%d of %d operations have a typed answer (or none: 204)", typedAnswers, operations)
	if want := operations - 4; typedAnswers != want {
		t.Errorf("%d operations with a typed answer, want every one but the four reads of a document (%d)", typedAnswers, want)
	}
}

// typed reports whether s says a body's shape: a scalar type, an object
// with properties or typed values, a list of typed items, or a choice of typed forms.
func typed(ref *openapi3.SchemaRef) bool {
	s := ref.Value
	switch {
	case len(s.AnyOf) > 0:
		return !slices.ContainsFunc(s.AnyOf, func(r *openapi3.SchemaRef) bool { return !typed(r) })
	case s.Type == nil || s.Type.IsEmpty():
		return false
	case s.Type.Includes("object"):
		return len(s.Properties) > 0 || s.AdditionalProperties.Schema != nil && typed(s.AdditionalProperties.Schema)
	case s.Type.Includes("array"):
		return s.Items != nil && typed(s.Items)
	}
	return true
}
