package configapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// v13 is the header asking for microversion 1.3.
var v13 = []string{"OpenStack-API-Version", "config 1.3"}

// envPaths returns environment 1's path by UUID (paths take UUIDs from 1.2 on)
// and its controller and node-1 level paths.
func (a *api) envPaths() (env, ctrl, node string) {
	a.t.Helper()
	var e struct{ UUID string }
	a.must(http.StatusOK, "GET", env1, "").json(a.t, &e)
	env = "/environments/" + e.UUID
	return env, env + "/role/controller", env + "/role/controller/nodes/node-1"
}

func TestDeepMerge(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	env1, controller, node1 := a.envPaths()
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":8,"debug":false,"filters":["a","b"]},"ntp":["pool"],"name":"g"}`)
	a.put(controller+"/resources/astute/values", `{"nova":{"workers":16,"filters":["c","a"],"extra":{"x":1}},"ntp":"local"}`)
	a.put(node1+"/resources/astute/overrides", `{"nova":{"debug":true}}`)

	shallow := a.get(node1+"/resources/astute/values?effective", v13...)
	expectJSON(t, "shallow (default)", shallow, `{"nova":{"debug":true},"ntp":"local","name":"g"}`)
	expectJSON(t, "merge=shallow", a.get(node1+"/resources/astute/values?effective&merge=shallow", v13...), shallow)

	deep := a.must(http.StatusOK, "GET", node1+"/resources/astute/values?effective&merge=deep", "", v13...)
	// Lists: the higher layer's elements first, then the lower's it lacks; a type change replaces.
	want := `{"nova":{"workers":16,"debug":true,"filters":["c","a","b"],"extra":{"x":1}},"ntp":"local","name":"g"}`
	expectJSON(t, "merge=deep", deep.String(), want)
	if deep.header.Get("ETag") == a.must(http.StatusOK, "GET", node1+"/resources/astute/values?effective", "", v13...).header.Get("ETag") {
		t.Fatal("deep and shallow merges share an ETag")
	}
	expectJSON(t, "merge=deep&key", a.get(node1+"/resources/astute/values?effective&merge=deep&key=nova.filters", v13...), `["c","a","b"]`)

	// A definition's default merge applies to plain effective reads, at every microversion.
	a.must(http.StatusNoContent, "PUT", "/resource_definitions/1", `{"content":{"merge":"deep"}}`)
	expectJSON(t, "definition default", a.get(node1+"/resources/astute/values?effective"), want)
	expectJSON(t, "explicit shallow beats the definition", a.get(node1+"/resources/astute/values?effective&merge=shallow", v13...), shallow)

	if msg := a.must(http.StatusBadRequest, "PUT", "/resource_definitions/1", `{"content":{"merge":"hash"}}`).errorMessage(t); !strings.Contains(msg, "content.merge") {
		t.Errorf("bad definition merge: %q", msg)
	}
	if msg := a.must(http.StatusBadRequest, "GET", node1+"/resources/astute/values?effective&merge=deeper", "", v13...).errorMessage(t); !strings.Contains(msg, "merge must be") {
		t.Errorf("bad merge: %q", msg)
	}
	a.must(http.StatusBadRequest, "GET", node1+"/resources/astute/values?merge=deep", "", v13...)
	if msg := a.must(http.StatusBadRequest, "GET", node1+"/resources/astute/values?effective&merge=deep", "").errorMessage(t); !strings.Contains(msg, "1.3") {
		t.Errorf("merge at 1.0: %q", msg)
	}
}

