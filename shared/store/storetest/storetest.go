// Package storetest is the storage contract suite: every store.Backend runs it
// (in the manner of thanos objstore's AcceptanceTest and vault's ExerciseBackend).
//
// The suite is safe to run repeatedly against one shared, persistent table or
// bucket: every partition it touches starts with a random per-run prefix, and
// every blob it stores except the empty one carries that prefix in its content.
package storetest

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Run runs the whole contract suite. newBackend is called once per case; it
// should register the backend's cleanup (Close) with t.Cleanup.
func Run(t *testing.T, newBackend func(t *testing.T) store.Backend) {
	t.Run("Index", func(t *testing.T) {
		RunIndex(t, func(t *testing.T) store.Index { return newBackend(t).Index })
	})
	t.Run("Blobs", func(t *testing.T) {
		RunBlobs(t, func(t *testing.T) store.Blobs { return newBackend(t).Blobs })
	})
	t.Run("GC", func(t *testing.T) {
		ns := runID(t) + "/gc/"
		t.Run("OrphanBeforeFirstSweep", func(t *testing.T) { testOrphanBeforeFirstSweep(t, newBackend(t), ns) })
		t.Run("SweepBetweenPutAndCommit", func(t *testing.T) { testSweepBetweenPutAndCommit(t, newBackend(t), ns) })
		t.Run("SweepRacingWrites", func(t *testing.T) { testSweepRacingWrites(t, newBackend(t), ns) })
	})
}

// testOrphanBeforeFirstSweep: a store started as a server or function starts
// (store.InitGC) collects an orphan made before its first sweep, once the
// grace period has passed: the first sweep is no barrier.
func testOrphanBeforeFirstSweep(t *testing.T, b store.Backend, ns string) {
	ctx := t.Context()
	if err := store.InitGC(ctx, b.Index, b.Blobs); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // object stores keep times in whole seconds
	orphan := []byte(ns + "orphan of a crashed write, before any sweep")
	hash, err := b.Blobs.Put(ctx, orphan)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	rep, err := store.CollectGarbage(ctx, b.Index, b.Blobs, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Blobs.Get(ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the first sweep kept an orphan older than the grace period (%+v): %v", rep, err)
	}
}

// testSweepBetweenPutAndCommit is the race at its worst, step by step: an old
// orphan's content is written again; its put finds the blob stored, then a
// sweep removes it before the write commits. The commit must fail (and the
// retry store the blob again), or a committed item would name a missing blob.
func testSweepBetweenPutAndCommit(t *testing.T, b store.Backend, ns string) {
	ctx := t.Context()
	if _, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil { // sets the epoch
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // object stores keep times in whole seconds
	data := []byte(ns + "orphan written again")
	if _, err := b.Blobs.Put(ctx, data); err != nil { // an abandoned write's orphan
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	ref, err := store.PutBlob(ctx, b.Index, b.Blobs, data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := store.CollectGarbage(ctx, b.Index, b.Blobs, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Blobs.Get(ctx, ref.Hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the sweep kept the unreferenced blob (%+v): %v", rep, err)
	}
	item := store.Create(store.Key{Partition: ns + "late", Sort: "1"}, []byte(ref.Hash))
	if err := b.Index.Write(ctx, append([]store.Op{item}, ref.Ops...)...); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit after the blob was swept: %v, want ErrConflict", err)
	}
	if ref, err = store.PutBlob(ctx, b.Index, b.Blobs, data); err != nil {
		t.Fatal(err)
	}
	if err := b.Index.Write(ctx, append([]store.Op{item}, ref.Ops...)...); err != nil {
		t.Fatalf("commit after a new PutBlob: %v", err)
	}
	if _, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Blobs.Get(ctx, ref.Hash); err != nil {
		t.Fatalf("a referenced blob after a sweep: %v", err)
	}
}

// slowPuts widens the window between a writer's blob put and its commit,
// where a sweep may find the blob unreferenced.
type slowPuts struct{ store.Blobs }

func (s slowPuts) Put(ctx context.Context, data []byte) (string, error) {
	hash, err := s.Blobs.Put(ctx, data)
	time.Sleep(5 * time.Millisecond)
	return hash, err
}

// testSweepRacingWrites: writers store blobs and commit items referencing them
// (store.PutBlob), half of the time abandoning the write after the blob put
// (an orphan), reusing contents so that a content collected as an orphan is
// written again, while sweeps with a 50 ms grace period run all along. A committed
// item's blob is never removed; after a last sweep no orphan of the run is left.
func testSweepRacingWrites(t *testing.T, b store.Backend, ns string) {
	ctx := t.Context()
	if _, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil { // sets the epoch
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // object stores keep times in whole seconds
	const writers, writes, contents = 4, 30, 24
	content := func(i int) []byte { return []byte(fmt.Sprintf("%scontent-%d", ns, i)) }
	var (
		mu        sync.Mutex
		committed = map[string]bool{} // hash -> referenced by a committed item
		seq       atomic.Int64
	)
	done := make(chan struct{})
	var sweeps atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			// A short grace period: fresh blobs get to their commit, while
			// orphans re-put by a later write are swept under its feet.
			if _, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 50*time.Millisecond); err != nil {
				t.Errorf("sweep: %v", err)
				return
			}
			sweeps.Add(1)
		}
	})
	var writersWG sync.WaitGroup
	for w := range writers {
		writersWG.Go(func() {
			for n := range writes {
				data := content((w*7 + n*5) % contents)
				abandon := n%3 != 2 // contents are abandoned (orphans) before they are committed
				err := store.RetryConflicts(ctx, "gc test write", func() error {
					ref, err := store.PutBlob(ctx, b.Index, slowPuts{b.Blobs}, data)
					if err != nil || abandon {
						return err
					}
					item := store.Create(store.Key{Partition: ns + "items", Sort: fmt.Sprint(seq.Add(1))}, []byte(ref.Hash))
					if err := b.Index.Write(ctx, append([]store.Op{item}, ref.Ops...)...); err != nil {
						return err
					}
					mu.Lock()
					committed[ref.Hash] = true
					mu.Unlock()
					return nil
				})
				if err != nil {
					t.Errorf("writer %d write %d: %v", w, n, err)
					return
				}
			}
		})
	}
	writersWG.Wait()
	close(done)
	wg.Wait()
	items, err := b.Index.Query(ctx, store.Query{Partition: ns + "items"})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if _, err := b.Blobs.Get(ctx, string(it.Value)); err != nil {
			t.Fatalf("the blob of committed item %s: %v", it.Sort, err)
		}
	}
	rep, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	orphans := 0
	for i := range contents {
		hash := store.HashOf(content(i))
		_, err := b.Blobs.Get(ctx, hash)
		switch {
		case committed[hash] && err != nil:
			t.Fatalf("referenced blob %s after the last sweep: %v", hash, err)
		case !committed[hash] && err == nil:
			orphans++
		}
	}
	if orphans > 0 {
		t.Fatalf("%d orphans of the run left after the last sweep (%+v)", orphans, rep)
	}
	t.Logf("%d committed items, %d sweeps raced them; last sweep %+v", len(items), sweeps.Load(), rep)
}

