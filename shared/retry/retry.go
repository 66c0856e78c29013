// Package retry is the one retry policy of tuningbox: a bounded number of
// attempts, full-jitter exponential backoff between them, and the caller's
// deadline respected — no attempt starts once the context is done or when its
// deadline is too close for the wait, so nothing is written after the request
// that asked for it timed out. Optimistic-concurrency loops of the domain
// (through store.RetryConflicts) and the AWS backend's retries of throttled or
// conflicting calls all go through it.
package retry

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
)

// Policy says how often and how patiently to retry.
type Policy struct {
	// Attempts is the most attempts, the first included.
	Attempts int
	// Base is the backoff cap before the second attempt; it doubles per attempt up to Max.
	Base, Max time.Duration
}

// Default is the policy of every retry loop: 16 attempts, waits growing from
// 10 ms to 2 s, at most about 20 s in all (below the request deadline,
// httpapi.DefaultTimeout): enough for 32 processes writing one document at once.
var Default = Policy{Attempts: 16, Base: 10 * time.Millisecond, Max: 2 * time.Second}

// ErrExhausted is wrapped in the error of Do when every attempt failed with a retryable error.
var ErrExhausted = errors.New("retry: attempts exhausted")

// Do runs attempt until it returns nil or an error retryable does not accept,
// at most p.Attempts times, waiting before each retry. It returns the last
// error of attempt, the context's error when ctx ends first, or (wrapping
// ErrExhausted and the last error) when the attempts are used up.
func (p Policy) Do(ctx context.Context, attempt func() error, retryable func(error) bool) error {
	var err error
	for n := range p.Attempts {
		if werr := p.Wait(ctx, n); werr != nil {
			return werr
		}
		if err = attempt(); err == nil || !retryable(err) {
			return err
		}
	}
	return fmt.Errorf("%w after %d attempts: %w", ErrExhausted, p.Attempts, err)
}

// Wait sleeps before attempt n (not before the first): a random time up to
// min(Max, Base * 2^(n-1)). It returns the context's error when ctx is done,
// and context.DeadlineExceeded at once when the deadline would pass during the wait.
func (p Policy) Wait(ctx context.Context, n int) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if n == 0 {
		return nil
	}
	limit := p.Max
	if n-1 < 30 {
		limit = min(p.Base<<(n-1), p.Max)
	}
	d := rand.N(limit + 1)
	if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < d {
		return context.DeadlineExceeded
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
