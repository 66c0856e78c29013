package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// get13 GETs path at microversion 1.3 as the administrator and decodes the 200 answer into v.
func (c *client) get13(path string, v any) {
	c.t.Helper()
	req, err := http.NewRequest("GET", c.url+path, nil)
	if err != nil {
		c.t.Fatal(err)
	}
	req.SetBasicAuth("admin", "wiring-test-password")
	req.Header.Set("OpenStack-API-Version", "config 1.3")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		c.t.Fatalf("GET %s = %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal(body, v); err != nil {
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
	req, _ := http.NewRequest("PUT", c.url+"/api/v1/config/environments/2/nodes/NODE-8.domain.tld/resources/astute/overrides", jsonBody(`{"b":3}`))
	req.SetBasicAuth("ops", "ops-password-1")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("PUT as ops: %v %v", resp, err)
	}
	resp.Body.Close()

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

func jsonBody(s string) io.Reader { return strings.NewReader(s) }