// RunIndex runs the Index cases; newIndex is called once per case.
func RunIndex(t *testing.T, newIndex func(t *testing.T) store.Index) {
	run := runID(t)
	for _, c := range indexCases {
		t.Run(c.name, func(t *testing.T) {
			c.test(t, &indexFixture{ctx: t.Context(), idx: newIndex(t), ns: run + "/" + c.name + "/"})
		})
	}
}

// RunBlobs runs the Blobs cases; newBlobs is called once per case.
func RunBlobs(t *testing.T, newBlobs func(t *testing.T) store.Blobs) {
	run := runID(t)
	for _, c := range blobCases {
		t.Run(c.name, func(t *testing.T) {
			c.test(t, &blobFixture{ctx: t.Context(), blobs: newBlobs(t), ns: run + "/" + c.name + "/"})
		})
	}
}

// runID returns a random prefix that keeps this run's data apart from other runs'.
func runID(t *testing.T) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "storetest-" + hex.EncodeToString(b)
}

type indexFixture struct {
	ctx context.Context
	idx store.Index
	ns  string // prefix of every partition of this case
}

// key returns the key of sort in this case's partition named partition.
func (f *indexFixture) key(partition, sort string) store.Key {
	return store.Key{Partition: f.ns + partition, Sort: sort}
}

func (f *indexFixture) write(t *testing.T, ops ...store.Op) {
	t.Helper()
	if err := f.idx.Write(f.ctx, ops...); err != nil {
		t.Fatalf("Write: %v", err)
	}
}

// wantConflict asserts that ops fail with ErrConflict.
func (f *indexFixture) wantConflict(t *testing.T, ops ...store.Op) {
	t.Helper()
	if err := f.idx.Write(f.ctx, ops...); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Write = %v, want ErrConflict", err)
	}
}

// wantInvalid asserts that ops are rejected with an error that is not a conflict:
// callers retry conflicts, so an invalid batch reported as one would loop forever.
func (f *indexFixture) wantInvalid(t *testing.T, ops ...store.Op) {
	t.Helper()
	err := f.idx.Write(f.ctx, ops...)
	if err == nil {
		t.Fatal("Write of an invalid batch succeeded")
	}
	if errors.Is(err, store.ErrConflict) {
		t.Fatalf("Write of an invalid batch = %v, want an error other than ErrConflict", err)
	}
}

// want asserts that the item at k has value and revision.
func (f *indexFixture) want(t *testing.T, k store.Key, value string, rev int64) {
	t.Helper()
	it, err := f.idx.Get(f.ctx, k)
	if err != nil {
		t.Fatalf("Get(%v): %v", k, err)
	}
	if it.Key != k || string(it.Value) != value || it.Revision != rev {
		t.Fatalf("Get(%v) = {%v %q rev %d}, want {%v %q rev %d}", k, it.Key, it.Value, it.Revision, k, value, rev)
	}
}

// wantMissing asserts that k does not exist.
func (f *indexFixture) wantMissing(t *testing.T, k store.Key) {
	t.Helper()
	if it, err := f.idx.Get(f.ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(%v) = %+v, %v; want ErrNotFound", k, it, err)
	}
}

