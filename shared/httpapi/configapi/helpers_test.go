package configapi_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/schema"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// api is a test client of the ConfigDB routes served by the real handler on an in-memory store.
type api struct {
	t   testing.TB
	url string
	svc *configdb.Service
}

func newAPI(t testing.TB, opts httpapi.Options) *api {
	t.Helper()
	b := mem.New()
	svc := configdb.NewService(b.Index, b.Blobs, configdb.WithSchemas(schema.Compile))
	router := routes.NewRouter(1 << 20)
	compressed := httpapi.NewCompressed(16 << 20)
	configapi.Register(router, svc, compressed)
	configapi.RegisterWatch(router, svc, compressed)
	srv := httptest.NewServer(routestest.Validating(t, httpapi.Wrap(router, opts)))
	t.Cleanup(srv.Close)
	return &api{t: t, url: srv.URL + configapi.Prefix, svc: svc}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) String() string { return string(r.body) }

// json decodes the body into v.
func (r response) json(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errorMessage returns the message of a JSON error body, failing when the body is not one.
func (r response) errorMessage(t testing.TB) string {
	t.Helper()
	var e httpapi.ErrorBody
	if err := json.Unmarshal(r.body, &e); err != nil || e.Error.Code != r.status {
		t.Fatalf("status %d with body %q: not a JSON error body", r.status, r.body)
	}
	return e.Error.Message
}

// do sends a request; body "" sends none. headers are name/value pairs.
func (a *api) do(method, path, body string, headers ...string) response {
	a.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, a.url+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: data}
}

// must sends a request and fails the test unless the status is want.
func (a *api) must(want int, method, path, body string, headers ...string) response {
	a.t.Helper()
	r := a.do(method, path, body, headers...)
	if r.status != want {
		a.t.Fatalf("%s %s: status %d, want %d; body %s", method, path, r.status, want, r.body)
	}
	return r
}

// get returns the body of a 200 GET.
func (a *api) get(path string, headers ...string) string {
	a.t.Helper()
	return string(a.must(http.StatusOK, "GET", path, "", headers...).body)
}

// put stores a document (204).
func (a *api) put(path, body string, headers ...string) response {
	a.t.Helper()
	return a.must(http.StatusNoContent, "PUT", path, body, headers...)
}

// expectJSON fails unless got and want are equal JSON values.
func expectJSON(t testing.TB, what, got, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		t.Fatalf("%s: not JSON: %s", what, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("%s: bad expectation %s", what, want)
	}
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if !bytes.Equal(gb, wb) {
		t.Fatalf("%s:\n got  %s\n want %s", what, got, want)
	}
}

// seed creates component "fuel" (astute, globals, override/plugins) and
// environment 1 with levels [role, nodes].
func (a *api) seed() {
	a.t.Helper()
	a.must(http.StatusCreated, "POST", "/components",
		`{"name":"fuel","resource_definitions":[{"name":"astute"},{"name":"globals"},{"name":"override/plugins"}]}`)
	a.must(http.StatusCreated, "POST", "/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role","nodes"]}`)
}