func TestExplain(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	env1, controller, node1 := a.envPaths()
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":8,"debug":false},"name":"g"}`)
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":8,"debug":false},"name":"g2"}`)
	a.put(controller+"/resources/astute/values", `{"nova":{"workers":16}}`)
	a.put(node1+"/resources/astute/overrides", `{"nova":{"debug":true},"name":"n1"}`)

	type layer struct {
		Level   string `json:"level"`
		Kind    string `json:"kind"`
		Version int    `json:"version"`
		Value   any    `json:"value"`
	}
	type key struct {
		Value      any     `json:"value"`
		From       layer   `json:"from"`
		MergedFrom []layer `json:"merged_from"`
		Shadows    []layer `json:"shadows"`
	}
	var deep struct {
		Merge string         `json:"merge"`
		Keys  map[string]key `json:"keys"`
	}
	a.must(http.StatusOK, "GET", node1+"/resources/astute/values?effective&merge=deep&explain", "", v13...).json(t, &deep)
	if deep.Merge != "deep" || len(deep.Keys) != 3 {
		t.Fatalf("deep explain: %+v", deep)
	}
	w := deep.Keys["nova.workers"]
	if w.Value != float64(16) || w.From != (layer{Level: "/role/controller/", Kind: "values", Version: 1}) ||
		len(w.Shadows) != 1 || w.Shadows[0] != (layer{Level: "/", Kind: "values", Version: 2, Value: float64(8)}) {
		t.Errorf("nova.workers: %+v", w)
	}
	if d := deep.Keys["nova.debug"]; d.Value != true || d.From.Level != "/role/controller/nodes/node-1/" || d.From.Kind != "overrides" || len(d.Shadows) != 1 {
		t.Errorf("nova.debug: %+v", d)
	}
	if n := deep.Keys["name"]; n.Value != "n1" || n.From.Kind != "overrides" || n.Shadows[0].Value != "g2" {
		t.Errorf("name: %+v", n)
	}

	var shallow struct {
		Merge string         `json:"merge"`
		Keys  map[string]key `json:"keys"`
	}
	a.must(http.StatusOK, "GET", node1+"/resources/astute/values?effective&explain", "", v13...).json(t, &shallow)
	nova := shallow.Keys["nova"]
	if shallow.Merge != "shallow" || len(shallow.Keys) != 2 || nova.From.Kind != "overrides" || len(nova.Shadows) != 2 {
		t.Errorf("shallow explain: %+v", shallow)
	}
	var one struct {
		Keys map[string]key `json:"keys"`
	}
	a.must(http.StatusOK, "GET", node1+"/resources/astute/values?effective&merge=deep&explain&key=nova", "", v13...).json(t, &one)
	if len(one.Keys) != 2 {
		t.Errorf("explain with key=nova: %+v", one.Keys)
	}
	// A nested key under the shallow merge comes from the layer that set its
	// top-level key, named by the version that wrote it (at the global level
	// version 1, although the document is at version 2).
	var nested struct {
		Keys map[string]struct {
			Value any `json:"value"`
			From  struct {
				Level           string `json:"level"`
				Version         int    `json:"version"`
				DocumentVersion int    `json:"document_version"`
			} `json:"from"`
		} `json:"keys"`
	}
	a.must(http.StatusOK, "GET", controller+"/resources/astute/values?effective&explain&key=nova.workers", "", v13...).json(t, &nested)
	if w := nested.Keys["nova.workers"]; len(nested.Keys) != 1 || w.Value != float64(16) || w.From.Level != "/role/controller/" || w.From.Version != 1 || w.From.DocumentVersion != 1 {
		t.Errorf("shallow explain of nova.workers at the controller: %+v", nested.Keys)
	}
	// The controller's nova replaced the global one, which held nova.debug.
	a.must(http.StatusConflict, "GET", controller+"/resources/astute/values?effective&explain&key=nova.debug", "", v13...)
	a.must(http.StatusOK, "GET", env1+"/resources/astute/values?effective&explain&key=nova.debug", "", v13...).json(t, &nested)
	if d := nested.Keys["nova.debug"]; d.Value != false || d.From.Level != "/" || d.From.Version != 1 || d.From.DocumentVersion != 2 {
		t.Errorf("shallow explain of nova.debug at the global level: %+v", nested.Keys)
	}
	a.must(http.StatusConflict, "GET", node1+"/resources/astute/values?effective&explain&key=missing", "", v13...)
	a.must(http.StatusConflict, "GET", node1+"/resources/astute/values?effective&explain&key=nova.missing", "", v13...)
	a.must(http.StatusBadRequest, "GET", node1+"/resources/astute/values?explain", "", v13...)
	a.must(http.StatusBadRequest, "GET", node1+"/resources/astute/values?effective&explain&show_lookup", "", v13...)
}

