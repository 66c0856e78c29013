package app_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// get13 GETs path at microversion 1.3 as the administrator and decodes the 200 answer into v.
func (c *client) get13(path string, v any) {
	c.t.Helper()
	status, body := c.send(c.api.At("1.3"), "GET", path, "")
	if status != http.StatusOK {
		c.t.Fatalf("GET %s = %d %s", path, status, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		c.t.Fatalf("GET %s: %v in %s", path, err, body)
	}
}

// TestExplainNamesWriters: explain names who wrote each layer's version, from
// the audit record of that version, however the write addressed the document.
func TestExplainNamesWriters(t *testing.T) {
	c := newClient(t)
	seedNodeLevels(c)
	c.do("POST", "/api/v1/users", `{"name":"ops","password":"ops-password-1","role":"admin"}`, 201, "")
	c.do("PUT", "/api/v1/config/environments/2/resources/astute/values", `{"a":1,"b":1}`, 204, "")
	c.do("PUT", "/api/v1/config/environments/2/resources/astute/values", `{"a":2,"b":1}`, 204, "")
	// A short node path by FQDN, written by another user.
	ops := login(t, c.url, "ops", "ops-password-1")
	if status, body := c.send(ops, "PUT", "/api/v1/config/environments/2/nodes/NODE-8.domain.tld/resources/astute/overrides", `{"b":3}`); status != http.StatusNoContent {
		t.Fatalf("PUT as ops: %d %s", status, body)
	}

	var env struct{ UUID string }
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/config/environments/2", "", 200, "")), &env); err != nil {
		t.Fatal(err)
	}
	type layer struct {
		Level     string `json:"level"`
		Version   int    `json:"version"`
		WrittenBy *struct {
			Principal string `json:"principal"`
		} `json:"written_by"`
	}
	var ex struct {
		Keys map[string]struct {
			From    layer   `json:"from"`
			Shadows []layer `json:"shadows"`
		} `json:"keys"`
	}
	c.get13("/api/v1/config/environments/"+env.UUID+"/role/compute/nodes/8/resources/astute/values?effective&explain", &ex)
	a, b := ex.Keys["a"], ex.Keys["b"]
	if a.From.Version != 2 || a.From.WrittenBy == nil || a.From.WrittenBy.Principal != "admin" {
		t.Errorf("a: %+v", a)
	}
	if b.From.Level != "/role/compute/nodes/8/" || b.From.WrittenBy == nil || b.From.WrittenBy.Principal != "ops" ||
		len(b.Shadows) != 1 || b.Shadows[0].WrittenBy == nil || b.Shadows[0].WrittenBy.Principal != "admin" {
		t.Errorf("b: %+v", b)
	}
}

// send13 sends body at microversion 1.3 as the administrator and returns the status and body.
func (c *client) send13(method, path, body string) (int, string) {
	c.t.Helper()
	return c.send(c.api.At("1.3"), method, path, body)
}

// TestDryRun: ?dry_run=true on every document write stores nothing and names
// the registered nodes whose effective document would change, and how.
func TestDryRun(t *testing.T) {
	c := newClient(t)
	uuid7 := seedNodeLevels(c)
	var env struct{ UUID string }
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/config/environments/2", "", 200, "")), &env); err != nil {
		t.Fatal(err)
	}
	e2 := "/api/v1/config/environments/" + env.UUID
	c.do("PUT", "/api/v1/config/environments/2/resources/astute/values", `{"a":1,"b":{"c":1}}`, 204, "")

	type preview struct {
		Version  int `json:"version"`
		Affected []struct {
			Node    string          `json:"node"`
			NodeID  string          `json:"node_id"`
			Changes json.RawMessage `json:"changes"`
		} `json:"affected"`
	}
	dry := func(method, path, body string) preview {
		t.Helper()
		status, out := c.send13(method, path, body)
		if status != http.StatusOK {
			t.Fatalf("%s %s: %d %s", method, path, status, out)
		}
		var p preview
		if err := json.Unmarshal([]byte(out), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// Node 8 (role compute) sees the global document; node 9 has no placement, so no path.
	p := dry("PUT", e2+"/resources/astute/values?dry_run=true", `{"a":2,"b":{"c":1}}`)
	if p.Version != 2 || len(p.Affected) != 1 || p.Affected[0].Node != "node-8.domain.tld" ||
		string(p.Affected[0].Changes) != `{"added":{},"removed":{},"changed":{"a":{"from":1,"to":2}}}` {
		t.Fatalf("global dry run: %+v", p)
	}
	if p := dry("PUT", e2+"/role/controller/resources/astute/overrides?dry_run=true", `{"a":3}`); p.Version != 1 || len(p.Affected) != 0 {
		t.Errorf("controller dry run affects %+v", p)
	}
	if p := dry("PUT", e2+"/role/compute/resources/astute/overrides?dry_run", `{"a":1}`); len(p.Affected) != 0 {
		t.Errorf("an override equal to the value changes nothing: %+v", p)
	}
	p = dry("PATCH", e2+"/resources/astute/values/keys/set?dry_run=true", `[["b","c",5]]`)
	if len(p.Affected) != 1 || string(p.Affected[0].Changes) != `{"added":{},"removed":{},"changed":{"b.c":{"from":1,"to":5}}}` {
		t.Errorf("keys/set dry run: %+v", p)
	}
	p = dry("PATCH", e2+"/resources/astute/values/keys/delete?dry_run=true", `[["b"]]`)
	if len(p.Affected) != 1 || string(p.Affected[0].Changes) != `{"added":{},"removed":{"b.c":1},"changed":{}}` {
		t.Errorf("keys/delete dry run: %+v", p)
	}
	// Environment 1 (levels [nodes]): node 7's own level.
	var env1 struct{ UUID string }
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/config/environments/1", "", 200, "")), &env1); err != nil {
		t.Fatal(err)
	}
	p = dry("PUT", "/api/v1/config/environments/"+env1.UUID+"/nodes/node-7.domain.tld/resources/astute/overrides?dry_run=true", `{"x":true}`)
	if len(p.Affected) != 1 || p.Affected[0].NodeID != uuid7 || string(p.Affected[0].Changes) != `{"added":{"x":true},"removed":{},"changed":{}}` {
		t.Errorf("node 7 dry run: %+v", p)
	}
	// Nothing was stored.
	if v := c.do("GET", "/api/v1/config/environments/2/resources/astute/values/versions", "", 200, ""); strings.Count(v, `"version"`) != 1 {
		t.Errorf("versions after dry runs: %s", v)
	}
	c.do("GET", "/api/v1/config/environments/1/nodes/7/resources/astute/overrides", "", 200, "{}")
	// A dry run refuses what the write would refuse, and needs 1.3.
	if status, out := c.send13("PUT", e2+"/resources/astute/values?dry_run=true", `[1]`); status != http.StatusBadRequest {
		t.Errorf("invalid dry run: %d %s", status, out)
	}
	c.do("PUT", "/api/v1/config/environments/2/resources/astute/values?dry_run=true", `{"a":9}`, 400, "1.3")
	c.do("GET", "/api/v1/config/environments/2/resources/astute/values", "", 200, `"a":1`)
}
