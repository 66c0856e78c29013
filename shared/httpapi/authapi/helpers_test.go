package authapi_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/store"
)

const (
	adminUser     = "admin"
	adminPassword = "admin-secret"
)

// stack is the full application handler over a fresh embedded store, with a
// bootstrap admin, as `tuningbox serve` builds it.
type stack struct {
	handler http.Handler
	backend store.Backend
	cfg     app.Config
	logs    *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func newStack(t *testing.T) *stack {
	t.Helper()
	logs := &syncBuffer{}
	st := apptest.New(t, adminUser, adminPassword, slog.New(slog.NewJSONHandler(logs, nil)))
	return &stack{handler: st.Handler, backend: st.Backend, cfg: st.Config, logs: logs}
}

// credential sets a request's Authorization header; nil sends none.
type credential func(r *http.Request)

func basicAuth(user, password string) credential {
	return func(r *http.Request) { r.SetBasicAuth(user, password) }
}

func bearer(token string) credential {
	return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
}

var admin = basicAuth(adminUser, adminPassword)

type answer struct {
	status int
	header http.Header
	body   string
}

func (s *stack) do(t *testing.T, cred credential, method, target string, body any) answer {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	r := httptest.NewRequest(method, target, rd)
	r.RemoteAddr = "192.0.2.10:4242"
	if rd != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	if cred != nil {
		cred(r)
	}
	w := httptest.NewRecorder()
	s.handler.ServeHTTP(w, r)
	return answer{status: w.Code, header: w.Header(), body: w.Body.String()}
}

// must sends a request that has to answer want.
func (s *stack) must(t *testing.T, cred credential, method, target string, body any, want int) answer {
	t.Helper()
	a := s.do(t, cred, method, target, body)
	if a.status != want {
		t.Fatalf("%s %s: %d %s, want %d", method, target, a.status, a.body, want)
	}
	return a
}

// seedConfig creates a component with the astute resource and environment 1
// with a "nodes" level, registers nodes 7 and 8 there, and stores values for them.
func (s *stack) seedConfig(t *testing.T) {
	t.Helper()
	const api = "/api/v1/config"
	s.must(t, admin, "POST", api+"/components", map[string]any{"name": "fuel", "resource_definitions": []any{map[string]any{"name": "astute"}}}, http.StatusCreated)
	s.must(t, admin, "POST", api+"/environments", map[string]any{"id": 1, "components": []string{"fuel"}, "hierarchy_levels": []string{"nodes"}}, http.StatusCreated)
	for _, id := range []int{7, 8} {
		s.must(t, admin, "POST", "/api/v1/nodes", map[string]any{"id": id, "fqdn": fmt.Sprintf("node-%d.example.com", id), "environment_id": 1}, http.StatusCreated)
	}
	s.must(t, admin, "PUT", api+"/environments/1/resources/astute/values", map[string]any{"region": "RegionOne"}, http.StatusNoContent)
	s.must(t, admin, "PUT", api+"/environments/1/nodes/7/resources/astute/values", map[string]any{"debug": true}, http.StatusNoContent)
	s.must(t, admin, "PUT", api+"/environments/1/nodes/8/resources/astute/values", map[string]any{"debug": false}, http.StatusNoContent)
}