func TestKeyHistory(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	_, _, node1 := a.envPaths()
	doc := node1 + "/resources/astute/values"
	a.put(doc, `{"glance":{"cache":1},"debug":false}`)
	a.put(doc, `{"glance":{"cache":2},"debug":false}`)
	a.put(doc, `{"glance":{"cache":2},"debug":true}`)
	a.put(doc, `{"glance":{},"debug":true}`)

	type change struct {
		Version int             `json:"version"`
		Change  string          `json:"change"`
		Old     json.RawMessage `json:"old"`
		New     json.RawMessage `json:"new"`
	}
	var page struct {
		Key     string   `json:"key"`
		Changes []change `json:"changes"`
		Before  int      `json:"before"`
	}
	a.must(http.StatusOK, "GET", doc+"/history?key=glance.cache", "", v13...).json(t, &page)
	want := []change{{4, "removed", json.RawMessage("2"), nil}, {2, "changed", json.RawMessage("1"), json.RawMessage("2")}, {1, "added", nil, json.RawMessage("1")}}
	if page.Key != "glance.cache" || page.Before != 0 || fmt.Sprint(page.Changes) != fmt.Sprint(want) {
		t.Errorf("history of glance.cache: %+v; want %+v", page, want)
	}
	a.must(http.StatusOK, "GET", doc+"/history?key=glance.cache&limit=1", "", v13...).json(t, &page)
	if len(page.Changes) != 1 || page.Changes[0].Version != 4 || page.Before != 4 {
		t.Errorf("first page of one: %+v", page)
	}
	a.must(http.StatusOK, "GET", doc+"/history?key=glance.cache&limit=1&before=4", "", v13...).json(t, &page)
	if len(page.Changes) != 1 || page.Changes[0].Version != 2 || page.Before != 2 {
		t.Errorf("second page of one: %+v", page)
	}
	a.must(http.StatusOK, "GET", node1+"/resources/astute/overrides/history?key=debug", "", v13...).json(t, &page)
	if len(page.Changes) != 0 {
		t.Errorf("history of a document never stored: %+v", page)
	}
	a.must(http.StatusBadRequest, "GET", doc+"/history", "", v13...)
	a.must(http.StatusBadRequest, "GET", doc+"/history?key=debug&limit=101", "", v13...)
	a.must(http.StatusNotFound, "GET", doc+"/history?key=debug", "")
}

func TestAsOf(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	env1, _, node1 := a.envPaths()
	instant := func() string {
		time.Sleep(5 * time.Millisecond)
		defer time.Sleep(5 * time.Millisecond)
		return time.Now().UTC().Format(time.RFC3339Nano)
	}
	before := instant()
	a.put(env1+"/resources/astute/values", `{"a":1,"b":1}`)
	t1 := instant()
	a.put(node1+"/resources/astute/values", `{"b":2}`)
	a.put(env1+"/resources/astute/values", `{"a":3,"b":1}`)
	t2 := instant()
	a.put(node1+"/resources/astute/overrides", `{"a":4}`)

	eff := node1 + "/resources/astute/values?effective"
	expectJSON(t, "now", a.get(eff, v13...), `{"a":4,"b":2}`)
	expectJSON(t, "at t2", a.get(eff+"&as_of="+t2, v13...), `{"a":3,"b":2}`)
	expectJSON(t, "at t1", a.get(eff+"&as_of="+t1, v13...), `{"a":1,"b":1}`)
	expectJSON(t, "before anything", a.get(eff+"&as_of="+before, v13...), `{}`)
	expectJSON(t, "raw at t1", a.get(env1+"/resources/astute/values?as_of="+t1, v13...), `{"a":1,"b":1}`)
	expectJSON(t, "raw overrides at t2", a.get(node1+"/resources/astute/overrides?as_of="+t2, v13...), `{}`)

	var ex struct {
		Keys map[string]struct {
			From struct{ Version int } `json:"from"`
		} `json:"keys"`
	}
	a.must(http.StatusOK, "GET", eff+"&explain&as_of="+t2, "", v13...).json(t, &ex)
	if ex.Keys["a"].From.Version != 2 || ex.Keys["b"].From.Version != 1 {
		t.Errorf("explain at t2: %+v", ex)
	}
	if msg := a.must(http.StatusBadRequest, "GET", eff+"&as_of=yesterday", "", v13...).errorMessage(t); !strings.Contains(msg, "RFC 3339") {
		t.Errorf("bad as_of: %q", msg)
	}
	a.must(http.StatusBadRequest, "GET", env1+"/resources/astute/values?version=1&as_of="+t1, "", v13...)
}

