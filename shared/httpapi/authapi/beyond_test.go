package authapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// at13 adds the microversion 1.3 header to cred.
func at13(cred credential) credential {
	return func(r *http.Request) {
		cred(r)
		r.Header.Set("OpenStack-API-Version", "config 1.3")
	}
}

// TestDryRunsAndExplainInThePolicy: a dry run stores nothing, so it leaves no
// audit record; a node reads its own effective document at 1.3 but not explain,
// which names the principals that wrote each layer (the audit log is not a node's to read).
func TestDryRunsAndExplainInThePolicy(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "node-7", "password": "node-password", "role": "node", "node": "7"}, http.StatusCreated)
	var env struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(s.must(t, admin, "GET", "/api/v1/config/environments/1", nil, http.StatusOK).body), &env); err != nil {
		t.Fatal(err)
	}
	doc := "/api/v1/config/environments/" + env.UUID + "/nodes/7/resources/astute/values"
	records := func() int {
		var page struct {
			Records []json.RawMessage `json:"records"`
		}
		if err := json.Unmarshal([]byte(s.must(t, admin, "GET", "/api/v1/audit?environment=1", nil, http.StatusOK).body), &page); err != nil {
			t.Fatal(err)
		}
		return len(page.Records)
	}
	before := records()
	s.must(t, at13(admin), "PUT", doc+"?dry_run=true", map[string]any{"debug": false}, http.StatusOK)
	s.must(t, at13(admin), "PATCH", doc+"/keys/set?dry_run=1", [][]any{{"debug", false}}, http.StatusOK)
	if after := records(); after != before {
		t.Errorf("dry runs left %d audit records", after-before)
	}
	s.must(t, at13(admin), "PUT", doc+"?dry_run=false", map[string]any{"debug": false}, http.StatusNoContent)
	if after := records(); after != before+1 {
		t.Errorf("a write with dry_run=false left %d audit records, want 1", after-before)
	}

	node := at13(basicAuth("node-7", "node-password"))
	s.must(t, node, "GET", doc+"?effective&merge=deep", nil, http.StatusOK)
	s.must(t, node, "GET", doc+"?effective&explain", nil, http.StatusForbidden)
	s.must(t, at13(basicAuth(adminUser, adminPassword)), "GET", doc+"?effective&explain", nil, http.StatusOK)
}

// From 1.2 on a node user's node is named by UUID or FQDN, not by its integer id (spec 004).
func TestNodeUserNodeAtV12(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	v12 := credential(func(r *http.Request) { admin(r); r.Header.Set("OpenStack-API-Version", "config 1.2") })
	a := s.must(t, v12, "POST", "/api/v1/users", map[string]any{"name": "n7", "password": "node-password", "role": "node", "node": "7"}, http.StatusBadRequest)
	if !strings.Contains(a.body, "node: Invalid uuid 7") {
		t.Errorf("integer node at 1.2: %s", a.body)
	}
	s.must(t, v12, "POST", "/api/v1/users", map[string]any{"name": "n7", "password": "node-password", "role": "node", "node": "node-7.example.com"}, http.StatusCreated)
}
