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
	"sync"
	"time"
	"unsafe"

	"github.com/tuningbox/tuningbox/shared/cache"
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
	_, err := p.DoFrom(ctx, 0, attempt, retryable)
	return err
}

// DoFrom is Do starting at backoff step first: the first attempt waits as
// attempt number first would (not at all for 0), and so on. It also returns
// how many attempts failed with a retryable error.
func (p Policy) DoFrom(ctx context.Context, first int, attempt func() error, retryable func(error) bool) (failed int, err error) {
	for n := range p.Attempts {
		if werr := p.Wait(ctx, first+n); werr != nil {
			return failed, werr
		}
		if err = attempt(); err == nil || !retryable(err) {
			return failed, err
		}
		failed++
	}
	return failed, fmt.Errorf("%w after %d attempts: %w", ErrExhausted, p.Attempts, err)
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

// Contention carries the backoff step the writers of a key reached over to
// their next operations on it: a writer that keeps meeting writers of other
// processes at one item spreads its first attempts as its retries had to be
// spread, instead of colliding anew at every operation (with independent
// backoffs alone, each operation starts at step 0 while the contention
// lasts). The step falls by one per stepDecay, so a key no longer contended
// soon starts at 0 again: no wait. The zero value is ready; it remembers keys
// within DefaultContentionBytes unless Limit says otherwise.
type Contention struct {
	mu    sync.Mutex
	steps map[string]carriedStep
	// bytes is what steps holds (contendedKeyBytes each); maxBytes bounds it.
	bytes, maxBytes int64
}

type carriedStep struct {
	step int
	at   time.Time
}

const (
	// DefaultContentionBytes bounds what a Contention remembers without Limit
	// (a few thousand keys).
	DefaultContentionBytes = 512 << 10
	// maxCarriedStep bounds the wait before a first attempt (step 6: up to 32 x Base).
	maxCarriedStep = 6
	stepDecay      = time.Second
)

// Limit bounds what c remembers to maxBytes: its keys, their steps and the
// map's overhead. A key that does not fit is left out while every key kept is
// still contended (its step not decayed to 0).
func (c *Contention) Limit(maxBytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.maxBytes = maxBytes
}

// contendedKeyBytes approximates what remembering key takes.
func contendedKeyBytes(key string) int64 {
	return cache.EntryOverhead + int64(unsafe.Sizeof(key)+unsafe.Sizeof(carriedStep{})) + int64(len(key))
}

// Step is the backoff step the next operation on key starts at.
func (c *Contention) Step(key string) int { return c.stepAt(key, time.Now()) }

// Done records that an operation on key started at step first and had failed retryable attempts.
func (c *Contention) Done(key string, first, failed int) { c.doneAt(key, first, failed, time.Now()) }

func (c *Contention) stepAt(key string, now time.Time) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decayed(c.steps[key], now)
}

func (c *Contention) decayed(s carriedStep, now time.Time) int {
	return max(s.step-int(now.Sub(s.at)/stepDecay), 0)
}

func (c *Contention) doneAt(key string, first, failed int, now time.Time) {
	if failed == 0 {
		return // the step decays with time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.steps == nil {
		c.steps = make(map[string]carriedStep)
	}
	if _, known := c.steps[key]; !known {
		limit := c.maxBytes
		if limit <= 0 {
			limit = DefaultContentionBytes
		}
		cost := contendedKeyBytes(key)
		if c.bytes+cost > limit {
			for k, s := range c.steps { // make room: forget the keys decayed to 0
				if c.decayed(s, now) == 0 {
					delete(c.steps, k)
					c.bytes -= contendedKeyBytes(k)
				}
			}
			if c.bytes+cost > limit {
				return
			}
		}
		c.bytes += cost
	}
	c.steps[key] = carriedStep{step: min(first+failed, maxCarriedStep), at: now}
}