var indexCases = []struct {
	name string
	test func(t *testing.T, f *indexFixture)
}{
	{"GetMissing", testGetMissing},
	{"ValuesRoundTrip", testValuesRoundTrip},
	{"CreateTwiceConflicts", testCreateTwice},
	{"RevisionIncrements", testRevisionIncrements},
	{"UpdateWrongRevision", testUpdateWrongRevision},
	{"MustExist", testMustExist},
	{"DeleteMissing", testDeleteMissing},
	{"DeleteAt", testDeleteAt},
	{"Check", testCheck},
	{"BatchIsAtomic", testBatchIsAtomic},
	{"BatchAcrossPartitionsIsAtomic", testBatchAcrossPartitions},
	{"BatchKeyTwice", testBatchKeyTwice},
	{"BatchTooLarge", testBatchTooLarge},
	{"ValueTooLarge", testValueTooLarge},
	{"InvalidKeys", testInvalidKeys},
	{"Query", testQuery},
	{"PartitionIsolation", testPartitionIsolation},
	{"BatchGet", testBatchGet},
	{"ValuesAreCopies", testValuesAreCopies},
	{"ConcurrentCompareAndSwap", testConcurrentCAS},
	{"ConcurrentNextID", testConcurrentNextID},
	{"IDBounds", testIDBounds},
	{"Generation", testGeneration},
}

