package bolt

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) store.Backend { return openTemp(t, t.TempDir()) })
}

func openTemp(tb testing.TB, dir string) store.Backend {
	tb.Helper()
	b, err := Open(dir)
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { b.Close() })
	return b
}

func TestOpenCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "data")
	b := openTemp(t, dir)
	if _, err := b.Blobs.Put(context.Background(), []byte("x")); err != nil {
		t.Fatalf("Put: %v", err)
	}
}

func TestOpenWhileInUse(t *testing.T) {
	dir := t.TempDir()
	openTemp(t, dir)
	_, err := Open(dir)
	if err == nil || !strings.Contains(err.Error(), "data directory is in use by another tuningbox process") {
		t.Fatalf("second Open = %v, want an in-use error", err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	k := store.Key{Partition: "p", Sort: "s"}

	b, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Index.Write(ctx, store.Put(k, []byte("v"))); err != nil {
		t.Fatal(err)
	}
	hash, err := b.Blobs.Put(ctx, []byte("blob"))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	b = openTemp(t, dir)
	it, err := b.Index.Get(ctx, k)
	if err != nil || string(it.Value) != "v" || it.Revision != 1 {
		t.Fatalf("Get after reopen = %+v, %v", it, err)
	}
	data, err := b.Blobs.Get(ctx, hash)
	if err != nil || string(data) != "blob" {
		t.Fatalf("blob after reopen = %q, %v", data, err)
	}
}

// TestLimits covers the contract's size limits, which this backend enforces so
// that data accepted locally also fits DynamoDB.
func TestLimits(t *testing.T) {
	ctx := context.Background()
	idx := openTemp(t, t.TempDir()).Index
	long := strings.Repeat("k", store.MaxKeyLen+1)
	tests := []struct {
		name    string
		op      store.Op
		wantErr bool
	}{
		{"longest partition", store.Put(store.Key{Partition: long[1:], Sort: "s"}, nil), false},
		{"longest sort key", store.Put(store.Key{Partition: "p", Sort: long[1:]}, nil), false},
		{"largest value", store.Put(store.Key{Partition: "p", Sort: "big"}, bytes.Repeat([]byte("v"), store.MaxValueSize)), false},
		{"partition too long", store.Put(store.Key{Partition: long, Sort: "s"}, nil), true},
		{"sort key too long", store.Put(store.Key{Partition: "p", Sort: long}, nil), true},
		{"value too large", store.Put(store.Key{Partition: "p", Sort: "s"}, bytes.Repeat([]byte("v"), store.MaxValueSize+1)), true},
		{"unknown op kind", store.Op{Kind: store.OpCheck + 1, Key: store.Key{Partition: "p", Sort: "s"}}, true},
		{"unknown condition kind", store.Check(store.Key{Partition: "p", Sort: "s"}, store.Cond{Kind: store.RevisionIs + 1}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := idx.Write(ctx, tt.op)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Write = %v, want error: %v", err, tt.wantErr)
			}
			if errors.Is(err, store.ErrConflict) {
				t.Fatalf("Write = %v: an invalid batch is not a conflict", err)
			}
		})
	}
	if _, err := idx.BatchGet(ctx, make([]store.Key, store.MaxBatchGet+1)); err == nil {
		t.Errorf("BatchGet of %d keys succeeded", store.MaxBatchGet+1)
	}
}

func TestPrefixEnd(t *testing.T) {
	tests := []struct {
		in, want []byte
	}{
		{[]byte("ab"), []byte("ac")},
		{[]byte{'a', 0xff}, []byte("b")},
		{[]byte{0xff, 0xff}, nil},
		{[]byte{}, nil},
	}
	for _, tt := range tests {
		if got := prefixEnd(tt.in); !bytes.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("prefixEnd(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// benchIndex returns an index holding 10,000 items of 512 bytes over 100 partitions, and their keys.
func benchIndex(b *testing.B) (store.Index, []store.Key) {
	idx := openTemp(b, b.TempDir()).Index
	var keys []store.Key
	for p := range 100 {
		ops := make([]store.Op, 0, store.MaxWriteBatch)
		for s := range store.MaxWriteBatch {
			k := store.Key{Partition: "bench#" + store.SortID(int64(p)), Sort: store.SortID(int64(s))}
			keys = append(keys, k)
			ops = append(ops, store.Put(k, bytes.Repeat([]byte{'v'}, 512)))
		}
		if err := idx.Write(context.Background(), ops...); err != nil {
			b.Fatal(err)
		}
	}
	return idx, keys
}

func BenchmarkGet(b *testing.B) {
	idx, keys := benchIndex(b)
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if _, err := idx.Get(ctx, keys[i%len(keys)]); err != nil {
				b.Fatal(err)
			}
			i += 7919 // a prime stride spreads reads over the pages
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if _, err := idx.Get(ctx, keys[i%len(keys)]); err != nil {
					b.Error(err)
					return
				}
				i += 7919
			}
		})
	})
}

