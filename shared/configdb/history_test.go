package configdb

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// writes stores documents at levels of environment 1's astute, each as
// written by a principal (audited) or by nobody known ("").
type writes struct {
	t   testing.TB
	s   *Service
	log *audit.Log
}

func (w writes) put(by string, levels []LevelValue, kind Kind, doc string) Version {
	w.t.Helper()
	return w.putIn("astute", by, levels, kind, doc)
}

func (w writes) putIn(resource, by string, levels []LevelValue, kind Kind, doc string) Version {
	w.t.Helper()
	ctx := context.Background()
	if by != "" {
		ctx, _ = w.log.Begin(ctx, audit.Record{Principal: by, Role: "operator", RequestID: "req-" + by, Method: "PUT", Path: "/" + resource})
	}
	v, err := w.s.PutDocument(ctx, DocRef{Env: "1", Levels: levels, Resource: resource}, kind, []byte(doc), "")
	if err != nil {
		w.t.Fatal(err)
	}
	return v
}

// explained reads the explanation of key at levels under mode.
func explained(t *testing.T, s *Service, levels []LevelValue, mode MergeMode, key string) map[string]explainedKey {
	t.Helper()
	d, err := s.Read(context.Background(), ReadQuery{DocRef: DocRef{Env: "1", Levels: levels, Resource: "astute"}, Kind: Values, Effective: true, Explain: true, Merge: mode, Key: key})
	if err != nil {
		t.Fatalf("explain %s (%s): %v", key, mode, err)
	}
	var out struct{ Keys map[string]explainedKey }
	if err := json.Unmarshal(d.Body, &out); err != nil {
		t.Fatal(err)
	}
	return out.Keys
}

func TestExplainNamesTheVersionThatWroteTheValue(t *testing.T) {
	s := newTestService(t)
	w := writes{t, s, audit.New(s.idx, nil)}
	global, node := lv(), lv("role", "controller", "nodes", "7")
	w.put("", global, Values, `{"glance":{"image_cache_max_size":1,"workers":4},"ntp":["a","b"],"debug":false}`)
	w.put("alice", global, Values, `{"glance":{"image_cache_max_size":2,"workers":4},"ntp":["a","b"],"debug":false}`)
	w.put("bob", global, Values, `{"glance":{"image_cache_max_size":2,"workers":4},"ntp":["a","b"],"debug":true}`)
	w.put("carol", node, Values, `{"glance":{"workers":8}}`)

	for _, tt := range []struct {
		mode       MergeMode
		key        string
		value      any
		level      string
		version    int
		docVersion int
		by         string
		shadows    int
	}{
		// Shallow: the node's glance hides the global one, which holds no such key.
		{MergeShallow, "glance.image_cache_max_size", nil, "", 0, 0, "", 0},
		{MergeShallow, "glance.workers", "8", "/role/controller/nodes/7/", 1, 1, "carol", 1},
		{MergeShallow, "glance", nil, "/role/controller/nodes/7/", 1, 1, "carol", 1},
		{MergeShallow, "debug", true, "/", 3, 3, "bob", 0},
		{MergeShallow, "ntp.1", "b", "/", 1, 3, "", 0},
		{MergeDeep, "glance.image_cache_max_size", "2", "/", 2, 3, "alice", 0},
		{MergeDeep, "glance.workers", "8", "/role/controller/nodes/7/", 1, 1, "carol", 1},
		{MergeDeep, "ntp.0", "a", "/", 1, 3, "", 0},
	} {
		name := fmt.Sprintf("%s %s", tt.mode, tt.key)
		if tt.level == "" {
			_, err := s.Read(context.Background(), ReadQuery{DocRef: DocRef{Env: "1", Levels: node, Resource: "astute"}, Kind: Values, Effective: true, Explain: true, Merge: tt.mode, Key: tt.key})
			if !errs.Is(err, errs.Conflict) {
				t.Errorf("%s: %v, want 409", name, err)
			}
			continue
		}
		e, ok := explained(t, s, node, tt.mode, tt.key)[tt.key]
		if !ok {
			t.Errorf("%s: not explained", name)
			continue
		}
		if tt.value != nil && fmt.Sprint(e.Value) != fmt.Sprint(tt.value) {
			t.Errorf("%s: value %v, want %v", name, e.Value, tt.value)
		}
		f := e.From
		by := ""
		if f.WrittenBy != nil {
			by = f.WrittenBy.Principal
		}
		if f.Level != tt.level || f.Version != tt.version || f.DocumentVersion != tt.docVersion || by != tt.by || f.AtOrBefore || len(e.Shadows) != tt.shadows {
			t.Errorf("%s: from %+v (by %q), %d shadows; want %s version %d of %d by %q, %d shadows", name, f, by, len(e.Shadows), tt.level, tt.version, tt.docVersion, tt.by, tt.shadows)
		}
	}
	// The whole explanation: under the shallow merge the top-level keys, each
	// named by the version that last changed it.
	all := explained(t, s, global, MergeShallow, "")
	if all["glance"].From.Version != 2 || all["debug"].From.Version != 3 || all["ntp"].From.Version != 1 {
		t.Errorf("shallow explain of the global level: %+v", all)
	}
}

