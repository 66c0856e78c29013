package configdb

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// generationalIndex is an index that says it is its items' only writer.
type generationalIndex struct {
	store.Index
	generation atomic.Uint64
}

func (g *generationalIndex) Generation() uint64 { return g.generation.Load() }

// TestReadCacheSnapshots: a snapshot is kept only over an index that is its
// items' only writer, and given back only while the index's generation is the
// one read before it was loaded.
func TestReadCacheSnapshots(t *testing.T) {
	if newCachedSnapshots(nil, struct{ store.Index }{}, DefaultCacheBytes).keeps() {
		t.Fatal("snapshots kept over an index others write too")
	}
	idx := &generationalIndex{}
	c := newCachedSnapshots(nil, idx, DefaultCacheBytes)
	if !c.keeps() {
		t.Fatal("no snapshots over a generational index")
	}
	const key = "1:1:astute"
	if _, _, ok := c.kept(key); ok {
		t.Fatal("a snapshot before any was kept")
	}
	_, generation, _ := c.kept(key)
	loaded := &snapshot{envRaw: []byte(`{"id":1}`)}
	idx.generation.Add(1) // a write while the snapshot was read
	c.keep(key, generation, loaded)
	if _, _, ok := c.kept(key); ok {
		t.Fatal("a snapshot read while the index changed was given back")
	}
	_, generation, _ = c.kept(key)
	c.keep(key, generation, loaded)
	if sn, _, ok := c.kept(key); !ok || sn != loaded {
		t.Fatalf("the kept snapshot: %v, %v", sn, ok)
	}
	idx.generation.Add(1)
	if _, _, ok := c.kept(key); ok {
		t.Fatal("a snapshot given back after a write")
	}
}

// countingLoader loads an empty snapshot and counts its loads.
type countingLoader struct{ loads int }

func (l *countingLoader) load(context.Context, DocRef, int, Kind) (*snapshot, error) {
	l.loads++
	return &snapshot{}, nil
}

// TestCachedSnapshotsDecorate: the snapshot cache loads from the reader it
// wraps once per reference while nothing is written, again after a write,
// and every time over an index others write too.
func TestCachedSnapshotsDecorate(t *testing.T) {
	ctx := context.Background()
	ref := DocRef{Env: "1", Resource: "astute"}
	for _, tc := range []struct {
		name      string
		idx       store.Index
		wantLoads int
	}{
		{"generational", &generationalIndex{}, 3},
		{"shared", struct{ store.Index }{}, 4},
	} {
		next := &countingLoader{}
		c := newCachedSnapshots(next, tc.idx, DefaultCacheBytes)
		for _, r := range []DocRef{ref, ref, {Env: "1", Resource: "globals"}} {
			if _, err := c.load(ctx, r, 0, ""); err != nil {
				t.Fatal(err)
			}
		}
		if g, ok := tc.idx.(*generationalIndex); ok {
			g.generation.Add(1)
		}
		if _, err := c.load(ctx, ref, 0, ""); err != nil {
			t.Fatal(err)
		}
		if next.loads != tc.wantLoads {
			t.Errorf("%s: %d loads from the store, want %d", tc.name, next.loads, tc.wantLoads)
		}
	}
}

// TestPlainAnswerOfAKeptSnapshot: the answer a kept snapshot's plain answer
// finds (plainAnswer) is the one the layers give, with the same ETag, as over
// an index that keeps no snapshot; any other read of the snapshot (another
// merge, a key, show_lookup, another version) is not taken for it.
func TestPlainAnswerOfAKeptSnapshot(t *testing.T) {
	b := mem.New()
	kept, node := warmReadService(t, b.Index, b.Blobs)
	fresh := NewService(struct{ store.Index }{b.Index}, b.Blobs)
	if !kept.snapshots.keeps() || fresh.snapshots.keeps() {
		t.Fatal("want one service keeping snapshots and one not")
	}
	ctx := context.Background()
	ref := DocRef{Env: "1", Levels: node, Resource: "override/plugins"}
	for _, q := range []ReadQuery{
		{DocRef: ref, Kind: Values, Effective: true},
		{DocRef: ref, Kind: Values, Effective: true, Merge: MergeShallow},
		{DocRef: ref, Kind: Values, Effective: true, Merge: MergeDeep},
		{DocRef: ref, Kind: Values, Effective: true, Key: "c"},
		{DocRef: ref, Kind: Values, Effective: true, ShowLookup: true},
		{DocRef: ref, Kind: Overrides, Effective: true},
		{DocRef: ref, Kind: Values, Effective: true, Version: 1},
		{DocRef: ref, Kind: Values},
	} {
		want, err := fresh.Read(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 { // cold, then warm
			got, err := kept.Read(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if got.ETag != want.ETag || string(got.Body) != string(want.Body) {
				t.Errorf("%+v: %s %s over a kept snapshot, %s %s without", q, got.ETag, got.Body, want.ETag, want.Body)
			}
		}
	}
}
