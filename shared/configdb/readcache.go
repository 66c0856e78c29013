package configdb

import (
	"context"
	"fmt"
	"strconv"
	"unsafe"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/store"
)

// The ConfigDB reads the store through two layers, each a decorator over a
// reader of the store in the way vault's physical.Cache is over a backend:
// the cache implements what it wraps, so the operations never see it.
//   - documentReader: stored documents by SHA-256, parsed (blobDocuments);
//     cachedDocuments keeps them, never stale since a blob's key is its hash;
//   - snapshotLoader: everything one document operation reads from the index
//     (storeSnapshots); cachedSnapshots keeps it over an index that is its
//     items' only writer (store.Generational) until the index's generation
//     moves, so any write invalidates it.
//
// Encoded answers are kept the same way, over their renderer (answers.go).
// readCache holds the rest, which only the operations can confirm or key:
//   - by content: effective merges by the identity of their layers, compiled
//     schemas by the schema's hash (immutable, so never stale);
//   - by exact bytes: the decoded environments, definitions and document
//     heads, reused only while the item bytes a read fetches anyway are the
//     same (parsed);
//   - by guess: which environment and definition a reference names, and
//     where a node path places, confirmed by the items every read fetches.
//
// Every cache counts bytes, and together they stay within the budget given
// to WithCacheBytes: parsed documents 4/9, encoded answers 2/9, merges 2/9,
// and 1/9 for the entities (which environment, definition and node placement
// a reference names, parsed items and document heads, compiled schemas,
// loaded snapshots). An entry larger than its cache's share is not cached.
type readCache struct {
	// merges holds effective merges by the identity of their layers.
	merges *cache.LRU[[32]byte, *merged]
	// guesses remembers which environment and resource definition a reference resolved to.
	guesses *cache.LRU[string, guess]
	// placements remembers what node level paths resolved to.
	placements *cache.LRU[string, *placement]
	// schemas holds the compiled JSON Schemas of definitions, by the schema's hash.
	schemas *cache.LRU[[32]byte, *cachedSchema]
	// envs and resdefs hold the parsed form of the last seen item bytes.
	envs    *cache.LRU[int64, parsedItem[envRecord]]
	resdefs *cache.LRU[int64, parsedItem[resdefRecord]]
	// heads holds the decoded head of each document by key: every read fetches
	// them, and decoding them was most of a warm read's work.
	heads *cache.LRU[store.Key, parsedItem[Version]]
}

// newReadCache returns the operations' caches within their shares of total bytes.
func newReadCache(total int64) *readCache {
	part := total / 9
	entities := entityShare(total)
	return &readCache{
		merges:     cache.New[[32]byte](2*part, func(m *merged) int64 { return m.size }),
		guesses:    cache.New[string](entities, func(g guess) int64 { return int64(8*len(g.components)) + entryOverhead }),
		envs:       cache.New[int64](entities, func(p parsedItem[envRecord]) int64 { return p.cost() }),
		resdefs:    cache.New[int64](entities, func(p parsedItem[resdefRecord]) int64 { return p.cost() }),
		placements: cache.New[string](entities, func(p *placement) int64 { return p.cost() }),
		schemas:    cache.New[[32]byte](entities, func(c *cachedSchema) int64 { return c.size }),
		heads:      cache.New[store.Key](entities, func(p parsedItem[Version]) int64 { return p.cost() + 64 }),
	}
}

// entityShare is what each cache of entities gets of a budget of total
// bytes: an eighth of its ninth.
func entityShare(total int64) int64 { return total / 9 / 8 }

// documentShare and answerShare are what the caches of parsed documents
// (cachedDocuments) and of encoded answers (cachedAnswers) get of a budget
// of total bytes.
func documentShare(total int64) int64 { return 4 * (total / 9) }
func answerShare(total int64) int64   { return 2 * (total / 9) }

// entryOverhead approximates what a cache entry costs beyond its bytes (map
// slot, list links, key, struct headers).
const entryOverhead = 128

// register reports the caches to reg, by their names prefixed "configdb.".
func (c *readCache) register(reg *metrics.Registry) {
	for name, lru := range map[string]metrics.CacheStats{
		"merges": c.merges, "guesses": c.guesses,
		"environments": c.envs, "resource_definitions": c.resdefs, "placements": c.placements,
		"schemas": c.schemas, "heads": c.heads,
	} {
		reg.Cache("configdb."+name, lru)
	}
}

// documentReader reads stored documents by SHA-256: what merges, explains
// and writes read.
type documentReader interface {
	document(ctx context.Context, sha string) (*parsedDoc, error)
}

// blobDocuments reads documents from the blob store, parsing every read.
type blobDocuments struct{ blobs store.Blobs }

