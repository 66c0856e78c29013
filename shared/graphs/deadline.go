package graphs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"
	"unsafe"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Deadlines of a running transaction. Nothing runs in the background to watch
// them (on AWS nothing runs between requests): every read, listing, claim and
// report of a transaction checks them first (enforceDeadlines), and the local
// server also checks every running transaction periodically (EnforceDeadlines).
const (
	// DefaultClaimTimeout and DefaultTaskTimeout are wire's, which the agent shares.
	DefaultClaimTimeout = wire.DefaultClaimTimeout
	DefaultTaskTimeout  = wire.DefaultTaskTimeout
	// taskTimeoutGrace is what the server adds to a task's timeout before it
	// fails the run itself: the agent's own timeout and report come first.
	taskTimeoutGrace = time.Minute
	// DefaultHeartbeat is how often an agent running a task claims it again.
	DefaultHeartbeat = 30 * time.Second
	// lostHeartbeats is how many heartbeats a node may miss before it is lost.
	lostHeartbeats = 3
	// deadlineCheckEvery spaces one process's checks of one transaction: a
	// check reads the progress of every node of the running sub-transaction.
	deadlineCheckEvery = time.Second
	// maxClaimTimeout bounds the claim timeout an execution may ask for.
	maxClaimTimeout = 7 * 24 * time.Hour
)

// WithClock makes the service read time from now (tests use a fake clock).
func WithClock(now func() time.Time) Option {
	return func(s *Service) { s.now = now }
}

// WithHeartbeat sets how often agents running a task claim it again; a node
// silent for three such intervals fails the run.
func WithHeartbeat(d time.Duration) Option {
	return func(s *Service) { s.heartbeat = d }
}

// newDeadlineChecks remembers, per transaction, when this process last
// checked its deadlines, within maxBytes.
func newDeadlineChecks(maxBytes int64) *cache.LRU[string, time.Time] {
	return cache.New[string](maxBytes, func(time.Time) int64 { return deadlineCheckBytes })
}

// deadlineCheckBytes is what one remembered check takes: the entry, its key
// (a transaction's UUID) and the time.
const deadlineCheckBytes = cache.EntryOverhead + 16 + 36 + int64(unsafe.Sizeof(time.Time{}))

// claimTimeoutOf validates an execution's claim_timeout (seconds).
func claimTimeoutOf(seconds *float64) (time.Duration, error) {
	if seconds == nil {
		return DefaultClaimTimeout, nil
	}
	if *seconds <= 0 || math.IsNaN(*seconds) || *seconds > maxClaimTimeout.Seconds() {
		return 0, errs.Invalidf("claim_timeout: must be a number of seconds above 0, at most %d", int(maxClaimTimeout.Seconds()))
	}
	return wire.Seconds(*seconds), nil
}

// claimTimeout is the transaction's claim timeout (the default for transactions stored without one).
func (info TransactionInfo) claimTimeout() time.Duration {
	if info.ClaimTimeout <= 0 {
		return DefaultClaimTimeout
	}
	return wire.Seconds(info.ClaimTimeout)
}

// seenLately says whether a node's last sign of life is recent enough that
// another claim need not be written down: within half a heartbeat.
func (s *Service) seenLately(p NodeProgress, now time.Time) bool {
	return p.LastSeen != nil && now.Sub(*p.LastSeen) < s.heartbeat/2
}

// enforceDeadlines ends a running transaction whose current sub-transaction
// missed a deadline (overdue) in one conditional write, the abort of a failed
// task; st then shows the ended transaction. A lost race is store.ErrConflict,
// which the callers retry. One process checks one transaction at most every
// deadlineCheckEvery.
func (s *Service) enforceDeadlines(ctx context.Context, st *txState) error {
	if st.parent.Status != StatusRunning {
		return nil
	}
	now := s.now()
	if last, ok := s.deadlineChecks.Get(st.parent.UUID); ok && now.Sub(last) < deadlineCheckEvery && !now.Before(last) {
		return nil
	}
	s.deadlineChecks.Add(st.parent.UUID, now)
	node, msg, err := s.overdue(ctx, st, now)
	if err != nil || msg == "" {
		return err
	}
	ops, err := s.missedOps(ctx, st, node, msg, now)
	if err != nil {
		return err
	}
	return s.idx.Write(ctx, ops...)
}

