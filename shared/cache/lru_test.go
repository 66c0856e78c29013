package cache

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

// step is one operation of a table case: add key=value, get key (expecting found), or remove key.
type step struct {
	op    string // "add", "get", "remove"
	key   string
	value string
	found bool // for "get"
}

func add(k, v string) step          { return step{op: "add", key: k, value: v} }
func get(k string, found bool) step { return step{op: "get", key: k, found: found} }
func remove(k string) step          { return step{op: "remove", key: k} }

func strLen(s string) int64 { return int64(len(s)) }

func TestLRU(t *testing.T) {
	tests := []struct {
		name     string
		maxCost  int64
		steps    []step
		wantKeys []string // most recently used first
		wantCost int64
	}{
		{
			name:     "empty",
			maxCost:  10,
			steps:    []step{get("a", false)},
			wantKeys: []string{},
		},
		{
			name:     "add then get",
			maxCost:  10,
			steps:    []step{add("a", "xx"), get("a", true), get("b", false)},
			wantKeys: []string{"a"},
			wantCost: 2,
		},
		{
			name:     "evicts least recently added",
			maxCost:  4,
			steps:    []step{add("a", "xx"), add("b", "xx"), add("c", "xx"), get("a", false), get("b", true), get("c", true)},
			wantKeys: []string{"c", "b"},
			wantCost: 4,
		},
		{
			name:     "get protects an entry from eviction",
			maxCost:  4,
			steps:    []step{add("a", "xx"), add("b", "xx"), get("a", true), add("c", "xx"), get("b", false)},
			wantKeys: []string{"c", "a"},
			wantCost: 4,
		},
		{
			name:     "one large entry evicts several small ones",
			maxCost:  5,
			steps:    []step{add("a", "x"), add("b", "x"), add("c", "x"), add("d", "xxxx")},
			wantKeys: []string{"d", "c"},
			wantCost: 5,
		},
		{
			name:     "entry costing exactly maxCost is stored",
			maxCost:  3,
			steps:    []step{add("a", "x"), add("b", "xxx")},
			wantKeys: []string{"b"},
			wantCost: 3,
		},
		{
			name:     "entry costing more than maxCost is not stored and evicts nothing",
			maxCost:  3,
			steps:    []step{add("a", "x"), add("b", "xxxx"), get("b", false)},
			wantKeys: []string{"a"},
			wantCost: 1,
		},
		{
			name:     "oversized replacement drops the old value",
			maxCost:  3,
			steps:    []step{add("a", "x"), add("b", "x"), add("a", "xxxx"), get("a", false)},
			wantKeys: []string{"b"},
			wantCost: 1,
		},
		{
			name:     "replace updates cost and recency",
			maxCost:  10,
			steps:    []step{add("a", "x"), add("b", "x"), add("a", "xxxxx")},
			wantKeys: []string{"a", "b"},
			wantCost: 6,
		},
		{
			name:     "growing replacement evicts others, not itself",
			maxCost:  4,
			steps:    []step{add("a", "x"), add("b", "x"), add("c", "x"), add("a", "xxx")},
			wantKeys: []string{"a", "c"},
			wantCost: 4,
		},
		{
			name:     "remove",
			maxCost:  10,
			steps:    []step{add("a", "xx"), add("b", "xxx"), remove("a"), get("a", false)},
			wantKeys: []string{"b"},
			wantCost: 3,
		},
		{
			name:     "remove missing is a no-op",
			maxCost:  10,
			steps:    []step{add("a", "xx"), remove("z")},
			wantKeys: []string{"a"},
			wantCost: 2,
		},
		{
			name:     "zero-cost entries",
			maxCost:  1,
			steps:    []step{add("a", ""), add("b", "x"), add("c", "")},
			wantKeys: []string{"c", "b", "a"},
			wantCost: 1,
		},
		{
			name:     "zero maxCost stores only zero-cost entries",
			maxCost:  0,
			steps:    []step{add("a", "x"), add("b", "")},
			wantKeys: []string{"b"},
			wantCost: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := New[string, string](tt.maxCost, strLen)
			for i, s := range tt.steps {
				switch s.op {
				case "add":
					c.Add(s.key, s.value)
				case "get":
					v, ok := c.Get(s.key)
					if ok != s.found {
						t.Fatalf("step %d: Get(%q) found = %v, want %v", i, s.key, ok, s.found)
					}
					if !ok && v != "" {
						t.Fatalf("step %d: Get(%q) missed but returned %q", i, s.key, v)
					}
				case "remove":
					c.Remove(s.key)
				}
				checkInvariants(t, c)
			}
			if got := c.keys(); !slices.Equal(got, tt.wantKeys) {
				t.Errorf("keys = %v, want %v", got, tt.wantKeys)
			}
			if got := c.Cost(); got != tt.wantCost {
				t.Errorf("Cost() = %d, want %d", got, tt.wantCost)
			}
			if got := c.Len(); got != len(tt.wantKeys) {
				t.Errorf("Len() = %d, want %d", got, len(tt.wantKeys))
			}
		})
	}
}

