package blobcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/store/storetest"
)

// countingBlobs is an in-memory store.Blobs that counts the calls it receives.
type countingBlobs struct {
	store.Blobs // List and Delete: not called by these tests
	mu          sync.Mutex
	data        map[string][]byte
	gets        int
	puts        int
	failPuts    bool
}

func newCounting() *countingBlobs { return &countingBlobs{data: map[string][]byte{}} }

func (s *countingBlobs) Put(_ context.Context, data []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.puts++
	if s.failPuts {
		return "", errors.New("backend unavailable")
	}
	h := hashOf(data)
	s.data[h] = bytes.Clone(data)
	return h, nil
}

func (s *countingBlobs) Get(_ context.Context, hash string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gets++
	data, ok := s.data[hash]
	if !ok {
		return nil, fmt.Errorf("get blob %s: %w", hash, store.ErrNotFound)
	}
	return data, nil
}

// calls returns the number of Get and Put calls so far.
func (s *countingBlobs) calls() (gets, puts int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets, s.puts
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// blob returns n bytes of content unique to seed.
func blob(seed string, n int) []byte {
	b := bytes.Repeat([]byte{'.'}, n)
	copy(b, seed)
	return b
}

func mustGet(t *testing.T, b store.Blobs, hash string, want []byte) {
	t.Helper()
	got, err := b.Get(context.Background(), hash)
	if err != nil {
		t.Fatalf("Get(%s): %v", hash, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Get(%s) = %q, want %q", hash, got, want)
	}
}

func TestSecondGetIsServedFromCache(t *testing.T) {
	ctx := context.Background()
	backend := newCounting()
	data := blob("a", 100)
	hash, err := backend.Put(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	c := New(backend, 1<<20)

	mustGet(t, c, hash, data)
	mustGet(t, c, hash, data)
	if gets, _ := backend.calls(); gets != 1 {
		t.Fatalf("backend Get calls = %d, want 1", gets)
	}
}

func TestPutCachesWhatItWrote(t *testing.T) {
	backend := newCounting()
	c := New(backend, 1<<20)
	data := blob("a", 100)
	hash, err := c.Put(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Clone(data)
	copy(data, "caller reuses its buffer")

	mustGet(t, c, hash, want)
	if gets, puts := backend.calls(); gets != 0 || puts != 1 {
		t.Fatalf("backend calls: %d gets, %d puts; want 0 gets, 1 put", gets, puts)
	}
}

func TestErrorsAreNotCached(t *testing.T) {
	ctx := context.Background()
	backend := newCounting()
	c := New(backend, 1<<20)
	data := blob("late", 10)
	hash := hashOf(data)

	for range 2 {
		if _, err := c.Get(ctx, hash); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get of a missing blob = %v, want ErrNotFound", err)
		}
	}
	if gets, _ := backend.calls(); gets != 2 {
		t.Fatalf("backend Get calls = %d, want 2: not-found must not be cached", gets)
	}

	backend.failPuts = true
	if _, err := c.Put(ctx, data); err == nil {
		t.Fatal("Put succeeded though the backend failed")
	}
	if _, err := c.Get(ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after a failed Put = %v, want ErrNotFound", err)
	}

	// Put behind the cache's back: the next Get finds it.
	backend.failPuts = false
	if _, err := backend.Put(ctx, data); err != nil {
		t.Fatal(err)
	}
	mustGet(t, c, hash, data)
}

func TestEviction(t *testing.T) {
	const size = 100
	entry := int64(size + hashLen)
	tests := []struct {
		name     string
		maxBytes int64
		blobs    int   // of size bytes each, read oldest first
		wantHits []int // indexes still cached after the first pass
	}{
		{"everything fits", 3 * entry, 3, []int{0, 1, 2}},
		{"one too many evicts the oldest", 3 * entry, 4, []int{1, 2, 3}},
		{"hash counts towards the bound", 3*entry - 1, 3, []int{1, 2}},
		{"zero caches nothing", 0, 2, nil},
		{"blob larger than the cache", entry - 1, 1, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			backend := newCounting()
			var hashes []string
			var contents [][]byte
			for i := range tt.blobs {
				data := blob(fmt.Sprint(i), size)
				h, err := backend.Put(ctx, data)
				if err != nil {
					t.Fatal(err)
				}
				hashes, contents = append(hashes, h), append(contents, data)
			}
			c := New(backend, tt.maxBytes)
			lru := c.(*blobs).cache
			for i, h := range hashes {
				mustGet(t, c, h, contents[i])
				if lru.Cost() > tt.maxBytes {
					t.Fatalf("cache holds %d bytes, more than %d", lru.Cost(), tt.maxBytes)
				}
			}
			// Read again from the newest, so that the misses, which come last, evict nothing still to be read.
			var hits []int
			for i := len(hashes) - 1; i >= 0; i-- {
				before, _ := backend.calls()
				mustGet(t, c, hashes[i], contents[i])
				if after, _ := backend.calls(); after == before {
					hits = append([]int{i}, hits...)
				}
			}
			if fmt.Sprint(hits) != fmt.Sprint(tt.wantHits) {
				t.Fatalf("served from cache: %v, want %v", hits, tt.wantHits)
			}
		})
	}
}

// TestContract runs the blob contract through the cache around the embedded
// backend, with a cache too small for most blobs and one that holds them all.
func TestContract(t *testing.T) {
	for _, maxBytes := range []int64{1 << 10, 64 << 20} {
		t.Run(fmt.Sprintf("cache %d bytes", maxBytes), func(t *testing.T) {
			storetest.RunBlobs(t, func(t *testing.T) store.Blobs {
				b := mem.New()
				return New(b.Blobs, maxBytes)
			})
		})
	}
}
