package configdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchLayers stores the ~520 KB astute-like document of make bench (global,
// role and node values and a node override) and returns the layers of
// node-1's effective read (its snapshot, layers and their labels).
func benchLayers(b *testing.B) (*Service, *snapshot, []layer, []string) {
	s := newTestService(b)
	ctx := context.Background()
	doc := func(prefix string, keys int) []byte {
		m := make(map[string]any, keys)
		for i := range keys {
			m[fmt.Sprintf("%s_%d", prefix, i)] = map[string]any{
				"enabled": i%2 == 0, "port": 1000 + i,
				"hosts":       []string{fmt.Sprintf("10.0.%d.1", i%250), fmt.Sprintf("10.0.%d.2", i%250)},
				"description": strings.Repeat("x", 140),
			}
		}
		raw, _ := json.Marshal(m)
		return raw
	}
	levels := lv("role", "controller", "nodes", "node-1")
	for _, u := range []struct {
		depth int
		kind  Kind
		body  []byte
	}{{0, Values, doc("g", 1400)}, {1, Values, doc("r", 400)}, {2, Values, doc("n", 200)}, {2, Overrides, []byte(`{"g_1":{"enabled":false}}`)}} {
		if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: levels[:u.depth], Resource: "astute"}, u.kind, u.body, ""); err != nil {
			b.Fatal(err)
		}
	}
	sn, err := s.snapshots.load(ctx, DocRef{Env: "1", Levels: levels, Resource: "astute"}, 0, "")
	if err != nil {
		b.Fatal(err)
	}
	return s, sn, sn.effectiveLayers(Values), sn.lookupLabels()
}

// BenchmarkDeepMergeCold merges the 520 KB document deeply without the caches
// of merges and answers (parsed documents are cached, as after any first read).
func BenchmarkDeepMergeCold(b *testing.B) {
	s, _, layers, _ := benchLayers(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := s.deepMerge(context.Background(), layers)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.encode(layers, nil, ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExplainCold explains the 520 KB document's merge without the
// answer cache, each document at its first version, and with the node's
// values at their 32nd version, one key changed by each (every key but one
// found by walking all 32 versions back).
func BenchmarkExplainCold(b *testing.B) {
	for _, versions := range []int{1, 32} {
		for _, mode := range []MergeMode{MergeShallow, MergeDeep} {
			b.Run(fmt.Sprintf("%s/versions=%d", mode, versions), func(b *testing.B) {
				benchExplain(b, mode, versions)
			})
		}
	}
}

func benchExplain(b *testing.B, mode MergeMode, versions int) {
	s, sn, layers, labels := benchLayers(b)
	if versions > 1 {
		ctx := context.Background()
		ref := DocRef{Env: "1", Levels: sn.levels, Resource: "astute"}
		node, err := s.GetDocument(ctx, ref, Values, 0)
		if err != nil {
			b.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(node.Body, &doc); err != nil {
			b.Fatal(err)
		}
		for v := 2; v <= versions; v++ {
			doc[fmt.Sprintf("n_%d", v)].(map[string]any)["port"] = v
			body, _ := json.Marshal(doc)
			if _, err := s.PutDocument(ctx, ref, Values, body, ""); err != nil {
				b.Fatal(err)
			}
		}
		if sn, err = s.snapshots.load(ctx, ref, 0, ""); err != nil {
			b.Fatal(err)
		}
		layers = sn.effectiveLayers(Values)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := s.explain(context.Background(), sn, layers, labels, mode, "")
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(d.Body)))
	}
}

// BenchmarkExplainKey explains one nested key of node-1's 520 KB effective
// document without the answer cache: what KeyProvenance does for each
// changed key an explained plan shows.
func BenchmarkExplainKey(b *testing.B) {
	for _, mode := range []MergeMode{MergeShallow, MergeDeep} {
		b.Run(string(mode), func(b *testing.B) {
			s, sn, layers, labels := benchLayers(b)
			b.ReportAllocs()
			for b.Loop() {
				keys, err := s.explainKeys(context.Background(), sn, layers, labels, mode, "g_1.enabled")
				if err != nil || keys["g_1.enabled"].From.Kind != string(Overrides) {
					b.Fatalf("%+v, %v", keys, err)
				}
			}
		})
	}
}
