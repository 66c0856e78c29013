package configdb

import (
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
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
	if newReadCache(struct{ store.Index }{}, DefaultCacheBytes).keepsSnapshots() {
		t.Fatal("snapshots kept over an index others write too")
	}
	idx := &generationalIndex{}
	c := newReadCache(idx, DefaultCacheBytes)
	if !c.keepsSnapshots() {
		t.Fatal("no snapshots over a generational index")
	}
	const key = "1:1:astute"
	if _, _, ok := c.snapshot(key); ok {
		t.Fatal("a snapshot before any was kept")
	}
	_, generation, _ := c.snapshot(key)
	loaded := &snapshot{envRaw: []byte(`{"id":1}`)}
	idx.generation.Add(1) // a write while the snapshot was read
	c.keepSnapshot(key, generation, loaded)
	if _, _, ok := c.snapshot(key); ok {
		t.Fatal("a snapshot read while the index changed was given back")
	}
	_, generation, _ = c.snapshot(key)
	c.keepSnapshot(key, generation, loaded)
	if sn, _, ok := c.snapshot(key); !ok || sn != loaded {
		t.Fatalf("the kept snapshot: %v, %v", sn, ok)
	}
	idx.generation.Add(1)
	if _, _, ok := c.snapshot(key); ok {
		t.Fatal("a snapshot given back after a write")
	}
}
