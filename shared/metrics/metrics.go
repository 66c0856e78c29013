// Package metrics is the neutral side of tuningbox's metrics: the domain
// packages and the store count through it (Counter, or a value read when the
// metrics are collected), and the app exports one Registry per handler, as
// Prometheus text on the local server and as CloudWatch Embedded Metric
// Format lines on Lambda. It imports neither Prometheus nor AWS.
//
// Counting costs one atomic add; values read at collection (cache statistics,
// waiters) cost nothing until someone collects. A nil *Registry takes every
// registration and keeps nothing, so code counts the same whether or not the
// app wired a registry.
package metrics

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
)

// Counter is a count that only grows, safe for concurrent use.
type Counter struct{ n atomic.Uint64 }

// Inc adds one.
func (c *Counter) Inc() { c.n.Add(1) }

// Add adds n.
func (c *Counter) Add(n uint64) { c.n.Add(n) }

// Value returns the count.
func (c *Counter) Value() uint64 { return c.n.Load() }

// Kind is what a family's values mean.
type Kind int

const (
	// KindCounter values only grow (Prometheus counters; sent to CloudWatch as the change since the last flush).
	KindCounter Kind = iota
	// KindGauge values are a current level (waiters).
	KindGauge
)

// Family is a metric name with its help text and label names.
type Family struct {
	Name, Help string
	Kind       Kind
	Labels     []string
}

// Series is one labelled value of a family.
type Series struct {
	// Values are the label values, in the order of the family's Labels.
	Values []string
	Read   func() float64
}

type family struct {
	Family
	series []Series
	// counters are the family's Counters by their joined label values.
	counters map[string]*Counter
}

// Registry holds the families of one handler's metrics.
type Registry struct {
	mu       sync.Mutex
	families []*family
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// family returns the family of name, declaring it at its first use. A name
// declared again with another kind or other labels is a programming error.
func (r *Registry) family(name, help string, kind Kind, labels []string) *family {
	for _, f := range r.families {
		if f.Name == name {
			if f.Kind != kind || !slices.Equal(f.Labels, labels) {
				panic(fmt.Sprintf("metrics: %s declared again with other labels or kind", name))
			}
			return f
		}
	}
	f := &family{Family: Family{Name: name, Help: help, Kind: kind, Labels: labels}, counters: map[string]*Counter{}}
	r.families = append(r.families, f)
	return f
}

func checkValues(name string, labels, values []string) {
	if len(labels) != len(values) {
		panic(fmt.Sprintf("metrics: %s takes labels %v, given %d values", name, labels, len(values)))
	}
}

// Counter returns the counter of name with the given label values, the same
// one for the same values: resolve it once, then count with it.
func (r *Registry) Counter(name, help string, labels []string, values ...string) *Counter {
	checkValues(name, labels, values)
	if r == nil {
		return &Counter{}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.family(name, help, KindCounter, labels)
	key := fmt.Sprint(values)
	if c, ok := f.counters[key]; ok {
		return c
	}
	c := &Counter{}
	f.counters[key] = c
	f.series = append(f.series, Series{Values: slices.Clone(values), Read: func() float64 { return float64(c.Value()) }})
	return c
}

// Func registers a series whose value read gives at collection: a count kept
// elsewhere (KindCounter) or a current level (KindGauge).
func (r *Registry) Func(name, help string, kind Kind, labels []string, read func() float64, values ...string) {
	checkValues(name, labels, values)
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f := r.family(name, help, kind, labels)
	f.series = append(f.series, Series{Values: slices.Clone(values), Read: read})
}

// CacheStats is a cache that counts its lookups (shared/cache.LRU).
type CacheStats interface {
	Stats() (hits, misses uint64)
}

// The cache families.
const (
	CacheHits   = "tuningbox_cache_hits_total"
	CacheMisses = "tuningbox_cache_misses_total"
)

// Cache registers the hits and misses of the cache called name.
func (r *Registry) Cache(name string, c CacheStats) {
	labels := []string{"cache"}
	r.Func(CacheHits, "Lookups a cache answered.", KindCounter, labels, func() float64 { h, _ := c.Stats(); return float64(h) }, name)
	r.Func(CacheMisses, "Lookups a cache could not answer.", KindCounter, labels, func() float64 { _, m := c.Stats(); return float64(m) }, name)
}

// Each calls fn with every family and its series' values, in the order the
// families were first declared.
func (r *Registry) Each(fn func(f Family, s Series, value float64)) {
	if r == nil {
		return
	}
	r.mu.Lock()
	families := make([]family, len(r.families))
	for i, f := range r.families {
		families[i] = family{Family: f.Family, series: slices.Clone(f.series)}
	}
	r.mu.Unlock()
	for _, f := range families {
		for _, s := range f.series {
			fn(f.Family, s, s.Read())
		}
	}
}

// WatchersWaiting is the family of long polls held open, by kind (document
// reads with ?wait=, agents' claims with ?wait=).
const (
	WatchersWaiting     = "tuningbox_watchers_waiting"
	WatchersWaitingHelp = "Long polls (?wait=) waiting for a change, by kind."
)