// testGeneration: an index that says it is its items' only writer
// (store.Generational) changes its generation with every write and with
// nothing else, or readers would keep what a write changed.
func testGeneration(t *testing.T, f *indexFixture) {
	g, ok := f.idx.(store.Generational)
	if !ok {
		t.Skip("the index has other writers: no generation")
	}
	k := f.key("p", "a")
	before := g.Generation()
	f.write(t, store.Create(k, []byte(`1`)))
	afterWrite := g.Generation()
	if afterWrite == before {
		t.Fatalf("generation %d unchanged by a write", before)
	}
	f.want(t, k, `1`, 1)
	if _, err := f.idx.BatchGet(f.ctx, []store.Key{k}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.idx.Query(f.ctx, store.Query{Partition: k.Partition}); err != nil {
		t.Fatal(err)
	}
	if got := g.Generation(); got != afterWrite {
		t.Fatalf("generation %d -> %d by reads alone", afterWrite, got)
	}
	f.write(t, store.Delete(k))
	if got := g.Generation(); got == afterWrite {
		t.Fatalf("generation %d unchanged by a delete", got)
	}
}

func testGetMissing(t *testing.T, f *indexFixture) {
	f.wantMissing(t, f.key("p", "missing"))
	f.write(t, store.Put(f.key("p", "present"), []byte("v")))
	f.wantMissing(t, f.key("p", "missing"))
	f.wantMissing(t, f.key("other", "present"))
}

func testValuesRoundTrip(t *testing.T, f *indexFixture) {
	values := map[string][]byte{
		"empty":  {},
		"json":   []byte(`{"a":[1,2,{"b":null}]}`),
		"binary": {0, 1, 0xfe, 0xff, 0},
		"utf8":   []byte("grüße ☃"),
		"max":    bytes.Repeat([]byte("v"), 350<<10),
	}
	for name, v := range values {
		f.write(t, store.Put(f.key("p", name), v))
	}
	for name, v := range values {
		f.want(t, f.key("p", name), string(v), 1)
	}
}

func testCreateTwice(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	f.write(t, store.Create(k, []byte("first")))
	f.wantConflict(t, store.Create(k, []byte("second")))
	f.want(t, k, "first", 1)
}

func testRevisionIncrements(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	f.write(t, store.Create(k, []byte("v1")))
	f.want(t, k, "v1", 1)
	f.write(t, store.Put(k, []byte("v2")))
	f.want(t, k, "v2", 2)
	f.write(t, store.Update(k, []byte("v3"), 2))
	f.want(t, k, "v3", 3)
	f.write(t, store.Put(k, []byte("v3")))
	f.want(t, k, "v3", 4) // an unchanged value still counts as a write
	f.write(t, store.Delete(k))
	f.write(t, store.Put(k, []byte("again")))
	f.want(t, k, "again", 1) // a re-created item starts over
}

func testUpdateWrongRevision(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	f.write(t, store.Create(k, []byte("v1")))
	f.write(t, store.Update(k, []byte("v2"), 1))
	f.wantConflict(t, store.Update(k, []byte("stale"), 1))
	f.wantConflict(t, store.Update(k, []byte("future"), 3))
	f.wantConflict(t, store.Update(k, []byte("zero"), 0))
	f.want(t, k, "v2", 2)
	missing := f.key("p", "missing")
	f.wantConflict(t, store.Update(missing, []byte("v"), 1))
	f.wantConflict(t, store.Update(missing, []byte("v"), 0))
	f.wantMissing(t, missing)
}

func testMustExist(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	mustExist := store.Op{Kind: store.OpPut, Key: k, Value: []byte("v"), Cond: store.Cond{Kind: store.MustExist}}
	f.wantConflict(t, mustExist)
	f.wantMissing(t, k)
	f.write(t, store.Put(k, []byte("v0")))
	f.write(t, mustExist)
	f.want(t, k, "v", 2)
}

func testDeleteMissing(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	f.write(t, store.Delete(k))
	f.wantMissing(t, k)
	f.write(t, store.Put(k, []byte("v")))
	f.write(t, store.Delete(k))
	f.wantMissing(t, k)
	f.write(t, store.Delete(k))
}

func testDeleteAt(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	f.write(t, store.Put(k, []byte("v1")), store.Put(f.key("p", "other"), nil))
	f.write(t, store.Put(k, []byte("v2")))
	f.wantConflict(t, store.DeleteAt(k, 1))
	f.want(t, k, "v2", 2)
	f.write(t, store.DeleteAt(k, 2))
	f.wantMissing(t, k)
	f.wantConflict(t, store.DeleteAt(k, 2))
	f.want(t, f.key("p", "other"), "", 1)
}

func testCheck(t *testing.T, f *indexFixture) {
	tests := []struct {
		name        string
		guardExists bool // at revision 1
		cond        store.Cond
		wantPass    bool
	}{
		{"always on missing", false, store.Cond{Kind: store.Always}, true},
		{"must exist on missing", false, store.Cond{Kind: store.MustExist}, false},
		{"must not exist on missing", false, store.Cond{Kind: store.MustNotExist}, true},
		{"revision on missing", false, store.Cond{Kind: store.RevisionIs, Revision: 1}, false},
		{"always", true, store.Cond{Kind: store.Always}, true},
		{"must exist", true, store.Cond{Kind: store.MustExist}, true},
		{"must not exist", true, store.Cond{Kind: store.MustNotExist}, false},
		{"right revision", true, store.Cond{Kind: store.RevisionIs, Revision: 1}, true},
		{"wrong revision", true, store.Cond{Kind: store.RevisionIs, Revision: 2}, false},
	}
	for _, tt := range tests {
		guard, target := f.key("p", "guard "+tt.name), f.key("p", "target "+tt.name)
		if tt.guardExists {
			f.write(t, store.Put(guard, []byte("g")))
		}
		err := f.idx.Write(f.ctx, store.Check(guard, tt.cond), store.Put(target, []byte("t")))
		switch {
		case tt.wantPass && err != nil:
			t.Fatalf("%s: Write = %v, want success", tt.name, err)
		case !tt.wantPass && !errors.Is(err, store.ErrConflict):
			t.Fatalf("%s: Write = %v, want ErrConflict", tt.name, err)
		}
		if tt.wantPass {
			f.want(t, target, "t", 1)
		} else {
			f.wantMissing(t, target)
		}
		// Check writes nothing.
		if tt.guardExists {
			f.want(t, guard, "g", 1)
		} else {
			f.wantMissing(t, guard)
		}
	}
}

func testBatchIsAtomic(t *testing.T, f *indexFixture) {
	a, b, c := f.key("p", "a"), f.key("p", "b"), f.key("p", "c")
	f.write(t, store.Put(c, []byte("c1")))
	// The failing condition comes last, so a backend applying ops one by one would show it.
	f.wantConflict(t,
		store.Create(a, []byte("a")),
		store.Put(b, []byte("b")),
		store.Update(c, []byte("c2"), 7),
	)
	f.wantMissing(t, a)
	f.wantMissing(t, b)
	f.want(t, c, "c1", 1)
	f.wantConflict(t,
		store.Delete(c),
		store.Create(a, []byte("a")),
		store.Check(b, store.Cond{Kind: store.MustExist}),
	)
	f.want(t, c, "c1", 1)
	f.wantMissing(t, a)
	// And the same batch with every condition holding applies every op.
	f.write(t,
		store.Create(a, []byte("a")),
		store.Put(b, []byte("b")),
		store.Update(c, []byte("c2"), 1),
	)
	f.want(t, a, "a", 1)
	f.want(t, b, "b", 1)
	f.want(t, c, "c2", 2)
}

// testBatchAcrossPartitions: one batch spans partitions as a ConfigDB
// document write does (the version item naming its writer, the head moved
// conditionally, the audit record under every log partition it is listed
// in): a failing condition in any partition applies nothing in any, and a
// batch whose conditions hold applies everything.
func testBatchAcrossPartitions(t *testing.T, f *indexFixture) {
	version, head := f.key("versions", "00000002"), f.key("heads", "values")
	all, byEnv := f.key("audit#all", "record-1"), f.key("audit#env#1", "record-1")
	written := `{"version":2,"written_by":{"principal":"ops","request_id":"r1"}}`
	f.write(t, store.Put(head, []byte(`{"version":1}`)))
	f.write(t, store.Put(byEnv, []byte("taken")))
	f.wantConflict(t,
		store.Create(version, []byte(written)),
		store.Update(head, []byte(written), 1),
		store.Create(all, []byte("record")),
		store.Create(byEnv, []byte("record")),
	)
	f.wantMissing(t, version)
	f.wantMissing(t, all)
	f.want(t, head, `{"version":1}`, 1)
	f.want(t, byEnv, "taken", 1)
	f.write(t, store.Delete(byEnv))
	f.write(t,
		store.Create(version, []byte(written)),
		store.Update(head, []byte(written), 1),
		store.Create(all, []byte("record")),
		store.Create(byEnv, []byte("record")),
	)
	f.want(t, version, written, 1)
	f.want(t, head, written, 2)
	f.want(t, all, "record", 1)
	f.want(t, byEnv, "record", 1)
}

func testBatchKeyTwice(t *testing.T, f *indexFixture) {
	a, b := f.key("p", "a"), f.key("p", "b")
	f.wantInvalid(t, store.Put(a, []byte("1")), store.Put(b, []byte("b")), store.Put(a, []byte("2")))
	f.wantInvalid(t, store.Check(a, store.Cond{}), store.Put(a, []byte("1")))
	f.wantMissing(t, a)
	f.wantMissing(t, b)
	// The same sort key in two partitions is two keys.
	f.write(t, store.Put(a, []byte("1")), store.Put(f.key("q", "a"), []byte("2")))
}

func testBatchTooLarge(t *testing.T, f *indexFixture) {
	ops := make([]store.Op, store.MaxWriteBatch+1)
	for i := range ops {
		ops[i] = store.Put(f.key("p", store.SortID(int64(i))), []byte("v"))
	}
	f.wantInvalid(t, ops...)
	f.wantMissing(t, ops[0].Key)
	f.write(t, ops[:store.MaxWriteBatch]...)
	f.want(t, ops[store.MaxWriteBatch-1].Key, "v", 1)
}

// testValueTooLarge: a value of store.MaxValueSize bytes is stored; one byte
// more is store.ErrValueTooLarge, a 413 (errs.TooLarge), and nothing of its batch is applied.
func testValueTooLarge(t *testing.T, f *indexFixture) {
	a, b := f.key("p", "a"), f.key("p", "b")
	big := store.Put(a, bytes.Repeat([]byte("v"), store.MaxValueSize+1))
	err := f.idx.Write(f.ctx, store.Put(b, []byte("1")), big)
	if !errors.Is(err, store.ErrValueTooLarge) || !errs.Is(err, errs.TooLarge) {
		t.Fatalf("Write of a value of %d bytes = %v, want ErrValueTooLarge (TooLarge)", len(big.Value), err)
	}
	f.wantMissing(t, b)
	f.write(t, store.Put(a, big.Value[:store.MaxValueSize]))
}

// testInvalidKeys: an empty key, or one longer than store.MaxKeyLen, is
// store.ErrInvalidKey from every operation, and nothing of its batch is applied.
func testInvalidKeys(t *testing.T, f *indexFixture) {
	long := strings.Repeat("k", store.MaxKeyLen+1)
	invalid := []store.Key{{Partition: f.ns + "p"}, {Sort: "s"}, {}, f.key("p", long), {Partition: long, Sort: "s"}}
	isInvalidKey := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("%s = %v, want ErrInvalidKey", what, err)
		}
	}
	for _, k := range invalid {
		name := fmt.Sprintf("%.20q/%.20q", k.Partition, k.Sort)
		isInvalidKey("Write(Put "+name+")", f.idx.Write(f.ctx, store.Put(k, []byte("v"))))
		isInvalidKey("Write(Put ok, Delete "+name+")", f.idx.Write(f.ctx, store.Put(f.key("p", "ok"), []byte("v")), store.Delete(k)))
		_, err := f.idx.Get(f.ctx, k)
		isInvalidKey("Get("+name+")", err)
		_, err = f.idx.BatchGet(f.ctx, []store.Key{f.key("p", "ok"), k})
		isInvalidKey("BatchGet(ok, "+name+")", err)
	}
	f.wantMissing(t, f.key("p", "ok"))
	for _, p := range []string{"", long} {
		_, err := f.idx.Query(f.ctx, store.Query{Partition: p})
		isInvalidKey(fmt.Sprintf("Query(%.20q)", p), err)
	}
}

