package localstack

import (
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"
)

// v13 asks for microversion 1.3 (merge, explain, as_of, dry_run, diff).
var v13 = []string{"OpenStack-API-Version", "config 1.3"}

// TestHTTPHistory drives the 1.3 reads and previews through the server over the
// emulators: deep merge, explain with the writer from the audit record, as_of
// on raw, effective and explain reads, POST /diff, and a dry run that stores nothing.
func TestHTTPHistory(t *testing.T) {
	f := newFixture(t)
	f.registerNode(t)
	var env struct {
		UUID string `json:"uuid"`
	}
	f.want(http.StatusOK, "GET", fmt.Sprintf("/environments/%d", f.env.ID), nil).decode(t, &env)
	// From 1.2 on paths name the environment by UUID.
	at13 := func(p string) string {
		return strings.Replace(p, fmt.Sprintf("/environments/%d/", f.env.ID), "/environments/"+env.UUID+"/", 1)
	}
	node := []string{"zone", "z1", "role", "compute", "nodes", f.node.FQDN}

	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values"), `{"nova":{"workers":8,"debug":false},"ntp":["a"]}`)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "values", "zone", "z1"), `{"nova":{"workers":16},"ntp":["b"]}`)
	time.Sleep(20 * time.Millisecond)
	instant := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)
	f.want(http.StatusNoContent, "PUT", f.doc("astute", "overrides", node...), `{"nova":{"debug":true}}`)
	eff := at13(f.doc("astute", "values", node...)) + "?effective"

	f.wantJSON("GET", eff, `{"nova":{"debug":true},"ntp":["b"]}`) // at 1.0: no 1.3 parameter, shallow
	r := f.want(http.StatusOK, "GET", eff+"&merge=deep", nil, v13...)
	if !jsonEqual(r.body, []byte(`{"nova":{"workers":16,"debug":true},"ntp":["b","a"]}`)) {
		t.Errorf("deep merge: %s", r.body)
	}
	var ex struct {
		Keys map[string]struct {
			Value any `json:"value"`
			From  struct {
				Level     string `json:"level"`
				Version   int    `json:"version"`
				WrittenBy *struct {
					Principal string `json:"principal"`
				} `json:"written_by"`
			} `json:"from"`
			Shadows []struct {
				Level string `json:"level"`
				Value any    `json:"value"`
			} `json:"shadows"`
		} `json:"keys"`
	}
	f.want(http.StatusOK, "GET", eff+"&merge=deep&explain", nil, v13...).decode(t, &ex)
	w := ex.Keys["nova.workers"]
	if w.Value != float64(16) || w.From.Level != "/zone/z1/" || len(w.Shadows) != 1 || w.Shadows[0].Value != float64(8) {
		t.Errorf("explain nova.workers: %+v", w)
	}
	if user := os.Getenv("TUNINGBOX_USER"); user != "" && (w.From.WrittenBy == nil || w.From.WrittenBy.Principal != user) {
		t.Errorf("explain: nova.workers written by %+v, want %s", w.From.WrittenBy, user)
	}
	asOf := "&as_of=" + instant.Format(time.RFC3339Nano)
	if r := f.want(http.StatusOK, "GET", eff+asOf, nil, v13...); !jsonEqual(r.body, []byte(`{"nova":{"workers":16},"ntp":["b"]}`)) {
		t.Errorf("as_of: %s", r.body)
	}
	if r := f.want(http.StatusOK, "GET", at13(f.doc("astute", "overrides", node...))+"?"+asOf[1:], nil, v13...); string(r.body) != "{}" {
		t.Errorf("raw overrides as_of: %s", r.body)
	}
	f.want(http.StatusOK, "GET", eff+"&explain"+asOf, nil, v13...)

	diff := f.want(http.StatusOK, "POST", "/diff", map[string]any{
		"from": map[string]any{"environment": env.UUID, "levels": map[string]string{"nodes": f.node.FQDN}, "resource": "astute", "effective": true, "as_of": instant.Format(time.RFC3339Nano)},
		"to":   map[string]any{},
	}, v13...)
	if !jsonEqual(diff.body, []byte(`{"added":{"nova.debug":true},"removed":{"nova.workers":16},"changed":{}}`)) {
		t.Errorf("diff as_of -> now: %s", diff.body)
	}

	// A dry run names the node and stores nothing.
	var p struct {
		Version  int `json:"version"`
		Affected []struct {
			Node string `json:"node"`
		} `json:"affected"`
	}
	f.want(http.StatusOK, "PUT", at13(f.doc("astute", "values", "zone", "z1"))+"?dry_run=true", `{"nova":{"workers":32},"ntp":["c"]}`, v13...).decode(t, &p)
	if p.Version != 2 || len(p.Affected) != 1 || p.Affected[0].Node != f.node.FQDN {
		t.Errorf("dry run: %+v", p)
	}
	f.wantJSON("GET", f.doc("astute", "values", "zone", "z1"), `{"nova":{"workers":16},"ntp":["b"]}`)

	// Watch: an unchanged document answers 304 when the wait ends, a stale ETag 200 at once.
	etag := f.want(http.StatusOK, "GET", eff, nil, v13...).header.Get("ETag")
	start := time.Now()
	f.want(http.StatusNotModified, "GET", eff+"&wait=0.5", nil, append(v13, "If-None-Match", etag)...)
	if d := time.Since(start); d < 500*time.Millisecond {
		t.Errorf("a wait of 0.5 s answered after %v", d)
	}
	f.want(http.StatusOK, "GET", eff+"&wait=20", nil, append(v13, "If-None-Match", `"stale"`)...)

	// A JSON Schema in the definition refuses a document that breaks it, and stores nothing.
	f.want(http.StatusNoContent, "PATCH", fmt.Sprintf("/resource_definitions/%d", f.component.ResourceDefinitions[0].ID),
		`{"content":{"schema":{"properties":{"nova":{"properties":{"workers":{"type":"integer","minimum":1}}}}}}}`)
	r = f.want(http.StatusBadRequest, "PUT", f.doc("astute", "values", "zone", "z1"), `{"nova":{"workers":0}}`)
	if !strings.Contains(string(r.body), `/nova/workers`) || !strings.Contains(string(r.body), "minimum") {
		t.Errorf("schema refusal: %s", r.body)
	}
	var versions []any
	f.want(http.StatusOK, "GET", f.doc("astute", "values", "zone", "z1")+"/versions", nil).decode(t, &versions)
	if len(versions) != 1 {
		t.Errorf("a dry run stored a version: %v", versions)
	}
}
