package audit

import (
	"context"
	"strconv"
	"sync"

	"github.com/tuningbox/tuningbox/shared/store"
)

// Write is the audit record of one request's write in the making, carried by
// the request's context. The HTTP layer begins it (Log.Begin) with who writes;
// the code that makes the write says what it was under where it knows it:
// a handler notes the environment (Note), a domain that commits in one atomic
// store write adds the record to that write (CommitOps), so the record and
// what it records exist together or not at all. Once the request succeeded,
// Finish appends the record unless a write committed it already.
type Write struct {
	log *Log

	mu        sync.Mutex
	rec       Record
	committed bool
	// unwritten: the request stored nothing (a dry run).
	unwritten bool
	// polling: the request is a poll, recorded only if changed (Polling).
	polling, changed bool
}

type writeKey struct{}

// Begin starts the record of a write made under the returned context: rec
// names the principal and the request (method, path, and its request id,
// which the writes that record who made them, document versions, store too).
func (l *Log) Begin(ctx context.Context, rec Record) (context.Context, *Write) {
	w := &Write{log: l, rec: rec}
	return context.WithValue(ctx, writeKey{}, w), w
}

// writeOf returns the write begun under ctx, nil outside one.
func writeOf(ctx context.Context) *Write {
	w, _ := ctx.Value(writeKey{}).(*Write)
	return w
}

// Writer returns who makes the audited write under ctx: the begun record's
// Principal, Role, TokenID and RequestID; false outside an audited write.
func Writer(ctx context.Context) (Record, bool) {
	w := writeOf(ctx)
	if w == nil {
		return Record{}, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rec, true
}

// Note records that the write under ctx was under environment env (0: none)
// and created document version version (0: none). Outside an audited write
// (a read, a dry run, a test calling a handler directly) it does nothing.
func Note(ctx context.Context, env int64, version int) {
	w := writeOf(ctx)
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note(env, version)
}

func (w *Write) note(env int64, version int) {
	if env > 0 {
		w.rec.Environment = strconv.FormatInt(env, 10)
	}
	if version > 0 {
		w.rec.Version = version
	}
}

// NothingWritten records that the request under ctx stores nothing, though
// its route is a write (a dry run, which needs the write's rights): it leaves
// no record. Outside an audited write it does nothing.
func NothingWritten(ctx context.Context) {
	if w := writeOf(ctx); w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.unwritten = true
	}
}

// Polling records that the request under ctx is a poll (an agent's claim):
// it is recorded only if Changed says it changed more than when its client
// was last seen, so that idle claims and heartbeats leave no record. Outside
// an audited write it does nothing.
func Polling(ctx context.Context) {
	if w := writeOf(ctx); w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.polling = true
	}
}

// Changed records that the poll under ctx (Polling) committed a change worth
// auditing (it handed out a task, passed steps, finished a node). Outside an
// audited write it does nothing.
func Changed(ctx context.Context) {
	if w := writeOf(ctx); w != nil {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.changed = true
	}
}

// CommitOps notes env and version (as Note) and returns the operations that
// store the record, for the caller to commit in the same atomic write as what
// it records; nil outside an audited write, or when the record cannot be made
// (Finish appends it then). A write that retries calls it once per attempt.
func CommitOps(ctx context.Context, env int64, version int) []store.Op {
	w := writeOf(ctx)
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.note(env, version)
	rec := w.rec
	// A write committed with its record answers 204: it has no body.
	rec.Status = 204
	_, ops, err := w.log.Ops(rec)
	if err != nil {
		return nil
	}
	w.committed = true
	return ops
}

// Finish appends the record of a request that answered status, unless the
// status is not a success, a write committed the record already (CommitOps),
// the request wrote nothing (NothingWritten) or it was a poll that changed
// nothing (Polling, Changed).
func (w *Write) Finish(ctx context.Context, status int) (Record, error) {
	w.mu.Lock()
	rec, skip := w.rec, w.committed || w.unwritten || w.polling && !w.changed
	w.mu.Unlock()
	if status < 200 || status > 299 || skip {
		return rec, nil
	}
	rec.Status = status
	return w.log.Append(ctx, rec)
}