func testQuery(t *testing.T, f *indexFixture) {
	// Listed in byte order: upper case before lower case, "a10" before "a2", multi-byte UTF-8 last.
	sorted := []string{"B", "a", "a1", "a10", "a2", "b", "b1", "~", "é"}
	shuffled := []string{"a2", "é", "b", "a", "~", "a10", "B", "b1", "a1"}
	for _, s := range shuffled {
		f.write(t, store.Put(f.key("p", s), []byte("v-"+s)))
	}
	f.write(t, store.Put(f.key("p", "a1"), []byte("v-a1"))) // revision 2 for one item
	tests := []struct {
		name string
		q    store.Query
		want []string
	}{
		{"all", store.Query{}, sorted},
		{"all reversed", store.Query{Reverse: true}, reversed(sorted)},
		{"prefix", store.Query{Prefix: "a"}, []string{"a", "a1", "a10", "a2"}},
		{"prefix reversed", store.Query{Prefix: "a", Reverse: true}, []string{"a2", "a10", "a1", "a"}},
		{"longer prefix", store.Query{Prefix: "a1"}, []string{"a1", "a10"}},
		{"multi-byte prefix", store.Query{Prefix: "é"}, []string{"é"}},
		{"prefix matches nothing", store.Query{Prefix: "c"}, nil},
		{"prefix is case-sensitive", store.Query{Prefix: "A"}, nil},
		{"after", store.Query{After: "a10"}, []string{"a2", "b", "b1", "~", "é"}},
		{"after reversed", store.Query{After: "a10", Reverse: true}, []string{"a1", "a", "B"}},
		{"after a missing key", store.Query{After: "a15"}, []string{"a2", "b", "b1", "~", "é"}},
		{"after a missing key reversed", store.Query{After: "a15", Reverse: true}, []string{"a10", "a1", "a", "B"}},
		{"after the last", store.Query{After: "é"}, nil},
		{"after the first reversed", store.Query{After: "B", Reverse: true}, nil},
		{"after before everything", store.Query{After: "0"}, sorted},
		{"after beyond everything reversed", store.Query{After: "\U0010ffff", Reverse: true}, reversed(sorted)},
		{"prefix and after", store.Query{Prefix: "a", After: "a1"}, []string{"a10", "a2"}},
		{"prefix and after reversed", store.Query{Prefix: "a", After: "a2", Reverse: true}, []string{"a10", "a1", "a"}},
		{"prefix and after below the prefix", store.Query{Prefix: "b", After: "a"}, []string{"b", "b1"}},
		{"prefix and after above the prefix", store.Query{Prefix: "a", After: "b"}, nil},
		{"prefix and after above the prefix reversed", store.Query{Prefix: "a", After: "b", Reverse: true}, []string{"a2", "a10", "a1", "a"}},
		{"prefix and after below the prefix reversed", store.Query{Prefix: "b", After: "a", Reverse: true}, nil},
		{"limit", store.Query{Limit: 2}, []string{"B", "a"}},
		{"limit reversed", store.Query{Limit: 2, Reverse: true}, []string{"é", "~"}},
		{"limit above count", store.Query{Limit: 100}, sorted},
		{"prefix, after and limit", store.Query{Prefix: "a", After: "a", Limit: 2}, []string{"a1", "a10"}},
		{"prefix, after and limit reversed", store.Query{Prefix: "a", After: "a2", Limit: 2, Reverse: true}, []string{"a10", "a1"}},
	}
	for _, tt := range tests {
		q := tt.q
		q.Partition = f.ns + "p"
		items, err := f.idx.Query(f.ctx, q)
		if err != nil {
			t.Fatalf("%s: Query: %v", tt.name, err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Sort)
			wantRev := int64(1)
			if it.Sort == "a1" {
				wantRev = 2
			}
			if it.Partition != q.Partition || string(it.Value) != "v-"+it.Sort || it.Revision != wantRev {
				t.Errorf("%s: item %+v: wrong partition, value or revision", tt.name, it)
			}
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("%s: Query = %q, want %q", tt.name, got, tt.want)
		}
	}
	if items, err := f.idx.Query(f.ctx, store.Query{Partition: f.ns + "empty"}); err != nil || len(items) != 0 {
		t.Errorf("Query of an empty partition = %v, %v; want nothing", items, err)
	}
}

