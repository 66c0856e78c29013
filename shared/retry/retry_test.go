package retry

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"
)

var errAgain = errors.New("again")

func again(err error) bool { return errors.Is(err, errAgain) }

func TestBoundedAttempts(t *testing.T) {
	p := Policy{Attempts: 4, Base: time.Microsecond, Max: time.Millisecond}
	calls := 0
	err := p.Do(context.Background(), func() error { calls++; return errAgain }, again)
	if calls != 4 || !errors.Is(err, ErrExhausted) || !errors.Is(err, errAgain) {
		t.Fatalf("%d calls, %v", calls, err)
	}
}

func TestStopsAtSuccessAndOtherErrors(t *testing.T) {
	p := Policy{Attempts: 10, Base: time.Microsecond, Max: time.Millisecond}
	calls := 0
	if err := p.Do(context.Background(), func() error {
		if calls++; calls < 3 {
			return errAgain
		}
		return nil
	}, again); err != nil || calls != 3 {
		t.Fatalf("%d calls, %v", calls, err)
	}
	other := errors.New("other")
	calls = 0
	if err := p.Do(context.Background(), func() error { calls++; return other }, again); err != other || calls != 1 {
		t.Fatalf("%d calls, %v", calls, err)
	}
}

// TestDeadlineRespected: no attempt starts after the context ended, and a
// wait that would outlast the deadline is not begun.
func TestDeadlineRespected(t *testing.T) {
	p := Policy{Attempts: 100, Base: time.Second, Max: time.Hour}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	calls := 0
	start := time.Now()
	err := p.Do(ctx, func() error { calls++; return errAgain }, again)
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > time.Second {
		t.Fatalf("%d calls, %v after %v", calls, err, time.Since(start))
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	calls = 0
	if err := p.Do(cancelled, func() error { calls++; return nil }, again); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Fatalf("cancelled context: %d calls, %v", calls, err)
	}
}

func TestBackoffGrowsWithJitter(t *testing.T) {
	p := Policy{Attempts: 10, Base: 2 * time.Millisecond, Max: 8 * time.Millisecond}
	for n := 1; n < 6; n++ {
		start := time.Now()
		if err := p.Wait(context.Background(), n); err != nil {
			t.Fatal(err)
		}
		if cap := min(p.Base<<(n-1), p.Max); time.Since(start) > cap+50*time.Millisecond {
			t.Fatalf("wait %d took %v, cap %v", n, time.Since(start), cap)
		}
	}
}

// A contended key's step carries over to its next operation and decays with
// time; other keys start at 0.
func TestContentionCarriesTheStep(t *testing.T) {
	var c Contention
	now := time.Now()
	if got := c.stepAt("doc", now); got != 0 {
		t.Fatalf("a new key starts at %d, want 0", got)
	}
	c.doneAt("doc", 0, 3, now) // three conflicts: the fourth attempt, at step 3, went through
	if got := c.stepAt("doc", now); got != 3 {
		t.Fatalf("step %d after 3 failed attempts, want 3", got)
	}
	c.doneAt("doc", 3, 0, now.Add(stepDecay/2)) // no conflict: nothing recorded
	if got := c.stepAt("doc", now.Add(2*stepDecay)); got != 1 {
		t.Fatalf("step %d two decays later, want 1", got)
	}
	if got := c.stepAt("other", now); got != 0 {
		t.Fatalf("another key at %d, want 0", got)
	}
	c.doneAt("doc", 5, 9, now)
	if got := c.stepAt("doc", now); got != maxCarriedStep {
		t.Fatalf("step %d, want the bound %d", got, maxCarriedStep)
	}
	// A full table makes room by forgetting decayed keys only.
	c.Limit(contendedKeyBytes("doc") + 100*contendedKeyBytes("old-00"))
	for i := range 100 {
		c.doneAt(fmt.Sprintf("old-%02d", i), 0, 1, now)
	}
	if len(c.steps) != 101 {
		t.Fatalf("%d keys kept, want all 101 that fit", len(c.steps))
	}
	c.doneAt("new", 0, 2, now)
	if got := c.stepAt("new", now); got != 0 {
		t.Fatalf("a new key got step %d in a full table of live keys, want it left out", got)
	}
	later := now.Add(stepDecay)
	c.doneAt("new", 0, 2, later)
	if got, size := c.stepAt("new", later), len(c.steps); got != 2 || size != 2 {
		t.Fatalf("after the old keys decayed: new at %d with %d keys kept, want 2 with 2 (doc and new)", got, size)
	}
	if want := contendedKeyBytes("doc") + contendedKeyBytes("new"); c.bytes != want {
		t.Fatalf("the table counts %d bytes, want %d", c.bytes, want)
	}
}

// The bound is in bytes: the longer the keys, the fewer are remembered.
func TestContentionCountsBytes(t *testing.T) {
	now := time.Now()
	kept := func(keyBytes int) int {
		var c Contention
		c.Limit(64 << 10)
		for i := range 2000 {
			c.doneAt(fmt.Sprintf("%0*d", keyBytes, i), 0, 1, now)
		}
		if c.bytes > 64<<10 {
			t.Fatalf("%d bytes remembered, over the 64 KiB limit", c.bytes)
		}
		return len(c.steps)
	}
	short, long := kept(8), kept(1000)
	if short >= 2000 || long == 0 || long*4 > short {
		t.Errorf("64 KiB kept %d keys of 8 bytes and %d of 1,000: want a bound in bytes", short, long)
	}
}

// DoFrom waits from the given step and counts the retryable failures.
func TestDoFromCountsFailures(t *testing.T) {
	p := Policy{Attempts: 5, Base: time.Microsecond, Max: time.Millisecond}
	calls := 0
	failed, err := p.DoFrom(context.Background(), 2, func() error {
		if calls++; calls < 3 {
			return errAgain
		}
		return nil
	}, again)
	if err != nil || failed != 2 || calls != 3 {
		t.Fatalf("failed %d, calls %d, err %v; want 2 failures then success", failed, calls, err)
	}
}
