package graphs

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ActionIdle is the claim answer when no transaction runs on the cluster.
const ActionIdle = "idle"

// MaxClaimWait caps how long a cluster claim waits for work: below the 30 s
// an API Gateway integration may take.
const MaxClaimWait = 25 * time.Second

// claimRecheck is how often a waiting cluster claim looks at the cluster's
// lock item: executions started by another process (another Lambda instance)
// are seen this late at most; those of this process wake it at once.
const claimRecheck = time.Second

// executions wakes the cluster claims waiting in this process when an execution starts.
type executions struct {
	mu      sync.Mutex
	started chan struct{}
	// waiting counts the claims waiting for work (metrics).
	waiting atomic.Int64
}

func (e *executions) signal() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started == nil {
		e.started = make(chan struct{})
	}
	return e.started
}

func (e *executions) notify() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started != nil {
		close(e.started)
		e.started = nil
	}
}

// runningTransaction returns the transaction running on a cluster, or "".
func (s *Service) runningTransaction(ctx context.Context, cluster int64) (string, error) {
	var lock clusterLock
	_, err := store.GetJSON(ctx, s.idx, lockKey(cluster), &lock)
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return lock.Transaction, err
}

// ClaimInCluster is the agent's claim without knowing the transaction: it
// claims the node's next task in the transaction running on the cluster.
// With nothing to do there (no transaction: idle; the node has no part in
// it or is through with it: done) it waits up to wait for another transaction
// to start, or until stop closes. An idle claim reads one item per check, so
// idle agents cost little; it does not check that the cluster exists.
func (s *Service) ClaimInCluster(ctx context.Context, cluster int64, node string, wait time.Duration, stop <-chan struct{}) (Claim, error) {
	audit.Polling(ctx) // an idle or waiting claim is not audited; one that changes progress is (Claim)
	wait = min(wait, MaxClaimWait)
	if deadline, ok := ctx.Deadline(); ok {
		// Answer before the request's own deadline (a Lambda function's
		// timeout) cuts the claim off without an answer.
		wait = max(min(wait, time.Until(deadline)-time.Second), 0)
	}
	timeout := time.NewTimer(wait)
	defer timeout.Stop()
	tick := time.NewTicker(claimRecheck)
	defer tick.Stop()
	for {
		started := s.executions.signal()
		tx, err := s.runningTransaction(ctx, cluster)
		if err != nil {
			return Claim{}, err
		}
		c := Claim{Action: ActionIdle, Node: node}
		if tx != "" {
			c, err = s.Claim(ctx, tx, node)
			if errs.Is(err, errs.NotFound) {
				c, err = Claim{Action: ActionDone, Transaction: tx, Node: node}, nil
			}
			if err != nil || c.Action != ActionDone {
				return c, err
			}
		}
		if wait <= 0 {
			return c, nil
		}
		// Wait until the running transaction is another one.
		again, err := s.waitForAnother(ctx, cluster, tx, started, timeout.C, tick.C, stop)
		if err != nil {
			return Claim{}, err
		}
		if !again {
			return c, nil
		}
	}
}

// waitForAnother waits until the transaction running on the cluster is no
// longer tx (again), or the claim is over: the wait ran out or stop closed
// (no error), or the request ended (its error).
func (s *Service) waitForAnother(ctx context.Context, cluster int64, tx string, started <-chan struct{}, timeout, tick <-chan time.Time, stop <-chan struct{}) (again bool, err error) {
	s.executions.waiting.Add(1)
	defer s.executions.waiting.Add(-1)
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-timeout:
			return false, nil
		case <-stop:
			return false, nil
		case <-started:
		case <-tick:
		}
		now, err := s.runningTransaction(ctx, cluster)
		if err != nil {
			return false, err
		}
		if now != tx {
			return true, nil
		}
		started = s.executions.signal()
	}
}