func reversed(s []string) []string {
	r := slices.Clone(s)
	slices.Reverse(r)
	return r
}

func testPartitionIsolation(t *testing.T, f *indexFixture) {
	// Keys that would collide if partition and sort key were simply concatenated.
	inA, inAB := f.key("a", "bx"), f.key("ab", "x")
	f.write(t, store.Put(inA, []byte("a")), store.Put(inAB, []byte("ab")), store.Put(f.key("a#", "y"), []byte("a#")))
	f.want(t, inA, "a", 1)
	f.want(t, inAB, "ab", 1)
	f.wantMissing(t, f.key("a", "b"))
	f.wantMissing(t, f.key("ab", "bx"))
	for _, tt := range []struct {
		partition string
		q         store.Query
		want      []string
	}{
		{"a", store.Query{}, []string{"bx"}},
		{"a", store.Query{Reverse: true}, []string{"bx"}},
		{"a", store.Query{After: "bx"}, nil},
		{"ab", store.Query{}, []string{"x"}},
		{"ab", store.Query{Reverse: true, After: "x"}, nil},
		{"a#", store.Query{Reverse: true}, []string{"y"}},
	} {
		tt.q.Partition = f.ns + tt.partition
		items, err := f.idx.Query(f.ctx, tt.q)
		if err != nil {
			t.Fatalf("Query(%+v): %v", tt.q, err)
		}
		var got []string
		for _, it := range items {
			got = append(got, it.Sort)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Query(%+v) = %q, want %q", tt.q, got, tt.want)
		}
	}
}

func testBatchGet(t *testing.T, f *indexFixture) {
	keys := make([]store.Key, 100)
	ops := make([]store.Op, len(keys))
	for i := range keys {
		// Spread over two partitions; every third key is never written.
		keys[i] = f.key("p"+strconv.Itoa(i%2), store.SortID(int64(i)))
		ops[i] = store.Put(keys[i], []byte(strconv.Itoa(i)))
	}
	var written []store.Op
	for i, op := range ops {
		if i%3 != 0 {
			written = append(written, op)
		}
	}
	f.write(t, written...)
	f.write(t, store.Put(keys[1], []byte("1"))) // revision 2

	got, err := f.idx.BatchGet(f.ctx, keys)
	if err != nil {
		t.Fatalf("BatchGet: %v", err)
	}
	if len(got) != len(written) {
		t.Errorf("BatchGet returned %d items, want %d", len(got), len(written))
	}
	for i, k := range keys {
		it, ok := got[k]
		if i%3 == 0 {
			if ok {
				t.Errorf("BatchGet returned never-written key %v", k)
			}
			continue
		}
		wantRev := int64(1)
		if i == 1 {
			wantRev = 2
		}
		if !ok || it.Key != k || string(it.Value) != strconv.Itoa(i) || it.Revision != wantRev {
			t.Errorf("BatchGet[%v] = %+v, %v; want value %d at revision %d", k, it, ok, i, wantRev)
		}
	}

	got, err = f.idx.BatchGet(f.ctx, []store.Key{keys[0], keys[3]})
	if err != nil || len(got) != 0 {
		t.Errorf("BatchGet of missing keys = %v, %v; want an empty map", got, err)
	}
	got, err = f.idx.BatchGet(f.ctx, nil)
	if err != nil || len(got) != 0 {
		t.Errorf("BatchGet of no keys = %v, %v; want an empty map", got, err)
	}
	tooMany := append(slices.Clone(keys), f.key("p0", "one too many"))
	if got, err = f.idx.BatchGet(f.ctx, tooMany); err == nil {
		t.Errorf("BatchGet of %d keys = %d items, want an error: at most %d", len(tooMany), len(got), store.MaxBatchGet)
	}
}