func TestDiff(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	env1, controller, node1 := a.envPaths()
	_, _, node2 := a.envPaths()
	node2 = strings.Replace(node2, "node-1", "node-2", 1)
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":8,"debug":false},"ntp":["a"],"region":"r1"}`)
	a.put(controller+"/resources/astute/values", `{"nova":{"workers":16,"debug":false}}`)
	a.put(node1+"/resources/astute/overrides", `{"nova":{"workers":16,"debug":true},"extra":{"x":1,"y":{}}}`)
	t1 := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	a.put(node2+"/resources/astute/overrides", `{"region":"r2"}`)

	// Diff exists from 1.3, where bodies name environments by UUID (spec 004).
	e1 := strings.TrimPrefix(env1, "/environments/")
	diff := func(body string) string {
		body = strings.NewReplacer(`"environment":1`, `"environment":"`+e1+`"`, `"environment":"1"`, `"environment":"`+e1+`"`).Replace(body)
		return a.must(http.StatusOK, "POST", "/diff", body, v13...).String()
	}
	// Two nodes: "to" takes what it leaves out from "from".
	expectJSON(t, "node-1 -> node-2", diff(`{"from":{"environment":1,"levels":{"nodes":"node-1","role":"controller"},"resource":"astute","effective":true},"to":{"levels":{"role":"controller","nodes":"node-2"}}}`),
		`{"added":{},"removed":{"extra.x":1,"extra.y":{}},"changed":{"nova.debug":{"from":true,"to":false},"region":{"from":"r1","to":"r2"}}}`)
	// Two instants of one node, and two versions (same level, raw documents).
	expectJSON(t, "node-2 at t1 -> now", diff(`{"from":{"environment":"1","levels":{"role":"controller","nodes":"node-2"},"resource":"astute","effective":true,"as_of":"`+t1+`"},"to":{}}`),
		`{"added":{},"removed":{},"changed":{"region":{"from":"r1","to":"r2"}}}`)
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":8},"ntp":["a","b"],"region":"r1"}`)
	expectJSON(t, "versions 1 -> 2", diff(`{"from":{"environment":1,"resource":"astute","version":1},"to":{"version":2}}`),
		`{"added":{},"removed":{"nova.debug":false},"changed":{"ntp":{"from":["a"],"to":["a","b"]}}}`)
	// Two environments.
	a.must(http.StatusCreated, "POST", "/environments", `{"id":2,"components":["fuel"],"hierarchy_levels":["role","nodes"]}`)
	a.put("/environments/2/resources/astute/values", `{"region":"r1"}`)
	var e2 struct{ UUID string }
	a.must(http.StatusOK, "GET", "/environments/2", "").json(t, &e2)
	expectJSON(t, "env 1 -> env 2", diff(`{"from":{"environment":1,"resource":"astute","effective":true},"to":{"environment":"`+e2.UUID+`"}}`),
		`{"added":{},"removed":{"nova.workers":8,"ntp":["a","b"]},"changed":{}}`)
	// Deep merge on both sides.
	expectJSON(t, "deep", diff(`{"from":{"environment":1,"levels":{"role":"controller"},"resource":"astute","effective":true,"merge":"deep"},"to":{"levels":{"role":"controller","nodes":"node-1"}}}`),
		`{"added":{"extra.x":1,"extra.y":{}},"removed":{},"changed":{"nova.debug":{"from":false,"to":true}}}`)

	for _, bad := range []struct{ body, want string }{
		{`{"from":{"environment":"` + e1 + `","resource":"astute"}}`, `"from" and "to"`},
		{`{"from":{"environment":"` + e1 + `","resource":"astute","levels":{"rack":"1"}},"to":{}}`, "no level named rack"},
		{`{"from":{"environment":"` + e1 + `","resource":"astute","as_of":"now"},"to":{}}`, "RFC 3339"},
		{`{"from":{"environment":1,"resource":"astute"},"to":{}}`, `field "from.environment": Invalid uuid 1`},
		{`{"from":{"environment":"` + e1 + `","resource":"astute"},"to":{"environment":"2"}}`, `field "to.environment": Invalid uuid 2`},
		{`{"from":{"resource":"astute"},"to":{}}`, "environment"},
	} {
		if msg := a.must(http.StatusBadRequest, "POST", "/diff", bad.body, v13...).errorMessage(t); !strings.Contains(msg, bad.want) {
			t.Errorf("%s: %q", bad.body, msg)
		}
	}
	a.must(http.StatusNotFound, "POST", "/diff", `{"from":{"environment":"00000000-0000-4000-8000-000000000009","resource":"astute"},"to":{}}`, v13...)
	a.must(http.StatusNotFound, "POST", "/diff", `{"from":{"environment":1,"resource":"astute"},"to":{}}`)
}

