package authapi_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// TestSessions: a console session reads what its user may and nothing more
// (a node user's session its own node only), opens no other session, and
// ends on DELETE; a password or API token login cannot be "ended" that way.
func TestSessions(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "n7", "password": "node-7-password", "role": "node", "node": "node-7.example.com"}, http.StatusCreated)

	a := s.must(t, basicAuth("n7", "node-7-password"), "POST", "/api/v1/sessions", nil, http.StatusCreated)
	var session wire.Session
	if err := json.Unmarshal([]byte(a.body), &session); err != nil {
		t.Fatal(err)
	}
	if session.User != "n7" || session.Role != "node" || !slices.Contains(session.NodeNames, "7") || !slices.Contains(session.NodeNames, "node-7.example.com") {
		t.Errorf("session %s", a.body)
	}
	if left := time.Until(session.ExpiresAt); left <= authapi.SessionTTL-time.Minute || left > authapi.SessionTTL {
		t.Errorf("the session expires in %v, want %v", left, authapi.SessionTTL)
	}
	if a.header.Get("Cache-Control") != "no-store" {
		t.Errorf("Cache-Control %q", a.header.Get("Cache-Control"))
	}
	n7 := bearer(session.Token)
	s.must(t, n7, "GET", "/api/v1/config/environments/1/nodes/7/resources/astute/values?effective", nil, http.StatusOK)
	s.must(t, n7, "GET", "/api/v1/nodes/7", nil, http.StatusOK)
	for _, foreign := range []string{
		"/api/v1/config/environments/1/nodes/8/resources/astute/values?effective",
		"/api/v1/nodes/8",
		"/api/v1/nodes",
		"/api/v1/clusters/1",
		"/api/v1/audit",
	} {
		s.must(t, n7, "GET", foreign, nil, http.StatusForbidden)
	}
	s.must(t, n7, "POST", "/api/v1/sessions", nil, http.StatusBadRequest)

	// An observer's session reads everything an observer may, and writes nothing.
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "watcher", "password": "watcher-password", "role": "observer"}, http.StatusCreated)
	if err := json.Unmarshal([]byte(s.must(t, basicAuth("watcher", "watcher-password"), "POST", "/api/v1/sessions", nil, http.StatusCreated).body), &session); err != nil {
		t.Fatal(err)
	}
	watcher := bearer(session.Token)
	s.must(t, watcher, "GET", "/api/v1/audit", nil, http.StatusOK)
	s.must(t, watcher, "PUT", "/api/v1/config/environments/1/resources/astute/values", map[string]any{"x": 1}, http.StatusForbidden)

	// Logout ends the session; a request without one has nothing to end.
	s.must(t, n7, "DELETE", "/api/v1/sessions", nil, http.StatusNoContent)
	s.must(t, n7, "GET", "/api/v1/nodes/7", nil, http.StatusUnauthorized)
	s.must(t, admin, "DELETE", "/api/v1/sessions", nil, http.StatusBadRequest)
	var created wire.CreatedToken
	if err := json.Unmarshal([]byte(s.must(t, admin, "POST", "/api/v1/tokens", map[string]any{"description": "ci"}, http.StatusCreated).body), &created); err != nil {
		t.Fatal(err)
	}
	s.must(t, bearer(created.Secret), "DELETE", "/api/v1/sessions", nil, http.StatusBadRequest)
	s.must(t, bearer(created.Secret), "POST", "/api/v1/sessions", nil, http.StatusCreated) // an API token logs in
}
