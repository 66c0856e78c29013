// Package store defines the storage contract every backend implements: an
// Index of small, revisioned JSON items with atomic conditional writes, and a
// content-addressed store of immutable Blobs. The embedded backend
// (shared/store/bolt), the AWS backend (shared/store/awsstore: DynamoDB for
// the index, S3 for blobs) and the in-memory backend most tests use
// (shared/store/mem) all pass the contract suite in shared/store/storetest.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// ErrNotFound is returned by Get and Blobs.Get when the key or hash does not exist.
// It is the only way "absent" is reported: a nil error always comes with a value.
var ErrNotFound = errors.New("store: not found")

// ErrConflict is returned by Index.Write when any condition of the batch does not hold.
// Nothing of the batch was applied.
var ErrConflict = errors.New("store: condition failed")

// ErrInvalidKey is returned (wrapped) by every operation given an empty key or
// a key longer than MaxKeyLen; nothing is read or written. It is an
// errs.Invalid error: such keys come from names or level paths a client sent,
// which no entity can have, so the answer is a 400, not a server fault.
var ErrInvalidKey = errs.New(errs.Invalid, "a name, level value or path is empty or too long to store (keys are at most %d bytes)", MaxKeyLen)

// ErrValueTooLarge is returned (wrapped) by Index.Write for a put whose value
// is over MaxValueSize; nothing of its batch is written. It is an errs.TooLarge
// error (413): what a client sent makes the document too large. A domain that
// knows which field does checks before it writes and names the field.
var ErrValueTooLarge = errs.New(errs.TooLarge, "a document is larger than the %d bytes the store keeps in one item", MaxValueSize)

// CheckKey returns nil for a key every backend can store, else ErrInvalidKey.
func CheckKey(k Key) error {
	if k.Partition == "" || k.Sort == "" || len(k.Partition) > MaxKeyLen || len(k.Sort) > MaxKeyLen {
		return fmt.Errorf("%w: %.40q/%.40q", ErrInvalidKey, k.Partition, k.Sort)
	}
	return nil
}

// CheckPartition is CheckKey for the partition of a Query.
func CheckPartition(partition string) error {
	return CheckKey(Key{Partition: partition, Sort: "-"})
}

// Limits every backend enforces, so that what works on the embedded backend also fits DynamoDB.
const (
	// MaxWriteBatch is the most operations one Index.Write accepts (DynamoDB's transaction limit).
	MaxWriteBatch = 100
	// MaxBatchGet is the most keys one Index.BatchGet accepts (DynamoDB's BatchGetItem limit).
	MaxBatchGet = 100
	// MaxKeyLen is the longest partition or sort key in bytes.
	MaxKeyLen = 1024
	// MaxValueSize is the largest item value in bytes (DynamoDB's 400 KB item
	// cap, less room for keys), which every backend enforces: ErrValueTooLarge.
	MaxValueSize = 350 << 10
)

// Key addresses one index item. Items of one Partition are listed together by
// Query, in ascending byte order of Sort. Neither may be empty; both are at most MaxKeyLen bytes.
type Key struct {
	Partition string
	Sort      string
}

// Item is one stored index entry.
type Item struct {
	Key
	// Value is the item's payload, usually a JSON document; at most MaxValueSize bytes.
	Value []byte
	// Revision is maintained by the store: 1 when the item is created, +1 on every Put.
	// Callers use it for optimistic concurrency (Cond.Revision).
	Revision int64
}

// CondKind says what must hold for a write operation to apply.
type CondKind int

const (
	// Always: no condition.
	Always CondKind = iota
	// MustNotExist: the item must be absent (create).
	MustNotExist
	// MustExist: the item must be present, at any revision.
	MustExist
	// RevisionIs: the item must be present at exactly Cond.Revision.
	RevisionIs
)

// Cond is the condition of one write operation.
type Cond struct {
	Kind     CondKind
	Revision int64
}

// OpKind says what a write operation does.
type OpKind int

const (
	// OpPut stores Value at Key.
	OpPut OpKind = iota
	// OpDelete removes Key. Deleting a missing item is not an error (unless its Cond says so).
	OpDelete
	// OpCheck writes nothing; the batch fails unless Cond holds for Key (DynamoDB's ConditionCheck).
	OpCheck
)

// Op is one operation of an atomic write batch.
type Op struct {
	Kind  OpKind
	Key   Key
	Value []byte // for OpPut
	Cond  Cond
	// Expires, when set on a put, is when the item may go: the AWS backend
	// stores it for the table's TTL, which deletes the item within days
	// after; the embedded and in-memory backends ignore it (the item's owner
	// deletes it, as audit.Log.Expire does). A put without it clears an earlier one.
	Expires time.Time
}

