package core

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/store"
)

// CollectGarbage runs one blob garbage collection sweep over b (grace period
// store.DefaultGCMinAge) and logs what it found.
func CollectGarbage(ctx context.Context, b store.Backend, logger *slog.Logger) error {
	start := time.Now()
	rep, err := store.CollectGarbage(ctx, b.Index, b.Blobs, store.DefaultGCMinAge)
	if err != nil {
		logger.ErrorContext(ctx, "blob garbage collection failed", "err", err)
		return err
	}
	logger.InfoContext(ctx, "blob garbage collection", "referenced", rep.Referenced, "unreferenced", rep.Unreferenced,
		"removed", rep.Removed, "duration", time.Since(start))
	return nil
}

// expireAudit deletes the audit records older than retention (none when 0)
// and logs how many it deleted.
func expireAudit(ctx context.Context, idx store.Index, retention time.Duration, logger *slog.Logger) {
	n, err := audit.New(idx, nil, audit.WithRetention(retention)).Expire(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		logger.InfoContext(ctx, "audit record expiry stopped at its deadline; the next sweep goes on", "deleted", n)
		return
	}
	if err != nil {
		logger.ErrorContext(ctx, "audit record expiry failed", "err", err)
	}
	if n > 0 {
		logger.InfoContext(ctx, "audit records expired", "deleted", n, "retention", retention)
	}
}

// CollectGarbageEvery runs CollectGarbage and deletes the audit records older
// than auditRetention (none when 0) at once, then every interval until ctx
// ends (the local server's sweeps; on AWS a scheduled function runs the same,
// LambdaGC). The first sweep at start-up
// collects the orphans older than the grace period that a previous run left,
// however short its runs are.
func CollectGarbageEvery(ctx context.Context, b store.Backend, interval, auditRetention time.Duration, logger *slog.Logger) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		sweepRecovering(ctx, "blob garbage collection", logger, func() { _ = CollectGarbage(ctx, b, logger) })
		sweepRecovering(ctx, "audit record expiry", logger, func() { expireAudit(ctx, b.Index, auditRetention, logger) })
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sweepRecovering is one background sweep: no request's handler is around it
// to recover a panic (a fault of the store's client), so it logs the panic
// with its stack and the server, and the next sweep, go on.
func sweepRecovering(ctx context.Context, what string, logger *slog.Logger, sweep func()) {
	defer func() {
		if r := recover(); r != nil {
			logger.ErrorContext(ctx, what+" panicked", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	sweep()
}

// LambdaGC is the start-up of the scheduled garbage collection function: its
// handler runs one Sweep per invocation (the EventBridge rule's event is ignored).
func LambdaGC(ctx context.Context, getenv func(string) string, logger *slog.Logger) (func(context.Context) error, error) {
	b, cfg, err := LambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context) error { return Sweep(ctx, b, cfg.AuditRetention, logger) }, nil
}

// Sweep is the scheduled function's sweep: CollectGarbage, then the audit
// records older than auditRetention (none when 0), as the local server's
// sweeps do. On AWS the table's TTL deletes only the records written with an
// expiry: not those written before the retention existed, or under a longer
// one or none. Its error is the blob collection's (the expiry's is logged).
func Sweep(ctx context.Context, b store.Backend, auditRetention time.Duration, logger *slog.Logger) error {
	err := CollectGarbage(ctx, b, logger)
	expiry := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		expiry, cancel = context.WithDeadline(ctx, deadline.Add(-sweepMargin))
		defer cancel()
	}
	expireAudit(expiry, b.Index, auditRetention, logger)
	return err
}

// sweepMargin is what the scheduled sweep leaves of its invocation's time:
// the audit expiry stops then, and the next run goes on with the oldest
// records left, so that a backlog of millions (a table from before the
// retention) drains over hourly runs instead of timing out every one.
const sweepMargin = time.Minute