func TestKeyHistory(t *testing.T) {
	s := newTestService(t)
	w := writes{t, s, audit.New(s.idx, nil)}
	node := lv("role", "controller", "nodes", "7")
	ref := DocRef{Env: "1", Levels: node, Resource: "astute"}
	ctx := context.Background()
	w.put("alice", node, Values, `{"a":{"b":1}}`)
	w.put("bob", node, Values, `{"a":{"b":1},"c":1}`) // a.b as it was
	w.put("bob", node, Values, `{"a":{"b":2},"c":1}`)
	w.put("carol", node, Values, `{"a":{},"c":1}`)
	w.put("alice", node, Values, `{"a":{"b":2},"c":1}`) // the content of version 3 again

	type change struct {
		version  int
		by       string
		old, new string
	}
	want := []change{{5, "alice", "", "2"}, {4, "carol", "2", ""}, {3, "bob", "1", "2"}, {1, "alice", "", "1"}}
	check := func(got []KeyChange, want []change) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%d changes, want %d: %+v", len(got), len(want), got)
		}
		for i, c := range got {
			w := want[i]
			if c.Version.Version != w.version || c.WrittenBy == nil || c.WrittenBy.Principal != w.by || string(c.Old) != w.old || string(c.New) != w.new {
				t.Errorf("change %d: version %d by %+v, %s -> %s; want %+v", i, c.Version.Version, c.WrittenBy, c.Old, c.New, w)
			}
		}
	}
	h, err := s.History(ctx, ref, Values, "a.b", HistoryPage{})
	if err != nil {
		t.Fatal(err)
	}
	check(h.Changes, want)
	if h.Before != 0 {
		t.Errorf("a complete history continues before %d", h.Before)
	}

	// Pages of two.
	first, err := s.History(ctx, ref, Values, "a.b", HistoryPage{Limit: 2})
	if err != nil {
		t.Fatal(err)
	}
	check(first.Changes, want[:2])
	if first.Before != 4 {
		t.Fatalf("the first page continues before %d, want 4", first.Before)
	}
	second, err := s.History(ctx, ref, Values, "a.b", HistoryPage{Limit: 2, Before: first.Before})
	if err != nil {
		t.Fatal(err)
	}
	check(second.Changes, want[2:])

	// A top-level key; a key never set; no document at all; bad pages.
	if h, err := s.History(ctx, ref, Values, "c", HistoryPage{}); err != nil || len(h.Changes) != 1 || h.Changes[0].Version.Version != 2 {
		t.Errorf("history of c: %+v, %v", h, err)
	}
	if h, err := s.History(ctx, ref, Values, "nope.x", HistoryPage{}); err != nil || len(h.Changes) != 0 {
		t.Errorf("history of a key never set: %+v, %v", h, err)
	}
	if h, err := s.History(ctx, ref, Overrides, "a.b", HistoryPage{}); err != nil || len(h.Changes) != 0 {
		t.Errorf("history without a document: %+v, %v", h, err)
	}
	for _, p := range []HistoryPage{{Limit: MaxHistoryLimit + 1}, {Limit: -1}, {Before: -1}} {
		if _, err := s.History(ctx, ref, Values, "a.b", p); !errs.Is(err, errs.Invalid) {
			t.Errorf("page %+v: %v, want invalid", p, err)
		}
	}
	if _, err := s.History(ctx, ref, Values, "", HistoryPage{}); !errs.Is(err, errs.Invalid) {
		t.Errorf("no key: %v, want invalid", err)
	}
}

// TestKeyHistoryWalkIsBounded: a value unchanged over more than walkBudget
// versions makes a history page stop there and say where to go on, and
// explain say the value is at least that old.
func TestKeyHistoryWalkIsBounded(t *testing.T) {
	s := newTestService(t)
	w := writes{t, s, audit.New(s.idx, nil)}
	global := lv()
	ref := DocRef{Env: "1", Resource: "astute"}
	for i := range walkBudget + 3 {
		w.put("", global, Values, fmt.Sprintf(`{"kept":1,"n":%d}`, i))
	}
	ctx := context.Background()
	var changes []KeyChange
	pages := 0
	for page := (HistoryPage{}); ; pages++ {
		h, err := s.History(ctx, ref, Values, "kept", page)
		if err != nil {
			t.Fatal(err)
		}
		changes = append(changes, h.Changes...)
		if h.Before == 0 {
			break
		}
		page.Before = h.Before
	}
	if pages != 1 || len(changes) != 1 || changes[0].Version.Version != 1 {
		t.Errorf("%d pages, changes %+v; want 2 pages and version 1", pages+1, changes)
	}
	e := explained(t, s, global, MergeShallow, "kept")["kept"]
	top := walkBudget + 3
	if !e.From.AtOrBefore || e.From.Version != top-walkBudget+1 || e.From.DocumentVersion != top {
		t.Errorf("explain of a value older than the walk: %+v", e.From)
	}
}

