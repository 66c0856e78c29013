package app

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// RunDeadlineCheck is how often the local server checks the deadlines of
// running deployment transactions.
const RunDeadlineCheck = 5 * time.Second

// EnforceRunDeadlinesEvery ends, every interval until ctx ends, the running
// deployment transactions that missed a deadline (an unreachable or lost
// node, a task past its timeout), so a run fails on time even when no agent
// or operator looks at it. Every request about a run checks them too, which
// is all there is on AWS.
func EnforceRunDeadlinesEvery(ctx context.Context, b store.Backend, interval time.Duration, logger *slog.Logger) {
	// Deadlines need no cluster lookups: the service goes without them.
	svc := graphs.NewService(b.Index, b.Blobs, nil)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			enforceRecovering(ctx, svc, logger)
		}
	}
}

// enforceRecovering is one background deadline check: no request's handler
// is around it to recover a panic, so it logs the panic with its stack and
// the server, and the next check, go on.
func enforceRecovering(ctx context.Context, svc *graphs.Service, logger *slog.Logger) {
	defer func() {
		if r := recover(); r != nil {
			logger.ErrorContext(ctx, "run deadline check panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	if err := svc.EnforceDeadlines(ctx); err != nil && ctx.Err() == nil {
		logger.WarnContext(ctx, "run deadline check failed", "err", err)
	}
}
