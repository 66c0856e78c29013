package authapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
)

// TestRoleMatrix checks every role against reads and writes over HTTP, through
// the full application handler: admin, observer and node by password, the
// observer again by API token, and anonymous.
func TestRoleMatrix(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "watcher", "password": "watch-password", "role": "observer"}, http.StatusCreated)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "node-7", "password": "node-password", "role": "node", "node": "7"}, http.StatusCreated)
	var created struct {
		Secret string `json:"secret"`
	}
	a := s.must(t, admin, "POST", "/api/v1/tokens", map[string]any{"user": "watcher", "description": "dashboards"}, http.StatusCreated)
	if err := json.Unmarshal([]byte(a.body), &created); err != nil || created.Secret == "" {
		t.Fatalf("token answer %s: %v", a.body, err)
	}

	const (
		ownDoc   = "/api/v1/config/environments/1/nodes/7/resources/astute/values"
		otherDoc = "/api/v1/config/environments/1/nodes/8/resources/astute/values"
	)
	type request struct {
		name, method, target string
		body                 any
	}
	requests := []request{
		{"read own node, effective", "GET", ownDoc + "?effective", nil},
		{"read other node", "GET", otherDoc + "?effective", nil},
		{"read environment", "GET", "/api/v1/config/environments/1", nil},
		{"compute-only POST", "POST", "/api/v1/config/overrides/apply", map[string]any{}},
		{"write own node", "PUT", ownDoc, map[string]any{"debug": false}},
		{"write component", "POST", "/api/v1/config/components", map[string]any{"name": "extra"}},
		{"list users", "GET", "/api/v1/users", nil},
		{"read audit", "GET", "/api/v1/audit?environment=1", nil},
		{"compute-only diff", "POST", "/api/v1/config/diff", map[string]any{}},
		// The policy answers before the body's nesting is checked (400 to the admin only).
		{"write component, nested too deep", "POST", "/api/v1/config/components", strings.Repeat("[", 1000) + strings.Repeat("]", 1000)},
	}
	// Expected classes: "ok" = neither 401 nor 403 (the route's own answer), or the exact status.
	const ok = 0
	principals := []struct {
		name string
		cred credential
		want []int
	}{
		{"admin", admin, []int{ok, ok, ok, ok, ok, ok, ok, ok, ok, 400}},
		{"observer", basicAuth("watcher", "watch-password"), []int{ok, ok, ok, ok, 403, 403, 403, ok, ok, 403}},
		{"observer token", bearer(created.Secret), []int{ok, ok, ok, ok, 403, 403, 403, ok, ok, 403}},
		{"node", basicAuth("node-7", "node-password"), []int{ok, 403, 403, 403, 403, 403, 403, 403, 403, 403}},
		{"anonymous", nil, []int{401, 401, 401, 401, 401, 401, 401, 401, 401, 401}},
	}
	for _, p := range principals {
		for i, req := range requests {
			t.Run(fmt.Sprintf("%s/%s", p.name, req.name), func(t *testing.T) {
				a := s.do(t, p.cred, req.method, req.target, req.body)
				want := p.want[i]
				if want == ok {
					if a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
						t.Fatalf("%s %s: %d %s, want the route's own answer", req.method, req.target, a.status, a.body)
					}
					return
				}
				if a.status != want {
					t.Fatalf("%s %s: %d %s, want %d", req.method, req.target, a.status, a.body, want)
				}
				if want == http.StatusUnauthorized && a.header.Get("WWW-Authenticate") == "" {
					t.Fatal("401 without WWW-Authenticate")
				}
			})
		}
	}
	// The node read its own data (as the admin's write left it), not just any 2xx.
	a = s.must(t, basicAuth("node-7", "node-password"), "GET", ownDoc+"?effective", nil, http.StatusOK)
	if !strings.Contains(a.body, `"debug":false`) || !strings.Contains(a.body, `"region":"RegionOne"`) {
		t.Fatalf("node 7's effective document: %s", a.body)
	}
}

// TestAuditOfWrites shows that every successful write, and only those, leaves
// an audit record with the principal and the version, listed per environment.
func TestAuditOfWrites(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "ops", "password": "ops-password", "role": "admin"}, http.StatusCreated)
	ops := basicAuth("ops", "ops-password")
	s.must(t, ops, "PATCH", "/api/v1/config/environments/1/nodes/7/resources/astute/values/keys/set", [][]any{{"ntp", "pool.example.com"}}, http.StatusNoContent)
	s.must(t, ops, "PUT", "/api/v1/config/environments/1/nodes/7/resources/astute/values", "[1]", http.StatusBadRequest) // failed: not audited
	s.must(t, ops, "GET", "/api/v1/config/environments/1/nodes/7/resources/astute/values", nil, http.StatusOK)           // read: not audited

	var page struct {
		Records []audit.Record `json:"records"`
	}
	a := s.must(t, basicAuth(adminUser, adminPassword), "GET", "/api/v1/audit?environment=1", nil, http.StatusOK)
	if err := json.Unmarshal([]byte(a.body), &page); err != nil {
		t.Fatal(err)
	}
	t.Logf("newest audit record of environment 1: %s", mustJSON(t, page.Records[0]))
	// environment create, 2 node registrations in it (no environment in
	// their path), 3 PUTs by admin, 1 keys/set by ops, newest first.
	if len(page.Records) != 7 {
		t.Fatalf("environment 1 has %d records: %s", len(page.Records), a.body)
	}
	for _, registration := range page.Records[4:6] {
		if registration.Method != "POST" || registration.Path != "/api/v1/nodes" || registration.Status != http.StatusCreated {
			t.Fatalf("record %+v, want a node registration", registration)
		}
	}
	newest := page.Records[0]
	if newest.Principal != "ops" || newest.Role != "admin" || newest.Method != "PATCH" || newest.Status != http.StatusNoContent ||
		newest.Version != 2 || newest.Environment != "1" || newest.Time.IsZero() {
		t.Fatalf("newest record: %+v", newest)
	}
	if create := page.Records[6]; create.Method != "POST" || create.Path != "/api/v1/config/environments" || create.Environment != "1" {
		t.Fatalf("the environment's creation is filed under it (the ConfigDB notes the id it created): %+v", create)
	}
	// The whole log also has the component and the users; passwords never appear.
	a = s.must(t, admin, "GET", "/api/v1/audit?limit=2", nil, http.StatusOK)
	if err := json.Unmarshal([]byte(a.body), &page); err != nil || len(page.Records) != 2 || !strings.Contains(a.body, `"next":`) {
		t.Fatalf("first page of everything: %s", a.body)
	}
	all := s.must(t, admin, "GET", "/api/v1/audit?limit=1000", nil, http.StatusOK)
	if strings.Contains(all.body, "ops-password") || !strings.Contains(all.body, `"path":"/api/v1/users"`) {
		t.Fatalf("audit log: %s", all.body)
	}
	s.must(t, admin, "GET", "/api/v1/audit?limit=x", nil, http.StatusBadRequest)
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