// TestWatch: a read held by ?wait= with If-None-Match, on the document's
// path and on the watchers' (routes.WatchPrefix), which answer the same.
func TestWatch(t *testing.T) {
	for _, prefix := range []string{configapi.Prefix, routes.WatchPrefix + "/config"} {
		t.Run(prefix, func(t *testing.T) {
			a := newAPI(t, httpapi.Options{})
			a.seed()
			env1, _, node1 := a.envPaths()
			a.put(env1+"/resources/astute/values", `{"a":1}`)
			eff := node1 + "/resources/astute/values?effective"
			etag := a.must(http.StatusOK, "GET", eff, "").header.Get("ETag")
			// The reads below on this prefix's path.
			a.url = strings.Replace(a.url, configapi.Prefix, prefix, 1)
			if got := a.must(http.StatusOK, "GET", eff, "", v13...).header.Get("ETag"); got != etag {
				t.Errorf("ETag %s, want the document path's %s", got, etag)
			}

			// Nothing changes: 304 when the wait ends.
			start := time.Now()
			a.must(http.StatusNotModified, "GET", eff+"&wait=0.3", "", append(v13, "If-None-Match", etag)...)
			if d := time.Since(start); d < 300*time.Millisecond || d > 3*time.Second {
				t.Errorf("an unchanged wait of 0.3 s took %v", d)
			}
			// Another ETag: answered at once.
			a.must(http.StatusOK, "GET", eff+"&wait=20", "", append(v13, "If-None-Match", `"other"`)...)

			// A write during the wait: 200 with the new document, long before the wait ends.
			go func() {
				time.Sleep(200 * time.Millisecond)
				a.svc.PutDocument(t.Context(), configdbRef(env1), "values", []byte(`{"a":2}`), "")
			}()
			start = time.Now()
			r := a.must(http.StatusOK, "GET", eff+"&wait=20", "", append(v13, "If-None-Match", etag)...)
			expectJSON(t, "after the write", r.String(), `{"a":2}`)
			if d := time.Since(start); d > 5*time.Second || r.header.Get("ETag") == etag {
				t.Errorf("woke after %v with ETag %s", d, r.header.Get("ETag"))
			}
			// The wait is capped, and needs 1.3.
			if msg := a.must(http.StatusBadRequest, "GET", eff+"&wait=soon", "", v13...).errorMessage(t); !strings.Contains(msg, "at most 25") {
				t.Errorf("bad wait: %q", msg)
			}
			if prefix == configapi.Prefix {
				a.must(http.StatusBadRequest, "GET", eff+"&wait=1", "", "If-None-Match", etag)
			} else {
				// The watchers' route is 1.3's: older requests find no such version of it.
				a.must(http.StatusNotFound, "GET", eff+"&wait=1", "", "If-None-Match", etag)
			}
		})
	}
}