func TestKeyProvenance(t *testing.T) {
	b := mem.New()
	reg := nodes.NewService(b.Index, nodestest.Environments{Count: 1})
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	s := NewService(b.Index, b.Blobs, WithNodes(registry{reg}), WithClock(func() time.Time { return now }))
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{
		{Name: "astute"}, {Name: "deep", Content: json.RawMessage(`{"merge":"deep"}`)},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role", "nodes"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := reg.Create(ctx, nodes.NewNode{ID: 3, FQDN: "node-3.example.com", Environment: "1", Levels: map[string]string{"role": "compute"}}); err != nil {
		t.Fatal(err)
	}
	w := writes{t, s, audit.New(b.Index, nil)}
	at := func(minutes int) time.Time { return time.Date(2026, 11, 28, 9, minutes, 0, 0, time.UTC) }
	w.put("alice", lv(), Values, `{"glance":{"image_cache_max_size":1}}`)
	now = at(10)
	w.put("bob", lv("role", "compute", "nodes", "3"), Overrides, `{"glance":{"image_cache_max_size":5}}`)
	now = at(20)
	w.put("carol", lv("role", "compute", "nodes", "3"), Overrides, `{"glance":{"image_cache_max_size":5},"debug":true}`)

	for _, tt := range []struct {
		at                  time.Time
		level               string
		kind                Kind
		version, docVersion int
		by                  string
	}{
		{time.Time{}, "/role/compute/nodes/3/", Overrides, 1, 2, "bob"},
		{at(15), "/role/compute/nodes/3/", Overrides, 1, 1, "bob"},
		{at(5), "/", Values, 1, 1, "alice"},
	} {
		src, err := s.KeyProvenance(ctx, "1", "node-3.example.com", "astute", "glance.image_cache_max_size", tt.at)
		if err != nil {
			t.Fatalf("at %v: %v", tt.at, err)
		}
		if src.Level != tt.level || Kind(src.Kind) != tt.kind || src.Version != tt.version || src.DocumentVersion != tt.docVersion || src.WrittenBy == nil || src.WrittenBy.Principal != tt.by {
			t.Errorf("at %v: %+v; want %s %s version %d of %d by %s", tt.at, src, tt.level, tt.kind, tt.version, tt.docVersion, tt.by)
		}
	}
	if _, err := s.KeyProvenance(ctx, "1", "3", "astute", "debug", at(15)); !errs.Is(err, errs.Conflict) {
		t.Errorf("a key not there yet: %v, want conflict", err)
	}

	// An object the resource's deep merge makes of two layers: its source is
	// the one written last.
	now = at(30)
	w.putIn("deep", "alice", lv(), Values, `{"o":{"a":1}}`)
	now = at(40)
	w.putIn("deep", "bob", lv("role", "compute"), Values, `{"o":{"b":2}}`)
	now = at(50)
	w.putIn("deep", "carol", lv(), Values, `{"o":{"a":1},"x":1}`)
	src, err := s.KeyProvenance(ctx, "1", "3", "deep", "o", time.Time{})
	if err != nil || src.Level != "/role/compute/" || src.Version != 1 || src.WrittenBy == nil || src.WrittenBy.Principal != "bob" {
		t.Errorf("provenance of a deep-merged object: %+v, %v", src, err)
	}
}

// BenchmarkKeyHistoryPage reads a full page of a key's history (walkBudget
// versions compared) of a ~70 KB node document, from a cold service: every
// version's blob is read and parsed.
func BenchmarkKeyHistoryPage(b *testing.B) {
	warm := newTestService(b)
	ctx := context.Background()
	ref := DocRef{Env: "1", Levels: lv("role", "controller", "nodes", "1"), Resource: "astute"}
	doc := make(map[string]any, 200)
	for i := range 200 {
		doc[fmt.Sprintf("n_%d", i)] = map[string]any{"port": 1000 + i, "description": fmt.Sprintf("%0300d", i)}
	}
	for v := range walkBudget + 1 {
		doc[fmt.Sprintf("n_%d", v%200)].(map[string]any)["port"] = v
		body, _ := json.Marshal(doc)
		if _, err := warm.PutDocument(ctx, ref, Values, body, ""); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		s := NewService(warm.idx, warm.blobs)
		h, err := s.History(ctx, ref, Values, "n_7.port", HistoryPage{})
		if err != nil || len(h.Changes) != 2 || h.Before == 0 {
			b.Fatalf("%d changes, before %d, %v", len(h.Changes), h.Before, err)
		}
	}
}
