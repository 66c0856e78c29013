package configdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkCachedEffectiveRead is the ConfigDB's part of Hiera's hot path: a
// warm effective read of a node's document (global, role and node levels),
// answered from the kept snapshot and the cache of encoded answers.
func BenchmarkCachedEffectiveRead(b *testing.B) {
	s := newTestService(b)
	ctx := context.Background()
	document := func(prefix string, keys int) []byte {
		parts := make([]string, keys)
		for i := range parts {
			parts[i] = fmt.Sprintf(`"%s_%d":{"enabled":true,"port":%d,"description":"%s"}`, prefix, i, 1000+i, strings.Repeat("x", 60))
		}
		return []byte("{" + strings.Join(parts, ",") + "}")
	}
	levels := lv("role", "controller", "nodes", "node-1")
	for depth, keys := range []int{200, 50, 20} {
		ref := DocRef{Env: "1", Levels: levels[:depth], Resource: "astute"}
		if _, err := s.PutDocument(ctx, ref, Values, document(fmt.Sprint(depth), keys), ""); err != nil {
			b.Fatal(err)
		}
	}
	q := ReadQuery{DocRef: DocRef{Env: "1", Levels: levels, Resource: "astute"}, Kind: Values, Effective: true}
	first, err := s.Read(ctx, q)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		d, err := s.Read(ctx, q)
		if err != nil {
			b.Fatal(err)
		}
		if d != first {
			b.Fatal("the warm read was not answered from the cache")
		}
	}
}