// configdbRef is the global document of astute in the environment at path env.
func configdbRef(env string) configdb.DocRef {
	return configdb.DocRef{Env: strings.TrimPrefix(env, "/environments/"), Resource: "astute"}
}

func TestSchema(t *testing.T) {
	a := newAPI(t, httpapi.Options{})
	a.seed()
	schema := `{"type":"object","required":["nova"],"properties":{
		"nova":{"type":"object","required":["workers"],"properties":{"workers":{"type":"integer","minimum":1},"required":{"type":"boolean"}}},
		"ntp":{"type":"array","items":{"type":"string","format":"hostname"}}},
		"additionalProperties":false}`
	a.must(http.StatusNoContent, "PUT", "/resource_definitions/1", `{"content":{"schema":`+schema+`}}`)
	a.put(env1+"/resources/astute/values", `{"nova":{"workers":4},"ntp":["a.example.com"]}`)

	refused := func(path, body, pointer, rule string) {
		t.Helper()
		msg := a.must(http.StatusBadRequest, "PUT", path, body).errorMessage(t)
		if !strings.Contains(msg, `at "`+pointer+`"`) || !strings.Contains(msg, "rule "+rule) {
			t.Errorf("PUT %s: %q, want pointer %s and rule %s", body, msg, pointer, rule)
		}
	}
	refused(env1+"/resources/astute/values", `{"nova":{"workers":0}}`, "/nova/workers", "/properties/nova/properties/workers/minimum")
	refused(env1+"/resources/astute/values", `{"nova":{}}`, "/nova", "/properties/nova/required")
	refused(env1+"/resources/astute/values", `{"nova":{"workers":2},"extra":1}`, "", "/additionalProperties")
	// Overrides are partial: nothing is required, but what they set must fit.
	a.put(node1+"/resources/astute/overrides", `{"nova":{"required":true}}`)
	a.put(node1+"/resources/astute/overrides", `{}`)
	refused(node1+"/resources/astute/overrides", `{"nova":{"workers":"many"}}`, "/nova/workers", "/properties/nova/properties/workers/type")
	refused(node1+"/resources/astute/overrides", `{"ntp":[1]}`, "/ntp/0", "/properties/ntp/items/type")
	// keys/set and dry runs are validated like the write.
	msg := a.must(http.StatusBadRequest, "PATCH", env1+"/resources/astute/values/keys/set", `[["nova","workers",-1]]`).errorMessage(t)
	if !strings.Contains(msg, "minimum") {
		t.Errorf("keys/set: %q", msg)
	}
	e, _, _ := a.envPaths()
	a.must(http.StatusBadRequest, "PUT", e+"/resources/astute/values?dry_run=true", `{"nova":{"workers":0}}`, v13...)
	expectJSON(t, "stored", a.get(env1+"/resources/astute/values"), `{"nova":{"workers":4},"ntp":["a.example.com"]}`)

	// The schema itself is checked when the definition is saved.
	for _, bad := range []string{
		`{"content":{"schema":{"type":"nothing"}}}`,
		`{"content":{"schema":{"$ref":"file:///etc/passwd"}}}`,
		`{"content":{"schema":{"$ref":"https://example.com/schema.json"}}}`,
		`{"content":{"schema":` + schemaBomb(40) + `}}`, // 2^40 subschemas per value
	} {
		if msg := a.must(http.StatusBadRequest, "PUT", "/resource_definitions/1", bad).errorMessage(t); !strings.Contains(msg, "content.schema") {
			t.Errorf("%s: %q", bad, msg)
		}
	}
	a.must(http.StatusNoContent, "PUT", "/resource_definitions/1", `{"content":{"schema":{"$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}}}`)
	refused(env1+"/resources/astute/values", `{"a":"x"}`, "/a", "/properties/a/$ref/type")
}

// schemaBomb is a $defs chain whose every level holds allOf [$ref next, $ref next].
func schemaBomb(depth int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range depth {
		fmt.Fprintf(&b, `"d%d":{"allOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"object"}}}`, depth)
	return b.String()
}
