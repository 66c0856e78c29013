package configdb

import (
	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/store"
)

// readCache is the caching and snapshot layer of the ConfigDB over its index
// and blobs, as vault's physical.Cache is over a backend: the domain
// operations (Service) keep here what they read, decoded and computed, and
// take it back while it still holds. Nothing is answered stale:
//   - by content: parsed documents by SHA-256, effective merges and encoded
//     answers by the identity of their layers, compiled schemas by the
//     schema's hash (immutable, so never stale);
//   - by exact bytes: the decoded environments, definitions and document
//     heads, reused only while the item bytes a read fetches anyway are the
//     same (parsed);
//   - by guess: which environment and definition a reference names, and
//     where a node path places, confirmed by the items every read fetches;
//   - by generation: over an index that is its items' only writer
//     (store.Generational), the snapshots load read, until the index's
//     generation moves.
//
// Every cache counts bytes, and together they stay within the budget given
// to newReadCache.
type readCache struct {
	// docs holds parsed documents by SHA-256.
	docs *cache.LRU[string, *parsedDoc]
	// merges holds effective merges by the identity of their layers.
	merges *cache.LRU[[32]byte, *merged]
	// responses holds encoded answers by their ETag.
	responses *cache.LRU[[32]byte, *Document]
	// guesses remembers which environment and resource definition a reference resolved to.
	guesses *cache.LRU[string, guess]
	// placements remembers what node level paths resolved to.
	placements *cache.LRU[string, *placement]
	// schemas holds the compiled JSON Schemas of definitions, by the schema's hash.
	schemas *cache.LRU[[32]byte, *compiledSchema]
	// envs and resdefs hold the parsed form of the last seen item bytes.
	envs    *cache.LRU[int64, parsedItem[envRecord]]
	resdefs *cache.LRU[int64, parsedItem[resdefRecord]]
	// heads holds the decoded head of each document by key: every read fetches
	// them, and decoding them was most of a warm read's work.
	heads *cache.LRU[store.Key, parsedItem[Version]]
	// generational is the index as a store.Generational, when it is its
	// items' only writer; snapshots then holds what load read.
	generational store.Generational
	snapshots    *cache.LRU[string, generationSnapshot]
}

// newReadCache returns the caches over idx within total bytes: parsed
// documents 4/9, encoded answers 2/9, merges 2/9, and 1/9 for the entities
// (which environment, definition and node placement a reference names,
// parsed items and document heads, compiled schemas, loaded snapshots). An
// entry larger than its cache's share is not cached.
func newReadCache(idx store.Index, total int64) *readCache {
	part := total / 9
	entities := entityShare(total)
	c := &readCache{
		docs:       cache.New[string](4*part, func(d *parsedDoc) int64 { return d.cost() }),
		responses:  cache.New[[32]byte](2*part, func(d *Document) int64 { return int64(len(d.Body)+len(d.ETag)) + entryOverhead }),
		merges:     cache.New[[32]byte](2*part, func(m *merged) int64 { return m.size }),
		guesses:    cache.New[string](entities, func(g guess) int64 { return int64(8*len(g.components)) + entryOverhead }),
		envs:       cache.New[int64](entities, func(p parsedItem[envRecord]) int64 { return p.cost() }),
		resdefs:    cache.New[int64](entities, func(p parsedItem[resdefRecord]) int64 { return p.cost() }),
		placements: cache.New[string](entities, func(p *placement) int64 { return p.cost() }),
		schemas:    cache.New[[32]byte](entities, func(c *compiledSchema) int64 { return c.size }),
		heads:      cache.New[store.Key](entities, func(p parsedItem[Version]) int64 { return p.cost() + 64 }),
		snapshots:  cache.New[string](entities, generationSnapshot.cost),
	}
	c.generational, _ = idx.(store.Generational)
	return c
}

// entityShare is what each cache of entities gets of a budget of total
// bytes: an eighth of its ninth.
func entityShare(total int64) int64 { return total / 9 / 8 }

// entryOverhead approximates what a cache entry costs beyond its bytes (map
// slot, list links, key, struct headers).
const entryOverhead = 128

// keepsSnapshots reports whether the index lets snapshots be kept (store.Generational).
func (c *readCache) keepsSnapshots() bool { return c.generational != nil }

// snapshot returns the snapshot kept under key, if nothing was written since
// it was read; else the generation to keep a fresh read at (keepSnapshot):
// the one before the read, so a write during the read makes it stale.
func (c *readCache) snapshot(key string) (sn *snapshot, generation uint64, ok bool) {
	generation = c.generational.Generation()
	if t, ok := c.snapshots.Get(key); ok && t.generation == generation {
		return t.sn, generation, true
	}
	return nil, generation, false
}

// keepSnapshot keeps sn, read at generation, under key.
func (c *readCache) keepSnapshot(key string, generation uint64, sn *snapshot) {
	c.snapshots.Add(key, generationSnapshot{generation: generation, sn: sn, key: key})
}

// generationSnapshot is a snapshot with the index generation it was read at.
type generationSnapshot struct {
	generation uint64
	sn         *snapshot
	key        string
}

// cost counts the snapshot's items as stored and decoded, its heads and its key.
func (g generationSnapshot) cost() int64 {
	n := int64(2*len(g.sn.envRaw)+len(g.key)+64*len(g.sn.heads)) + entryOverhead
	if g.sn.placement != nil {
		n += g.sn.placement.cost()
	}
	return n
}

// register reports the caches to reg, by their names prefixed "configdb.".
func (c *readCache) register(reg *metrics.Registry) {
	for name, lru := range map[string]metrics.CacheStats{
		"docs": c.docs, "responses": c.responses, "merges": c.merges, "guesses": c.guesses,
		"environments": c.envs, "resource_definitions": c.resdefs, "placements": c.placements,
		"schemas": c.schemas, "heads": c.heads, "snapshots": c.snapshots,
	} {
		reg.Cache("configdb."+name, lru)
	}
}
