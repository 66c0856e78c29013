package retry

import (
	"context"
	"errors"
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
