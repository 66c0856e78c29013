// Package cache provides a concurrency-safe LRU cache bounded by the total
// cost of its entries (for example their size in bytes) rather than their number.
package cache

import (
	"fmt"
	"sync"
)

// LRU is a least-recently-used cache whose entries' costs sum to at most maxCost.
// It is safe for concurrent use. Every operation is O(1) (plus evictions) under one mutex.
type LRU[K comparable, V any] struct {
	maxCost int64
	cost    func(V) int64

	mu      sync.Mutex
	entries map[K]*entry[K, V]
	// root is the sentinel of a circular list: root.next is the most recently used entry,
	// root.prev the least. Intrusive links keep Get free of allocations.
	root  entry[K, V]
	total int64
	// hits and misses count Get's answers (Stats).
	hits, misses uint64
}

// EntryOverhead approximates what the cache itself spends on an entry beyond
// its key and value: the map slot, the list links, the cost and the
// allocation. Cost functions of small entries add it, so that a budget in
// bytes also bounds caches of many small values.
const EntryOverhead = 96

type entry[K comparable, V any] struct {
	key        K
	value      V
	cost       int64
	prev, next *entry[K, V]
}

// New returns an empty cache holding entries whose costs, as reported by cost, sum to at most maxCost.
// cost must return a non-negative number and the same number for the same value.
func New[K comparable, V any](maxCost int64, cost func(V) int64) *LRU[K, V] {
	c := &LRU[K, V]{maxCost: maxCost, cost: cost, entries: make(map[K]*entry[K, V])}
	c.root.next = &c.root
	c.root.prev = &c.root
	return c
}

// Get returns the value cached for k and marks it most recently used.
func (c *LRU[K, V]) Get(k K) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		c.misses++
		var zero V
		return zero, false
	}
	c.hits++
	c.moveToFront(e)
	return e.value, true
}

// Stats returns how many lookups (Get) found their key and how many did not.
func (c *LRU[K, V]) Stats() (hits, misses uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.hits, c.misses
}

// Add caches v under k, replacing any previous value, and evicts least recently used
// entries until the total cost fits. A value costing more than maxCost is not stored
// (and any previous value of k is dropped, so Get never returns a stale value).
func (c *LRU[K, V]) Add(k K, v V) {
	cost := c.cost(v)
	if cost < 0 {
		panic(fmt.Sprintf("cache: negative cost %d", cost))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old, ok := c.entries[k]; ok {
		c.unlink(old)
	}
	if cost > c.maxCost {
		return
	}
	e := &entry[K, V]{key: k, value: v, cost: cost}
	c.entries[k] = e
	c.total += cost
	c.insertFront(e)
	for c.total > c.maxCost {
		c.unlink(c.root.prev)
	}
}

// Remove drops k from the cache, if present.
func (c *LRU[K, V]) Remove(k K) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.entries[k]; ok {
		c.unlink(e)
	}
}

// Len returns the number of cached entries.
func (c *LRU[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// Cost returns the total cost of the cached entries.
func (c *LRU[K, V]) Cost() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total
}

func (c *LRU[K, V]) insertFront(e *entry[K, V]) {
	e.prev = &c.root
	e.next = c.root.next
	e.next.prev = e
	c.root.next = e
}

func (c *LRU[K, V]) moveToFront(e *entry[K, V]) {
	if c.root.next == e {
		return
	}
	e.prev.next = e.next
	e.next.prev = e.prev
	c.insertFront(e)
}

// unlink removes e from the list and the map and releases its cost.
func (c *LRU[K, V]) unlink(e *entry[K, V]) {
	e.prev.next = e.next
	e.next.prev = e.prev
	e.prev, e.next = nil, nil
	delete(c.entries, e.key)
	c.total -= e.cost
}
