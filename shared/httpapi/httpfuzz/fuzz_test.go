package httpfuzz

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
)

const (
	adminUser, adminPassword = "admin", "admin-secret"
	nodeUser, nodePassword   = "node-7", "node-secret"
	envPrefix                = "/api/v1/config/environments/"
)

// foreignMarker is in node 8's documents only. Node 7 legitimately reads the
// global and role documents merged into its own effective document, but
// nothing of node 8 may ever reach it.
const foreignMarker = "SCOPE-NODE8"

// newAPI builds the full handler over a fresh embedded store and seeds
// environment 1 (levels role, nodes) with one marked document per level path.
func newAPI(f *testing.F) http.Handler {
	h := apptest.New(f, adminUser, adminPassword, slog.New(slog.DiscardHandler)).Handler
	seed := []struct {
		method, path, body string
	}{
		{"POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`},
		{"POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role","nodes"]}`},
		{"POST", "/api/v1/nodes", `{"id":7,"fqdn":"node-7.example.com","environment_id":1,"levels":{"role":"compute"}}`},
		{"POST", "/api/v1/nodes", `{"id":8,"fqdn":"node-8.example.com","environment_id":1,"levels":{"role":"compute"}}`},
		{"POST", "/api/v1/nodes", `{"id":9,"fqdn":"node-9.example.com","environment_id":1,"levels":{"role":"compute"}}`},
		{"PUT", envPrefix + "1/resources/astute/values", `{"scope":"SCOPE-GLOBAL","global_only":{"a":[1,{"b":2}]}}`},
		{"PUT", envPrefix + "1/role/compute/resources/astute/values", `{"scope":"SCOPE-ROLE"}`},
		{"PUT", envPrefix + "1/role/compute/nodes/7/resources/astute/values", `{"scope":"SCOPE-NODE7","list":[0,1,2]}`},
		{"PUT", envPrefix + "1/role/compute/nodes/8/resources/astute/values", `{"scope":"SCOPE-NODE8"}`},
		{"PUT", envPrefix + "1/role/nodes/nodes/8/resources/astute/overrides", `{"n8":"SCOPE-NODE8"}`},
		{"PUT", envPrefix + "1/role/compute/nodes/7/resources/astute/overrides", `{"o":"SCOPE-NODE7"}`},
		{"PUT", envPrefix + "1/role/compute/nodes/9/resources/astute/values", `{"a":{"b":[1,{"c":true}]},"x":"y"}`},
		{"POST", "/api/v1/users", `{"name":"` + nodeUser + `","password":"` + nodePassword + `","role":"node","node":"7"}`},
	}
	for _, s := range seed {
		r := httptest.NewRequest(s.method, s.path, strings.NewReader(s.body))
		r.SetBasicAuth(adminUser, adminPassword)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code/100 != 2 {
			f.Fatalf("seed %s %s: %d %s", s.method, s.path, w.Code, w.Body)
		}
	}
	return h
}

// call sends one request as user, its exchange checked against the OpenAPI
// document for t; a target that is not a valid URL is skipped.
func call(t *testing.T, h http.Handler, method, target, user, password string, body []byte) (*httptest.ResponseRecorder, bool) {
	r, err := http.NewRequestWithContext(routestest.ReportTo(context.Background(), t), method, "http://tuningbox.test"+target, bytes.NewReader(body))
	if err != nil {
		return nil, false
	}
	r.SetBasicAuth(user, password)
	r.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, true
}

// FuzzLevelPaths reads any path under /api/v1/config/environments/ (the
// level-path router) as the admin and as node 7: never a 5xx, and node 7
// never sees node 8's documents — which holds only while the auth policy
// reads level paths exactly as the router does.
// Seeds: testdata/fuzz/FuzzLevelPaths.
func FuzzLevelPaths(f *testing.F) {
	h := newAPI(f)
	f.Fuzz(func(t *testing.T, rest string) {
		target := envPrefix + rest
		for _, u := range []struct{ user, password string }{{adminUser, adminPassword}, {nodeUser, nodePassword}} {
			w, ok := call(t, h, http.MethodGet, target, u.user, u.password, nil)
			if !ok {
				return
			}
			if w.Code >= 500 {
				t.Fatalf("GET %s as %s: %d %s", target, u.user, w.Code, w.Body)
			}
			if u.user == nodeUser && w.Code == http.StatusOK && strings.Contains(w.Body.String(), foreignMarker) {
				t.Fatalf("node 7 read node 8's data through GET %s: %s", target, w.Body)
			}
		}
	})
}

// FuzzKeyPaths drives the key-path parser both ways: ?key= dot paths on the
// effective read, and keys/set or keys/delete batches. Never a 5xx; every
// answer of a read is JSON, and a document stays readable after any accepted edit.
// Seeds: testdata/fuzz/FuzzKeyPaths.
func FuzzKeyPaths(f *testing.F) {
	h := newAPI(f)
	const doc = envPrefix + "1/role/compute/nodes/9/resources/astute/values"
	const effective = envPrefix + "1/role/compute/nodes/7/resources/astute/values?effective&key="
	f.Fuzz(func(t *testing.T, key string, ops []byte, set bool) {
		w, _ := call(t, h, http.MethodGet, effective+url.QueryEscape(key), adminUser, adminPassword, nil)
		if w.Code >= 500 || !json.Valid(w.Body.Bytes()) {
			t.Fatalf("GET key %q: %d %s", key, w.Code, w.Body)
		}
		op := "delete"
		if set {
			op = "set"
		}
		w, _ = call(t, h, http.MethodPatch, doc+"/keys/"+op, adminUser, adminPassword, ops)
		if w.Code >= 500 {
			t.Fatalf("PATCH keys/%s %q: %d %s", op, ops, w.Code, w.Body)
		}
		if w.Code/100 == 2 {
			r, _ := call(t, h, http.MethodGet, doc, adminUser, adminPassword, nil)
			body, _ := io.ReadAll(r.Body)
			if r.Code != http.StatusOK || !json.Valid(body) {
				t.Fatalf("after keys/%s %q: GET %d %s", op, ops, r.Code, body)
			}
		}
	})
}