func testValuesAreCopies(t *testing.T, f *indexFixture) {
	k := f.key("p", "s")
	// Rewriting the item and growing the store around the reads would show
	// other bytes in values that are views of a backend's buffers or pages.
	churn := func(round int) {
		for i := range 5 {
			ops := []store.Op{store.Put(k, []byte(fmt.Sprintf("rewrite %d.%d", round, i)))}
			for j := range store.MaxWriteBatch - 1 {
				ops = append(ops, store.Put(f.key("churn", fmt.Sprintf("%d.%d.%d", round, i, j)), bytes.Repeat([]byte{byte(j)}, 1024)))
			}
			f.write(t, ops...)
		}
	}
	churn(1)
	in := []byte("original")
	f.write(t, store.Put(k, in))
	copy(in, "MUTATED!")
	f.want(t, k, "original", 6)

	// read returns k's value as each of Get, BatchGet and Query returns it.
	read := func() map[string][]byte {
		t.Helper()
		it, err := f.idx.Get(f.ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		batch, err := f.idx.BatchGet(f.ctx, []store.Key{k})
		if err != nil {
			t.Fatal(err)
		}
		list, err := f.idx.Query(f.ctx, store.Query{Partition: k.Partition})
		if err != nil || len(list) != 1 {
			t.Fatalf("Query = %v, %v", list, err)
		}
		return map[string][]byte{"Get": it.Value, "BatchGet": batch[k].Value, "Query": list[0].Value}
	}
	returned := read()
	churn(2)
	f.write(t, store.Put(k, []byte("original")))
	for name, v := range returned {
		if string(v) != "original" {
			t.Errorf("value returned by %s changed to %q after later writes", name, v)
		}
	}

	// Values belong to the caller: changing them changes nothing stored,
	// whether the item was rewritten since they were read or not (an
	// in-memory backend could hand out its own slices).
	for _, v := range returned {
		copy(v, "MUTATED!")
	}
	f.want(t, k, "original", 12)
	for name, v := range read() {
		copy(v, "MUTATED!")
		if it, err := f.idx.Get(f.ctx, k); err != nil || string(it.Value) != "original" {
			t.Fatalf("changing the value %s returned changed the stored item to %q (%v)", name, it.Value, err)
		}
	}
}

// concurrency is the number of goroutines of the concurrent cases.
const concurrency = 32

func testConcurrentCAS(t *testing.T, f *indexFixture) {
	k := f.key("p", "counter")
	f.write(t, store.Create(k, []byte("0")))
	observed := make([]int, concurrency)
	var wg sync.WaitGroup
	for g := range concurrency {
		wg.Go(func() {
			for {
				it, err := f.idx.Get(f.ctx, k)
				if err != nil {
					t.Errorf("Get: %v", err)
					return
				}
				n, err := strconv.Atoi(string(it.Value))
				if err != nil {
					t.Errorf("counter value %q: %v", it.Value, err)
					return
				}
				err = f.idx.Write(f.ctx, store.Update(k, []byte(strconv.Itoa(n+1)), it.Revision))
				if errors.Is(err, store.ErrConflict) {
					continue
				}
				if err != nil {
					t.Errorf("Write: %v", err)
					return
				}
				observed[g] = n + 1
				return
			}
		})
	}
	wg.Wait()
	f.want(t, k, strconv.Itoa(concurrency), concurrency+1)
	wantDistinct(t, observed)
}

func testConcurrentNextID(t *testing.T, f *indexFixture) {
	k := f.key("p", "ids")
	ids := make([]int, concurrency)
	var wg sync.WaitGroup
	for g := range concurrency {
		wg.Go(func() {
			id, err := store.NextID(f.ctx, f.idx, k)
			if err != nil {
				t.Errorf("NextID: %v", err)
			}
			ids[g] = int(id)
		})
	}
	wg.Wait()
	wantDistinct(t, ids)
}

// testIDBounds: a client-chosen id outside 1..store.MaxChosenID is refused
// without moving the counter; the largest chosen id leaves the automatic ids
// going (the counter continues after it), and a counter at MaxID stops handing
// out ids instead of wrapping.
func testIDBounds(t *testing.T, f *indexFixture) {
	k := f.key("p", "ids")
	for _, id := range []int64{store.MaxChosenID + 1, store.MaxID, math.MaxInt64, 0, -1} {
		if err := store.ReserveID(f.ctx, f.idx, k, id); !errors.Is(err, store.ErrIDTooLarge) || !errs.Is(err, errs.Invalid) {
			t.Fatalf("ReserveID(%d) = %v, want ErrIDTooLarge (Invalid)", id, err)
		}
	}
	if id, err := store.NextID(f.ctx, f.idx, k); err != nil || id != 1 {
		t.Fatalf("NextID after refused reservations = %d, %v; want 1", id, err)
	}
	if err := store.ReserveID(f.ctx, f.idx, k, store.MaxChosenID); err != nil {
		t.Fatalf("ReserveID(MaxChosenID): %v", err)
	}
	for want := int64(store.MaxChosenID + 1); want < store.MaxChosenID+4; want++ {
		if id, err := store.NextID(f.ctx, f.idx, k); err != nil || id != want {
			t.Fatalf("NextID after the largest chosen id = %d, %v; want %d", id, err, want)
		}
	}
	// No client can move the counter to MaxID any more; one that got there
	// (a database of an earlier version) stops rather than wraps.
	it, err := f.idx.Get(f.ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, store.Update(k, fmt.Appendf(nil, `{"last":%d}`, int64(store.MaxID)), it.Revision))
	for range 2 {
		if id, err := store.NextID(f.ctx, f.idx, k); !errors.Is(err, store.ErrIDsExhausted) {
			t.Fatalf("NextID after MaxID = %d, %v; want ErrIDsExhausted", id, err)
		}
	}
}

// wantDistinct asserts that got holds each of 1..len(got) exactly once.
func wantDistinct(t *testing.T, got []int) {
	t.Helper()
	sorted := slices.Sorted(slices.Values(got))
	for i, n := range sorted {
		if n != i+1 {
			t.Fatalf("values %v are not 1..%d, each once", sorted, len(got))
		}
	}
}

type blobFixture struct {
	ctx   context.Context
	blobs store.Blobs
	ns    string // prefix of the content of every blob of this case, except the empty one
}

func (f *blobFixture) put(t *testing.T, data []byte) string {
	t.Helper()
	hash, err := f.blobs.Put(f.ctx, data)
	if err != nil {
		t.Fatalf("Put: %v", err)
	}
	if want := hashOf(data); hash != want {
		t.Fatalf("Put returned hash %q, want %q", hash, want)
	}
	return hash
}

func (f *blobFixture) want(t *testing.T, hash string, data []byte) {
	t.Helper()
	got, err := f.blobs.Get(f.ctx, hash)
	if err != nil {
		t.Fatalf("Get(%s): %v", hash, err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get(%s) = %d bytes, not the %d bytes put", hash, len(got), len(data))
	}
}

var blobCases = []struct {
	name string
	test func(t *testing.T, f *blobFixture)
}{
	{"RoundTrip", testBlobRoundTrip},
	{"PutTwice", testBlobPutTwice},
	{"GetMissing", testBlobGetMissing},
	{"Large", testBlobLarge},
	{"Empty", testBlobEmpty},
	{"ConcurrentPuts", testBlobConcurrentPuts},
	{"ListAndDelete", testBlobListAndDelete},
}

// testBlobListAndDelete: List names a stored blob with about the time it was
// stored; Delete removes it (Get: ErrNotFound, not listed); deleting again is fine.
func testBlobListAndDelete(t *testing.T, f *blobFixture) {
	before := time.Now().Add(-time.Minute)
	hash, err := f.blobs.Put(f.ctx, []byte(f.ns+"listed"))
	if err != nil {
		t.Fatal(err)
	}
	listed := func() (time.Time, bool) {
		var at time.Time
		found := false
		if err := f.blobs.List(f.ctx, func(h string, created time.Time) error {
			if h == hash {
				at, found = created, true
			}
			return nil
		}); err != nil {
			t.Fatalf("List: %v", err)
		}
		return at, found
	}
	if at, ok := listed(); !ok || at.Before(before) || at.After(time.Now().Add(time.Minute)) {
		t.Fatalf("List: %s listed %v at %v, want about now", hash, ok, at)
	}
	for range 2 {
		if err := f.blobs.Delete(f.ctx, hash); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := f.blobs.Get(f.ctx, hash); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get after Delete: %v", err)
	}
	if _, ok := listed(); ok {
		t.Fatal("a deleted blob is still listed")
	}
	if h, err := f.blobs.Put(f.ctx, []byte(f.ns+"listed")); err != nil || h != hash {
		t.Fatalf("Put after Delete: %s, %v", h, err)
	}
	if _, err := f.blobs.Get(f.ctx, hash); err != nil {
		t.Fatalf("Get after a new Put: %v", err)
	}
}

func testBlobRoundTrip(t *testing.T, f *blobFixture) {
	for _, data := range [][]byte{
		[]byte(f.ns + `{"json":true}`),
		append([]byte(f.ns), 0, 0xff, 0xfe, 0),
	} {
		f.want(t, f.put(t, data), data)
	}
}

func testBlobPutTwice(t *testing.T, f *blobFixture) {
	data := []byte(f.ns + "twice")
	first := f.put(t, data)
	if second := f.put(t, slices.Clone(data)); second != first {
		t.Fatalf("second Put returned %s, first %s", second, first)
	}
	f.want(t, first, data)
}

func testBlobGetMissing(t *testing.T, f *blobFixture) {
	missing := hashOf([]byte(f.ns + "never stored"))
	if data, err := f.blobs.Get(f.ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("Get(missing) = %d bytes, %v; want ErrNotFound", len(data), err)
	}
}

func testBlobLarge(t *testing.T, f *blobFixture) {
	data := make([]byte, 5<<20)
	copy(data, f.ns)
	for i := len(f.ns); i < len(data); i++ {
		data[i] = byte(i * 7)
	}
	f.want(t, f.put(t, data), data)
}

func testBlobEmpty(t *testing.T, f *blobFixture) {
	hash := f.put(t, []byte{})
	f.want(t, hash, []byte{})
	if again := f.put(t, nil); again != hash {
		t.Fatalf("Put(nil) = %s, Put(empty) = %s", again, hash)
	}
}

func testBlobConcurrentPuts(t *testing.T, f *blobFixture) {
	data := []byte(f.ns + "concurrent")
	hashes := make([]string, concurrency)
	var wg sync.WaitGroup
	for g := range concurrency {
		wg.Go(func() {
			var err error
			if hashes[g], err = f.blobs.Put(f.ctx, data); err != nil {
				t.Errorf("Put: %v", err)
			}
		})
	}
	wg.Wait()
	for _, h := range hashes {
		if h != hashOf(data) {
			t.Fatalf("concurrent Put returned %s, want %s", h, hashOf(data))
		}
	}
	f.want(t, hashOf(data), data)
}

func hashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
