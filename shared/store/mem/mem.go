// Package mem is an in-memory storage backend: the index and the blobs live
// in maps of one process and go with it. It passes the same contract suite
// (shared/store/storetest) as the embedded and the AWS backends, limits
// included, so that tests whose subject is not persistence use it instead of
// a database file (as vault's physical/inmem).
package mem

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
)

// New returns an empty backend. It holds no resources: Close is nil.
func New() store.Backend {
	return store.Backend{
		Index: &index{partitions: map[string][]entry{}},
		Blobs: &blobs{stored: map[string]blob{}},
	}
}

// entry is one stored index item of a partition.
type entry struct {
	sort     string
	value    []byte // owned by the index: copied in on write and out on read
	revision int64
}

// index keeps each partition's items in a slice sorted by sort key, so that
// a query is a binary search and a walk.
type index struct {
	mu         sync.RWMutex
	partitions map[string][]entry
	// generation counts the committed Writes (store.Generational): nobody
	// else writes these items.
	generation atomic.Uint64
}

// Generation implements store.Generational.
func (x *index) Generation() uint64 { return x.generation.Load() }

func compareSort(e entry, key string) int { return strings.Compare(e.sort, key) }

// find returns where k's item is, or would be, in its partition, and whether it is there.
func (x *index) find(k store.Key) (int, bool) {
	return slices.BinarySearchFunc(x.partitions[k.Partition], k.Sort, compareSort)
}

// item returns a copy of e as the item at k.
func item(k store.Key, e entry) store.Item {
	return store.Item{Key: k, Value: bytes.Clone(e.value), Revision: e.revision}
}

func (x *index) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	if err := store.CheckKey(k); err != nil {
		return store.Item{}, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	i, found := x.find(k)
	if !found {
		return store.Item{}, fmt.Errorf("get %s/%s: %w", k.Partition, k.Sort, store.ErrNotFound)
	}
	return item(k, x.partitions[k.Partition][i]), nil
}

func (x *index) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.CheckBatchGet(keys); err != nil {
		return nil, err
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	items := make(map[store.Key]store.Item, len(keys))
	for _, k := range keys {
		if i, found := x.find(k); found {
			items[k] = item(k, x.partitions[k.Partition][i])
		}
	}
	return items, nil
}

func (x *index) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.CheckPartition(q.Partition); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("query: negative limit %d", q.Limit)
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	part := x.partitions[q.Partition]
	// The items with the prefix are one run from the first sort key at or
	// above it; After then cuts the run from below (forward) or above (reverse).
	lo, _ := slices.BinarySearchFunc(part, q.Prefix, compareSort)
	hi := lo + sort.Search(len(part)-lo, func(i int) bool { return !strings.HasPrefix(part[lo+i].sort, q.Prefix) })
	if q.After != "" {
		after, found := slices.BinarySearchFunc(part, q.After, compareSort)
		switch {
		case q.Reverse:
			hi = min(hi, after)
		case found:
			lo = max(lo, after+1)
		default:
			lo = max(lo, after)
		}
	}
	run := part[lo:max(lo, hi)]
	if q.Limit > 0 && len(run) > q.Limit {
		if q.Reverse {
			run = run[len(run)-q.Limit:]
		} else {
			run = run[:q.Limit]
		}
	}
	var items []store.Item
	for i := range run {
		if q.Reverse {
			i = len(run) - 1 - i
		}
		items = append(items, item(store.Key{Partition: q.Partition, Sort: run[i].sort}, run[i]))
	}
	return items, nil
}

func (x *index) Write(ctx context.Context, ops ...store.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckBatch(ops); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	// The lock may have been waited for: a request that ended meanwhile (its
	// deadline passed) must not commit anything, as on the embedded backend.
	if err := ctx.Err(); err != nil {
		return err
	}
	// Every condition is checked before anything changes; keys are distinct,
	// so no op of the batch changes what another op's condition sees.
	revs := make([]int64, len(ops))
	for i, op := range ops {
		if j, found := x.find(op.Key); found {
			revs[i] = x.partitions[op.Key.Partition][j].revision
		}
		if !op.Cond.HoldsAt(revs[i]) {
			return fmt.Errorf("write %s/%s: %w", op.Key.Partition, op.Key.Sort, store.ErrConflict)
		}
	}
	for i, op := range ops {
		switch op.Kind {
		case store.OpPut:
			x.put(op.Key, entry{sort: op.Key.Sort, value: bytes.Clone(op.Value), revision: revs[i] + 1})
		case store.OpDelete:
			x.delete(op.Key)
		}
	}
	x.generation.Add(1)
	return nil
}

// put stores e at k, replacing what is there.
func (x *index) put(k store.Key, e entry) {
	part := x.partitions[k.Partition]
	i, found := slices.BinarySearchFunc(part, k.Sort, compareSort)
	if found {
		part[i] = e
		return
	}
	x.partitions[k.Partition] = slices.Insert(part, i, e)
}

// delete removes the item at k, if there is one, and its partition with its last item.
func (x *index) delete(k store.Key) {
	part := x.partitions[k.Partition]
	i, found := slices.BinarySearchFunc(part, k.Sort, compareSort)
	if !found {
		return
	}
	if part = slices.Delete(part, i, i+1); len(part) == 0 {
		delete(x.partitions, k.Partition)
		return
	}
	x.partitions[k.Partition] = part
}

// blob is one stored blob and when it was first stored.
type blob struct {
	data    []byte
	created time.Time
}

// blobs keeps each blob under its hex SHA-256.
type blobs struct {
	mu     sync.RWMutex
	stored map[string]blob
}

func (s *blobs) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	hash := store.HashOf(data)
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, exists := s.stored[hash]; !exists { // stored before: keep its first time
		// A copy the caller cannot change; non-nil even when empty.
		s.stored[hash] = blob{data: append([]byte{}, data...), created: time.Now()}
	}
	return hash, nil
}

// Get returns the stored slice itself: the contract forbids changing it.
func (s *blobs) Get(ctx context.Context, hash string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	b, found := s.stored[hash]
	s.mu.RUnlock()
	if !found {
		return nil, fmt.Errorf("get blob %s: %w", hash, store.ErrNotFound)
	}
	return b.data, nil
}

func (s *blobs) List(ctx context.Context, fn func(hash string, created time.Time) error) error {
	type listed struct {
		hash    string
		created time.Time
	}
	s.mu.RLock()
	all := make([]listed, 0, len(s.stored))
	for hash, b := range s.stored {
		all = append(all, listed{hash, b.created})
	}
	s.mu.RUnlock()
	// fn runs without the lock: it may write (delete) meanwhile.
	for _, b := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(b.hash, b.created); err != nil {
			return err
		}
	}
	return nil
}

func (s *blobs) Delete(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.stored, hash)
	s.mu.Unlock()
	return nil
}