// BenchmarkBatchGet10 reads ten keys of one partition, the shape of a Hiera lookup.
func BenchmarkBatchGet10(b *testing.B) {
	idx, keys := benchIndex(b)
	ctx := context.Background()
	batch := func(i int) []store.Key {
		start := (i * 7919) % (len(keys) - 10)
		return keys[start : start+10]
	}
	b.Run("serial", func(b *testing.B) {
		i := 0
		for b.Loop() {
			if items, err := idx.BatchGet(ctx, batch(i)); err != nil || len(items) != 10 {
				b.Fatal(len(items), err)
			}
			i++
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				if items, err := idx.BatchGet(ctx, batch(i)); err != nil || len(items) != 10 {
					b.Error(len(items), err)
					return
				}
				i++
			}
		})
	})
}

// TestBlobsOfUnknownHistoryKept: a store that already holds blobs when it is
// first started with collection (InitGC) may hold blobs of a build that kept
// no references; those are never collected, orphans made afterwards are.
func TestBlobsOfUnknownHistoryKept(t *testing.T) {
	ctx := context.Background()
	b := openTemp(t, t.TempDir())
	old, err := b.Blobs.Put(ctx, []byte("a version's blob, referenced the old way"))
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	if err := store.InitGC(ctx, b.Index, b.Blobs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	orphan, err := b.Blobs.Put(ctx, []byte("an orphan of this build"))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0)
	if err != nil || rep.Removed != 1 {
		t.Fatalf("sweep: %+v, %v", rep, err)
	}
	if _, err := b.Blobs.Get(ctx, old); err != nil {
		t.Fatalf("a blob of unknown history was collected: %v", err)
	}
	if _, err := b.Blobs.Get(ctx, orphan); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the orphan made after the epoch: %v", err)
	}
}

// TestBulkPutsCommitTogether: blob puts marked store.WithBulk, made at once
// and repeating each other's content, are all stored, each content once.
func TestBulkPutsCommitTogether(t *testing.T) {
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := store.WithBulk(context.Background())
	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if _, err := b.Blobs.Put(ctx, []byte(strconv.Itoa(i%8))); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	stored := 0
	if err := b.Blobs.List(ctx, func(string, time.Time) error { stored++; return nil }); err != nil || stored != 8 {
		t.Fatalf("%d blobs stored (%v), want 8", stored, err)
	}
	for i := range 8 {
		if got, err := b.Blobs.Get(ctx, store.HashOf([]byte(strconv.Itoa(i)))); err != nil || string(got) != strconv.Itoa(i) {
			t.Fatalf("blob %d: %q, %v", i, got, err)
		}
	}
}

// TestBulkWritesKeepTheirConditions: index writes marked store.WithBulk and
// made at once may commit together, yet each keeps its conditions: of the
// writes creating one key, exactly one succeeds, the others are ErrConflict
// and leave nothing of their batch.
func TestBulkWritesKeepTheirConditions(t *testing.T) {
	b, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := store.WithBulk(context.Background())
	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		succeeded = map[string]int{}
	)
	for i := range 32 {
		wg.Go(func() {
			key := strconv.Itoa(i % 4)
			err := b.Index.Write(ctx,
				store.Create(store.Key{Partition: "bulk", Sort: key}, []byte(strconv.Itoa(i))),
				store.Put(store.Key{Partition: "bulk-by", Sort: strconv.Itoa(i)}, []byte(key)))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				succeeded[key]++
			case !errors.Is(err, store.ErrConflict):
				t.Error(err)
			}
		})
	}
	wg.Wait()
	items, err := b.Index.Query(ctx, store.Query{Partition: "bulk-by"})
	if err != nil || len(items) != 4 || len(succeeded) != 4 {
		t.Fatalf("%d batches committed (%v), winners %v; want one per key", len(items), err, succeeded)
	}
	for key, n := range succeeded {
		if n != 1 {
			t.Errorf("key %s created %d times", key, n)
		}
	}
}
