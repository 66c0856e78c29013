package app_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/logjson"
)

// BenchmarkEffectiveRead is what the whole handler costs on Hiera's hot path,
// net/http's connection work aside: a cached effective read of a node's
// document (global, role and node levels) with Basic credentials and gzip, as
// Puppet asks, through authentication, the policy, routing, the ConfigDB, the
// compressed answer and the request log (JSON, discarded).
func BenchmarkEffectiveRead(b *testing.B) {
	const admin, password = "bench", "bench-secret"
	stack := apptest.New(b, admin, password, slog.New(logjson.New(io.Discard, nil)))
	call := func(method, path, body string) {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		r.SetBasicAuth(admin, password)
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		stack.Handler.ServeHTTP(w, r)
		if w.Code >= 300 {
			b.Fatalf("%s %s: %d %s", method, path, w.Code, w.Body)
		}
	}
	document := func(prefix string, keys int) string {
		parts := make([]string, keys)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"%s_%d":{"enabled":true,"port":%d,"hosts":["10.0.0.1","10.0.0.2"],"description":"%s"}`, prefix, i, 1000+i, strings.Repeat("x", 60))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	const config = "/api/v1/config"
	call("POST", config+"/components", `{"name":"bench","resource_definitions":[{"name":"astute"}]}`)
	call("POST", config+"/environments", `{"id":1,"components":["bench"],"hierarchy_levels":["role","nodes"]}`)
	call("POST", "/api/v1/nodes", `{"fqdn":"node-1","environment_id":1,"levels":{"role":"controller"}}`)
	call("PUT", config+"/environments/1/resources/astute/values", document("g", 200))
	call("PUT", config+"/environments/1/role/controller/resources/astute/values", document("r", 50))
	call("PUT", config+"/environments/1/role/controller/nodes/node-1/resources/astute/values", document("n", 20))

	r := httptest.NewRequest("GET", config+"/environments/1/role/controller/nodes/node-1/resources/astute/values?effective", nil)
	r.SetBasicAuth(admin, password)
	r.Header.Set("Accept-Encoding", "gzip")
	w := &discardWriter{header: http.Header{}}
	b.ReportAllocs()
	for b.Loop() {
		clear(w.header)
		w.status = 0
		stack.Unchecked.ServeHTTP(w, r)
		if w.status != http.StatusOK || w.header.Get("Content-Encoding") != "gzip" {
			b.Fatalf("answer %d, %v", w.status, w.header)
		}
	}
}

// discardWriter keeps an answer's status and headers, not its body.
type discardWriter struct {
	header http.Header
	status int
}

func (w *discardWriter) Header() http.Header { return w.header }
func (w *discardWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}
func (w *discardWriter) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return len(b), nil
}
