// Package audit keeps an append-only record of every successful write to the
// API: who did what, when, with which outcome and which document version.
// Records are kept for the log's retention (WithRetention): on DynamoDB each
// carries its expiry for the table's TTL to delete it, elsewhere Expire
// (the local server's periodic sweep) deletes those past it.
//
// Index layout (partition prefix "audit#"); each record is written under both
// partitions in one atomic write, newest last in sort order:
//
//	audit#all      / <unix nanos, 20 digits>#<random> -> Record
//	audit#env#<id> / <unix nanos, 20 digits>#<random> -> Record (writes under an environment)
package audit

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Record is one audited write: the wire's AuditRecord, stored as it is answered.
type Record = wire.AuditRecord

const (
	pAll    = "audit#all"
	pEnvFmt = "audit#env#%s"
)

// DefaultLimit and MaxLimit bound one page of List.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// DefaultRetention is how long records are kept unless configured otherwise
// (TUNINGBOX_AUDIT_RETENTION, serve --audit-retention).
const DefaultRetention = 90 * 24 * time.Hour

// Log appends and lists audit records.
type Log struct {
	idx store.Index
	now func() time.Time
	// retention is how long a record is kept (0: for ever).
	retention time.Duration
}

// Option configures a Log.
type Option func(*Log)

// WithRetention keeps each record for d after its time (0, the default: for
// ever): it is written with that expiry, and Expire deletes it after.
func WithRetention(d time.Duration) Option { return func(l *Log) { l.retention = d } }

// New returns the audit log over idx; now is the clock (nil: the system clock).
func New(idx store.Index, now func() time.Time, opts ...Option) *Log {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	l := &Log{idx: idx, now: now}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Append stores rec, setting its ID and Time.
func (l *Log) Append(ctx context.Context, rec Record) (Record, error) {
	rec, ops, err := l.Ops(rec)
	if err != nil {
		return Record{}, err
	}
	if err := l.idx.Write(ctx, ops...); err != nil {
		return Record{}, fmt.Errorf("append audit record: %w", err)
	}
	return rec, nil
}

// Ops sets rec's ID and Time and returns the write operations that store it,
// for a caller that commits them in the same atomic write as what rec records.
func (l *Log) Ops(rec Record) (Record, []store.Op, error) {
	var suffix [6]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return Record{}, nil, fmt.Errorf("audit id randomness: %w", err)
	}
	rec.Time = l.now()
	rec.ID = store.SortID(rec.Time.UnixNano()) + "-" + hex.EncodeToString(suffix[:])
	value, err := json.Marshal(rec)
	if err != nil {
		return Record{}, nil, err
	}
	ops := []store.Op{store.Create(store.Key{Partition: pAll, Sort: rec.ID}, value)}
	if rec.Environment != "" {
		ops = append(ops, store.Create(store.Key{Partition: envPartition(rec.Environment), Sort: rec.ID}, value))
	}
	if l.retention > 0 {
		for i := range ops {
			ops[i].Expires = rec.Time.Add(l.retention)
		}
	}
	return rec, ops, nil
}

// expireBatch is how many records Expire deletes in one atomic write: each
// is two items at most (the log of every write and its environment's).
const expireBatch = store.MaxWriteBatch / 2

// Expire deletes the records older than the retention, oldest first, and
// returns how many it deleted; with no retention it deletes nothing. A record
// and its copy under its environment go in the same atomic write, so an
// interrupted sweep leaves no half of one, and the next sweep goes on.
func (l *Log) Expire(ctx context.Context) (int, error) {
	if l.retention <= 0 {
		return 0, nil
	}
	// Record IDs start with their time, so every ID below this one is older.
	cutoff := store.SortID(l.now().Add(-l.retention).UnixNano())
	deleted := 0
	for {
		items, err := l.idx.Query(ctx, store.Query{Partition: pAll, Limit: expireBatch})
		if err != nil {
			return deleted, err
		}
		var ops []store.Op
		n := 0
		for _, it := range items {
			if it.Sort >= cutoff {
				break
			}
			// A record that cannot be read goes too (its environment's copy,
			// which it would name, stays): stopping at it kept every later one.
			var rec Record
			_ = json.Unmarshal(it.Value, &rec)
			ops = append(ops, store.Delete(it.Key))
			if rec.Environment != "" {
				ops = append(ops, store.Delete(store.Key{Partition: envPartition(rec.Environment), Sort: it.Sort}))
			}
			n++
		}
		if n == 0 {
			return deleted, nil
		}
		if err := l.idx.Write(ctx, ops...); err != nil {
			return deleted, fmt.Errorf("expire audit records: %w", err)
		}
		deleted += n
		if n < len(items) || len(items) < expireBatch {
			return deleted, nil
		}
	}
}

func envPartition(env string) string { return fmt.Sprintf(pEnvFmt, env) }

// Query selects records, newest first.
type Query struct {
	// Environment limits the listing to writes under that environment id ("" = all writes).
	Environment string
	// Before continues a listing: only records older than this record ID.
	Before string
	// Limit is the page size: DefaultLimit when 0, at most MaxLimit.
	Limit int
}

// List returns one page of records, newest first.
func (l *Log) List(ctx context.Context, q Query) ([]Record, error) {
	switch {
	case q.Limit < 0 || q.Limit > MaxLimit:
		return nil, errs.Invalidf("limit must be between 1 and %d", MaxLimit)
	case q.Limit == 0:
		q.Limit = DefaultLimit
	}
	partition := pAll
	if q.Environment != "" {
		partition = envPartition(q.Environment)
	}
	if len(partition) > store.MaxKeyLen || len(q.Before) > store.MaxKeyLen {
		return nil, errs.Invalidf("environment or cursor is too long")
	}
	items, err := l.idx.Query(ctx, store.Query{Partition: partition, After: q.Before, Limit: q.Limit, Reverse: true})
	if err != nil {
		return nil, err
	}
	out := make([]Record, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Value, &out[i]); err != nil {
			return nil, fmt.Errorf("decode audit record %s: %w", it.Sort, err)
		}
	}
	return out, nil
}
