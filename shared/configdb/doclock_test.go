package configdb

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
)

// TestDocWritersTakeTurns: the writers of one document in this process run
// one at a time, writers of other documents do not wait for them, a writer
// whose context ends stops waiting, a conflicting attempt is retried, and
// nothing is kept of a document nobody writes any more.
func TestDocWritersTakeTurns(t *testing.T) { synctest.Test(t, testDocWritersTakeTurns) }

func testDocWritersTakeTurns(t *testing.T) {
	var d docWriters
	ctx := context.Background()
	key := docLockKey(DocRef{Env: "1", Levels: lv("role", "compute"), Resource: "astute"}, Values)
	other := docLockKey(DocRef{Env: "1", Resource: "astute"}, Values)

	var inside, most atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			err := d.write(ctx, key, func() error {
				n := inside.Add(1)
				defer inside.Add(-1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(time.Millisecond)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 {
		t.Errorf("%d writers of one document at once, want 1", most.Load())
	}

	// One writer holds the document: another document is free, and a
	// writer of the held one gives up when its context ends.
	held, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		d.write(ctx, key, func() error { close(held); <-release; return nil })
	}()
	<-held
	if err := d.write(ctx, other, func() error { return nil }); err != nil {
		t.Fatalf("another document: %v", err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if err := d.write(short, key, func() error { t.Error("ran out of turn"); return nil }); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting past the deadline: %v", err)
	}
	close(release)
	<-done

	attempts := 0
	if err := d.write(ctx, key, func() error {
		if attempts++; attempts < 3 {
			return store.ErrConflict
		}
		return nil
	}); err != nil || attempts != 3 {
		t.Fatalf("conflicting attempts: %d, %v", attempts, err)
	}
	d.queue.mu.Lock()
	defer d.queue.mu.Unlock()
	if len(d.queue.locks) != 0 {
		t.Errorf("%d documents still queued for", len(d.queue.locks))
	}
}
