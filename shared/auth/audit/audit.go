// Package audit keeps an append-only record of every successful write to the
// API: who did what, when, with which outcome and which document version.
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
)

// Record is one audited write.
type Record struct {
	// ID orders records by time; it is also the paging cursor.
	ID        string    `json:"id"`
	Time      time.Time `json:"time"`
	Principal string    `json:"principal"`
	Role      string    `json:"role"`
	// TokenID is the API token used, empty for a password login.
	TokenID string `json:"token_id,omitempty"`
	// RequestID names the request; a document version it created names it too.
	RequestID string `json:"request_id,omitempty"`
	Method    string `json:"method"`
	Path      string `json:"path"`
	Status    int    `json:"status"`
	// Environment is the environment id the write was under, if any.
	Environment string `json:"environment,omitempty"`
	// Version is the document version the write created, when it created one.
	Version int `json:"version,omitempty"`
}

const (
	pAll    = "audit#all"
	pEnvFmt = "audit#env#%s"
)

// DefaultLimit and MaxLimit bound one page of List.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
)

// Log appends and lists audit records.
type Log struct {
	idx store.Index
	now func() time.Time
}

// New returns the audit log over idx; now is the clock (nil: the system clock).
func New(idx store.Index, now func() time.Time) *Log {
	if now == nil {
		now = func() time.Time { return time.Now().UTC() }
	}
	return &Log{idx: idx, now: now}
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
	return rec, ops, nil
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
