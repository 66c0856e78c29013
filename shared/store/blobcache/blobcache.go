// Package blobcache keeps recently used blobs in memory in front of a store.Blobs.
// Blobs are immutable and addressed by their content's hash, so a cached blob
// can never be stale and needs no invalidation.
package blobcache

import (
	"bytes"
	"context"
	"time"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/store"
)

// hashLen is the length of a hex SHA-256, the key every cached blob is held under.
const hashLen = 64

type blobs struct {
	next  store.Blobs
	cache *cache.LRU[string, []byte]
}

// New returns b behind a read-through cache holding at most maxBytes of blobs
// (counting their hashes too). A maxBytes of 0 caches nothing.
func New(b store.Blobs, maxBytes int64) store.Blobs {
	return &blobs{
		next:  b,
		cache: cache.New[string, []byte](maxBytes, func(data []byte) int64 { return int64(len(data)) + hashLen }),
	}
}

// Put stores data in the underlying store and caches it, since content just
// written is often read back soon.
func (c *blobs) Put(ctx context.Context, data []byte) (string, error) {
	hash, err := c.next.Put(ctx, data)
	if err != nil {
		return "", err
	}
	c.cache.Add(hash, bytes.Clone(data)) // the caller may reuse its slice
	return hash, nil
}

// Get returns the cached content of hash or reads it from the underlying store.
// Errors, ErrNotFound included, are not cached: the blob may be put later.
func (c *blobs) Get(ctx context.Context, hash string) ([]byte, error) {
	if data, ok := c.cache.Get(hash); ok {
		return data, nil
	}
	data, err := c.next.Get(ctx, hash)
	if err != nil {
		return nil, err
	}
	c.cache.Add(hash, data)
	return data, nil
}

func (c *blobs) List(ctx context.Context, fn func(hash string, created time.Time) error) error {
	return c.next.List(ctx, fn)
}

// Delete removes the blob from the underlying store and from the cache.
func (c *blobs) Delete(ctx context.Context, hash string) error {
	c.cache.Remove(hash)
	return c.next.Delete(ctx, hash)
}

// Stats returns the cache's hits and misses (metrics.CacheStats).
func (c *blobs) Stats() (hits, misses uint64) { return c.cache.Stats() }