func (b blobDocuments) document(ctx context.Context, sha string) (*parsedDoc, error) {
	raw, err := b.blobs.Get(ctx, sha)
	if err != nil {
		return nil, fmt.Errorf("document blob %s: %w", sha, err)
	}
	d, err := parseDocument(raw, sha)
	if err != nil {
		return nil, fmt.Errorf("document blob %s: %w", sha, err)
	}
	return d, nil
}

// cachedDocuments keeps what next reads. A document's key is its content's
// hash, so nothing kept is ever stale: no write invalidates it.
type cachedDocuments struct {
	next documentReader
	docs *cache.LRU[string, *parsedDoc]
}

func newCachedDocuments(next documentReader, maxBytes int64) cachedDocuments {
	return cachedDocuments{next: next, docs: cache.New[string](maxBytes, func(d *parsedDoc) int64 { return d.cost() })}
}

func (c cachedDocuments) document(ctx context.Context, sha string) (*parsedDoc, error) {
	if d, ok := c.docs.Get(sha); ok {
		return d, nil
	}
	d, err := c.next.document(ctx, sha)
	if err != nil {
		return nil, err
	}
	c.docs.Add(sha, d)
	return d, nil
}

// snapshotLoader loads everything a document operation reads: the
// environment, the definition, every head along the level path and (version
// > 0) one version of the addressed document of kind vk. The snapshot
// returned may be shared: callers must not change it.
type snapshotLoader interface {
	load(ctx context.Context, ref DocRef, version int, vk Kind) (*snapshot, error)
}

// storeSnapshots loads every snapshot with fresh reads of the service's index.
type storeSnapshots struct{ s *Service }

func (f storeSnapshots) load(ctx context.Context, ref DocRef, version int, vk Kind) (*snapshot, error) {
	return f.s.loadFresh(ctx, ref, version, vk)
}

// cachedSnapshots keeps what next loads over an index that is its items'
// only writer (store.Generational), with the generation read before it:
// until anything is written, reading the same reference again costs no index
// call. A kept snapshot of a kind knows its plain effective answer
// (plainAnswer). Over any other index it loads every snapshot from next.
type cachedSnapshots struct {
	next         snapshotLoader
	generational store.Generational
	snapshots    *cache.LRU[string, generationSnapshot]
}

func newCachedSnapshots(next snapshotLoader, idx store.Index, maxBytes int64) cachedSnapshots {
	c := cachedSnapshots{next: next, snapshots: cache.New[string](maxBytes, generationSnapshot.cost)}
	c.generational, _ = idx.(store.Generational)
	return c
}

// keeps reports whether the index lets snapshots be kept (store.Generational).
func (c cachedSnapshots) keeps() bool { return c.generational != nil }

func (c cachedSnapshots) load(ctx context.Context, ref DocRef, version int, vk Kind) (*snapshot, error) {
	if !c.keeps() {
		return c.next.load(ctx, ref, version, vk)
	}
	// The lookup reads the key where it was built, with no string made for
	// it: the cache keeps no key it is asked for, and key is not changed after.
	var buf [128]byte
	key := appendSnapshotKey(buf[:0], ref, version, vk)
	sn, generation, ok := c.kept(unsafe.String(unsafe.SliceData(key), len(key)))
	if ok {
		return sn, nil
	}
	sn, err := c.next.load(ctx, ref, version, vk)
	if err != nil {
		return nil, err
	}
	if vk != "" {
		sn.plain = sn.plainAnswerOf(vk)
	}
	c.keep(string(key), generation, sn)
	return sn, nil
}

// appendSnapshotKey appends the name of what a snapshotLoader loads to b,
// unambiguously (every string length-prefixed, the version terminated).
func appendSnapshotKey(b []byte, ref DocRef, version int, vk Kind) []byte {
	part := func(s string) {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, ':')
		b = append(b, s...)
	}
	part(ref.Env)
	part(ref.Resource)
	part(string(vk))
	b = append(strconv.AppendInt(b, int64(version), 10), ';')
	for _, lv := range ref.Levels {
		part(lv.Name)
		part(lv.Value)
	}
	return b
}

// kept returns the snapshot kept under key, if nothing was written since it
// was read; else the generation to keep a fresh read at (keep): the one
// before the read, so a write during the read makes it stale.
func (c cachedSnapshots) kept(key string) (sn *snapshot, generation uint64, ok bool) {
	generation = c.generational.Generation()
	if t, ok := c.snapshots.Get(key); ok && t.generation == generation {
		return t.sn, generation, true
	}
	return nil, generation, false
}

// keep keeps sn, read at generation, under key.
func (c cachedSnapshots) keep(key string, generation uint64, sn *snapshot) {
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