func TestGetReturnsLatestValue(t *testing.T) {
	c := New[int, string](100, strLen)
	c.Add(1, "old")
	c.Add(1, "new")
	if v, ok := c.Get(1); !ok || v != "new" {
		t.Fatalf("Get = %q, %v; want \"new\", true", v, ok)
	}
}

func TestNegativeCostPanics(t *testing.T) {
	c := New[int, int](10, func(v int) int64 { return int64(v) })
	defer func() {
		if recover() == nil {
			t.Fatal("Add with a negative cost did not panic")
		}
	}()
	c.Add(1, -1)
}

// TestConcurrent hammers one cache from many goroutines; run it with -race.
func TestConcurrent(t *testing.T) {
	const (
		workers = 16
		rounds  = 2000
		keys    = 64
	)
	// Each key has its own value, of a cost that varies by key, so a mixed-up entry shows.
	valueOf := func(k int) string { return fmt.Sprintf("%s:%d", strings.Repeat("x", k%10), k) }
	c := New[int, string](100, strLen)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				k := (w*31 + i) % keys
				switch i % 4 {
				case 0:
					c.Add(k, valueOf(k))
				case 1, 2:
					if v, ok := c.Get(k); ok && v != valueOf(k) {
						t.Errorf("Get(%d) = %q: value of another key", k, v)
					}
				case 3:
					c.Remove((k + 1) % keys)
				}
				if got := c.Cost(); got > 100 {
					t.Errorf("Cost() = %d exceeds maxCost", got)
				}
				_ = c.Len()
			}
		})
	}
	wg.Wait()
	checkInvariants(t, c)
}

// keys lists the cached keys from most to least recently used.
func (c *LRU[K, V]) keys() []K {
	c.mu.Lock()
	defer c.mu.Unlock()
	ks := []K{}
	for e := c.root.next; e != &c.root; e = e.next {
		ks = append(ks, e.key)
	}
	return ks
}

// checkInvariants verifies that the list and the map hold the same entries and the total cost adds up.
func checkInvariants[K comparable, V any](t *testing.T, c *LRU[K, V]) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var n int
	var total int64
	for e := c.root.next; e != &c.root; e = e.next {
		if e.next.prev != e {
			t.Fatalf("broken list links at %v", e.key)
		}
		if c.entries[e.key] != e {
			t.Fatalf("list entry %v is not the map's entry", e.key)
		}
		n++
		total += e.cost
	}
	if n != len(c.entries) {
		t.Fatalf("list has %d entries, map %d", n, len(c.entries))
	}
	if total != c.total {
		t.Fatalf("entries cost %d, total says %d", total, c.total)
	}
	if total > c.maxCost {
		t.Fatalf("total cost %d exceeds maxCost %d", total, c.maxCost)
	}
}

func BenchmarkGet(b *testing.B) {
	c := New[string, []byte](1<<20, func(v []byte) int64 { return int64(len(v)) })
	keys := make([]string, 256)
	for i := range keys {
		keys[i] = fmt.Sprintf("%064x", i)
		c.Add(keys[i], make([]byte, 1024))
	}
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			c.Get(keys[i%len(keys)])
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				c.Get(keys[i%len(keys)])
				i++
			}
		})
	})
}

func TestStatsCountLookups(t *testing.T) {
	c := New[string](10, func(int) int64 { return 1 })
	c.Add("a", 1)
	c.Get("a")
	c.Get("a")
	c.Get("b")
	if hits, misses := c.Stats(); hits != 2 || misses != 1 {
		t.Errorf("Stats() = %d hits, %d misses, want 2 and 1", hits, misses)
	}
}