// Put returns an unconditional put.
func Put(k Key, value []byte) Op { return Op{Kind: OpPut, Key: k, Value: value} }

// Create returns a put that requires the item to be absent.
func Create(k Key, value []byte) Op {
	return Op{Kind: OpPut, Key: k, Value: value, Cond: Cond{Kind: MustNotExist}}
}

// Update returns a put that requires the item to be at revision rev.
func Update(k Key, value []byte, rev int64) Op {
	return Op{Kind: OpPut, Key: k, Value: value, Cond: Cond{Kind: RevisionIs, Revision: rev}}
}

// Delete returns an unconditional delete.
func Delete(k Key) Op { return Op{Kind: OpDelete, Key: k} }

// DeleteAt returns a delete that requires the item to be at revision rev.
func DeleteAt(k Key, rev int64) Op {
	return Op{Kind: OpDelete, Key: k, Cond: Cond{Kind: RevisionIs, Revision: rev}}
}

// Check returns an operation that fails the batch unless c holds for k.
func Check(k Key, c Cond) Op { return Op{Kind: OpCheck, Key: k, Cond: c} }

// Query selects items of one partition.
type Query struct {
	Partition string
	// Prefix limits the result to sort keys that start with it ("" = all).
	Prefix string
	// After, when set, starts the listing strictly after this sort key (before it when Reverse).
	After string
	// Limit caps the number of items returned (0 = no cap).
	Limit int
	// Reverse lists in descending sort-key order.
	Reverse bool
}

// Index is the store of entities, name and UUID lookups, version heads and version lists.
// Implementations are safe for concurrent use; every read sees every write that returned before it began.
type Index interface {
	// Get returns the item at k, or ErrNotFound.
	Get(ctx context.Context, k Key) (Item, error)
	// BatchGet returns the items that exist among keys (at most MaxBatchGet keys), in one round trip
	// where the backend allows it. Missing keys are simply absent from the map.
	BatchGet(ctx context.Context, keys []Key) (map[Key]Item, error)
	// Query lists the items selected by q, in sort-key order.
	Query(ctx context.Context, q Query) ([]Item, error)
	// Write applies ops (at most MaxWriteBatch, each key at most once) atomically: either
	// every condition holds and every op is applied, or ErrConflict is returned and nothing changes.
	Write(ctx context.Context, ops ...Op) error
}

// Generational is implemented by an Index that is the only writer of its
// items (the embedded store: its process holds the file's lock). Generation
// changes after every Write that may have committed anything, so what a reader
// computed from reads made after reading the generation still holds while the
// generation is unchanged. An index that others write too (DynamoDB) does not
// implement it; a wrapper of an index that does may, when every write goes
// through the wrapper to it (as shared/app's call counter does).
type Generational interface {
	Generation() uint64
}

// Blobs stores immutable byte blobs addressed by the hex SHA-256 of their content.
// Implementations are safe for concurrent use.
type Blobs interface {
	// Put stores data and returns its hex SHA-256. Putting the same content twice is fine.
	Put(ctx context.Context, data []byte) (hash string, err error)
	// Get returns the content of hash, or ErrNotFound. The returned slice must not be modified.
	Get(ctx context.Context, hash string) ([]byte, error)
	// List calls fn with every stored blob's hash and the time it was first
	// stored (the zero time when the backend does not know it), in no set order.
	List(ctx context.Context, fn func(hash string, created time.Time) error) error
	// Delete removes the blob (every stored version of it); a missing blob is not an error.
	// Only the garbage collector (CollectGarbage) deletes blobs.
	Delete(ctx context.Context, hash string) error
}

// Backend is a complete storage backend.
type Backend struct {
	Index Index
	Blobs Blobs
	// Close releases the backend's resources (files, connections); it may be nil.
	Close func() error
	// Backup writes a consistent copy of the whole store to w while it serves
	// and returns the bytes written; nil where the backend is backed up by its
	// provider (AWS: DynamoDB point-in-time recovery and S3 versioning).
	Backup func(ctx context.Context, w io.Writer) (int64, error)
}

type bulkKey struct{}

// WithBulk marks ctx as carrying one of many concurrent writes (index
// writes, blob puts) of a bulk load (an environment import): a backend may
// hold such a write briefly to commit it together with others (the embedded
// store: one transaction, one disk sync), trading each write's latency for
// the load's throughput. Each write keeps its own conditions and atomicity.
func WithBulk(ctx context.Context) context.Context { return context.WithValue(ctx, bulkKey{}, true) }

// IsBulk reports whether ctx was marked by WithBulk.
func IsBulk(ctx context.Context) bool { return ctx.Value(bulkKey{}) != nil }
