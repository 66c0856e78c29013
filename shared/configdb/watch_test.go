package configdb

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestWaitSharesOneRecheck: many reads waiting on one resource cost the store
// one read each and then only their topic's rechecks, and a write through
// another service (another process) wakes them at the next recheck.
func TestWaitSharesOneRecheck(t *testing.T) { synctest.Test(t, testWaitSharesOneRecheck) }

func testWaitSharesOneRecheck(t *testing.T) {
	b := mem.New()
	idx := &countingIndex{Index: b.Index}
	waiting := NewService(idx, b.Blobs)
	waiting.watch.recheckEvery = 50 * time.Millisecond
	other := NewService(b.Index, b.Blobs)
	ctx := context.Background()
	if _, err := other.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{{Name: "astute"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role"}}); err != nil {
		t.Fatal(err)
	}
	global := DocRef{Env: "1", Resource: "astute"}
	if _, err := other.PutDocument(ctx, global, Values, []byte(`{"a":1}`), ""); err != nil {
		t.Fatal(err)
	}
	q := ReadQuery{DocRef: DocRef{Env: "1", Levels: lv("role", "compute"), Resource: "astute"}, Kind: Values, Effective: true}
	doc, err := waiting.Read(ctx, q)
	if err != nil {
		t.Fatal(err)
	}

	const waiters = 50
	idx.calls.Store(0)
	var wg sync.WaitGroup
	results := make(chan *Document, waiters)
	for range waiters {
		wg.Go(func() {
			d, err := waiting.Wait(ctx, q, doc.ETag, 10*time.Second)
			if err != nil {
				t.Error(err)
			}
			results <- d
		})
	}
	const idle = 500 * time.Millisecond
	time.Sleep(idle)
	idleCalls := idx.calls.Load()
	// One read per waiter, the topic's first look (2) and about 2 per recheck.
	if limit := int64(waiters + 2 + 2*(idle/(50*time.Millisecond)+2)); idleCalls > limit {
		t.Errorf("%d waiters made %d index calls in %v, want at most %d", waiters, idleCalls, idle, limit)
	}
	start := time.Now()
	if _, err := other.PutDocument(ctx, global, Values, []byte(`{"a":2}`), ""); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(results)
	woke := time.Since(start)
	for d := range results {
		if d == nil || string(d.Body) != `{"a":2}` {
			t.Fatalf("a waiter got %v", d)
		}
	}
	if woke > 2*time.Second {
		t.Errorf("waiters woke %v after another process's write", woke)
	}
	t.Logf("%d waiters: %d index calls in %v idle; woken %v after another process's write", waiters, idleCalls, idle, woke)
	waiting.watch.mu.Lock()
	defer waiting.watch.mu.Unlock()
	if len(waiting.watch.topics) != 0 {
		t.Errorf("topics left after every waiter returned: %v", waiting.watch.topics)
	}
}

// panickyIndex panics in Query while its switch is on.
type panickyIndex struct {
	store.Index
	panicking atomic.Bool
}

func (p *panickyIndex) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if p.panicking.Load() {
		panic("the store's client broke")
	}
	return p.Index.Query(ctx, q)
}

// TestRecheckSurvivesPanic: a panic in a topic's background recheck (no
// request's handler around it to recover) is not the end of the process: the
// recheck goes on, and a write of another process still wakes the waiter.
func TestRecheckSurvivesPanic(t *testing.T) { synctest.Test(t, testRecheckSurvivesPanic) }

func testRecheckSurvivesPanic(t *testing.T) {
	b := mem.New()
	idx := &panickyIndex{Index: b.Index}
	waiting := NewService(idx, b.Blobs)
	waiting.watch.recheckEvery = 20 * time.Millisecond
	other := NewService(b.Index, b.Blobs)
	ctx := context.Background()
	if _, err := other.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{{Name: "astute"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{}}); err != nil {
		t.Fatal(err)
	}
	ref := DocRef{Env: "1", Resource: "astute"}
	if _, err := other.PutDocument(ctx, ref, Values, []byte(`{"a":1}`), ""); err != nil {
		t.Fatal(err)
	}
	q := ReadQuery{DocRef: ref, Kind: Values}
	doc, err := waiting.Read(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	woken := make(chan *Document, 1)
	go func() {
		d, err := waiting.Wait(ctx, q, doc.ETag, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		woken <- d
	}()
	time.Sleep(50 * time.Millisecond) // the waiter has read and joined its topic
	idx.panicking.Store(true)
	time.Sleep(100 * time.Millisecond) // several rechecks panic
	idx.panicking.Store(false)
	if _, err := other.PutDocument(ctx, ref, Values, []byte(`{"a":2}`), ""); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-woken:
		if d == nil || string(d.Body) != `{"a":2}` {
			t.Fatalf("the waiter got %v", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter was not woken after the panicking rechecks")
	}
}

// TestWatchHub: the waiters of one topic share it and its one recheck; a
// write through this process (changed) or a change of the topic's
// fingerprint (another process's write) wakes them; the last waiter to leave
// stops the recheck and forgets the topic.
func TestWatchHub(t *testing.T) { synctest.Test(t, testWatchHub) }

func testWatchHub(t *testing.T) {
	var looks, state atomic.Int64
	h := newWatchHub(func(context.Context, watchKey) ([32]byte, error) {
		looks.Add(1)
		return [32]byte{byte(state.Load())}, nil
	}, 5*time.Millisecond)
	ctx := context.Background()
	k := watchKey{env: 1, resdef: 2}
	first, second := h.join(ctx, k), h.join(ctx, k)
	if first != second || h.waiting.Load() != 2 || len(h.topics) != 1 {
		t.Fatalf("two waiters of one resource: topics %v, waiting %d", h.topics, h.waiting.Load())
	}
	woken := func(what string, signal <-chan struct{}) {
		t.Helper()
		select {
		case <-signal:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s did not wake the waiters", what)
		}
	}
	signal := first.signal()
	h.changed(watchKey{env: 1, resdef: 3}) // another resource's write
	select {
	case <-signal:
		t.Fatal("another resource's write woke the waiters")
	case <-time.After(20 * time.Millisecond):
	}
	h.changed(k)
	woken("a write through this process", signal)
	signal = first.signal()
	state.Store(1)
	woken("another process's write", signal)

	h.leave(k, first)
	h.leave(k, second)
	if len(h.topics) != 0 || h.waiting.Load() != 0 {
		t.Fatalf("after the last waiter left: topics %v, waiting %d", h.topics, h.waiting.Load())
	}
	time.Sleep(20 * time.Millisecond) // a look under way ends
	stopped := looks.Load()
	time.Sleep(50 * time.Millisecond)
	if looks.Load() != stopped {
		t.Errorf("the recheck looked %d more times after its topic ended", looks.Load()-stopped)
	}
}