// missedOps fails a node that missed a deadline (msg) when the run can lose
// it (Astute failed the nodes that did not answer so: a task it was running
// failed, the rest is dep_failed); otherwise the run ends at once.
func (s *Service) missedOps(ctx context.Context, st *txState, node, msg string, now time.Time) ([]store.Op, error) {
	sub := st.current()
	plan, err := s.loadPlan(ctx, sub.Plan)
	if err != nil {
		return nil, err
	}
	if sub.Stopping != "" || plan.stopReason(append(slices.Clone(sub.FailedNodes), node), node) != "" {
		return st.abortOps(msg, now), nil
	}
	p, rev, err := s.progressOf(ctx, sub, node)
	if err != nil {
		return nil, err
	}
	var slot []store.Op
	task := p.CurrentTask
	if task != "" {
		if slot, err = s.releaseSlot(ctx, sub.UUID, plan, task, node); err != nil {
			return nil, err
		}
		p.Results = append(p.Results, TaskResult{Task: task, Status: StatusError, Message: msg, TimeStart: *p.CurrentStart, TimeEnd: now})
		p.CurrentTask, p.CurrentStart = "", nil
		p.Next++
	}
	return s.failNodeOps(ctx, st, plan, &p, rev, task, msg, now, slot...)
}

// overdue names the first deadline the current sub-transaction's nodes missed, and the node, or "":
//   - a node that has not claimed within the claim timeout from the
//     sub-transaction's start is unreachable;
//   - a node that has claimed but then said nothing (claim, heartbeat,
//     report) for lostHeartbeats heartbeats is lost;
//   - a task still running after its run limit and taskTimeoutGrace timed out.
func (s *Service) overdue(ctx context.Context, st *txState, now time.Time) (node, msg string, err error) {
	sub := st.current()
	if sub.TimeStart == nil {
		return "", "", nil
	}
	progress, err := s.progressByNode(ctx, sub)
	if err != nil {
		return "", "", err
	}
	var plan *frozenPlan
	var first time.Time
	var n string // the node looked at
	missed := func(deadline time.Time, format string, args ...any) {
		if now.After(deadline) && (msg == "" || deadline.Before(first)) {
			first, node, msg = deadline, n, fmt.Sprintf(format, args...)
		}
	}
	claimTimeout := st.parent.claimTimeout()
	for _, n = range sub.Nodes {
		p := progress[n]
		switch {
		case p.Status == StatusReady || p.Status == StatusError:
			continue
		case sub.Stopping != "" && p.CurrentTask == "":
			continue // the run stops: only the tasks in flight are awaited
		case p.LastSeen == nil:
			missed(sub.TimeStart.Add(claimTimeout), "Node %s unreachable: no claim within %s", sub.nodeName(n), claimTimeout)
			continue
		}
		missed(p.LastSeen.Add(lostHeartbeats*s.heartbeat), "Node %s lost: no heartbeat since %s", sub.nodeName(n), p.LastSeen.Format(time.RFC3339))
		if p.CurrentTask == "" || p.CurrentStart == nil {
			continue
		}
		// The task in flight by its id: no node's steps are read (a split plan's head holds the tasks).
		if plan == nil {
			if plan, err = s.loadPlan(ctx, sub.Plan); err != nil {
				return "", "", err
			}
		}
		i := slices.IndexFunc(plan.Tasks, func(t planner.Task) bool { return t.ID == p.CurrentTask })
		if i < 0 {
			continue
		}
		limit := plan.Tasks[i].RunLimit()
		missed(p.CurrentStart.Add(limit+taskTimeoutGrace), "Task %s timed out on node %s after %s", p.CurrentTask, sub.nodeName(n), limit)
	}
	return node, msg, nil
}

// checkDeadlines ends transaction txID if it missed a deadline; ended says it did here.
func (s *Service) checkDeadlines(ctx context.Context, txID string) (ended bool, err error) {
	err = store.RetryConflicts(ctx, "check a transaction's deadlines", func() error {
		st, err := s.readTx(ctx, txID)
		if err != nil {
			return err
		}
		running := st.parent.Status == StatusRunning
		if err := s.enforceDeadlines(ctx, st); err != nil {
			return err
		}
		ended = running && st.parent.Status != StatusRunning
		return nil
	})
	return ended, err
}

// EnforceDeadlines checks the deadlines of every running transaction (those
// holding a cluster's lock), ending those that missed one. The local server
// calls it periodically, so a run fails on time even when nobody looks.
func (s *Service) EnforceDeadlines(ctx context.Context) error {
	locks, err := s.idx.Query(ctx, store.Query{Partition: lockKey(0).Partition})
	if err != nil {
		return err
	}
	var failed []error
	for _, it := range locks {
		var lock clusterLock
		if err := decodeItem(it, &lock); err != nil {
			failed = append(failed, err)
			continue
		}
		if _, err := s.checkDeadlines(ctx, lock.Transaction); err != nil {
			failed = append(failed, fmt.Errorf("transaction %s: %w", lock.Transaction, err))
		}
	}
	return errors.Join(failed...)
}
