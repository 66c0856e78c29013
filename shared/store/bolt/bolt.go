// Package bolt is the embedded storage backend: the index and the blobs live in
// one bbolt file, dir/tuningbox.db, which one process at a time may open.
package bolt

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	bbolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/tuningbox/tuningbox/shared/store"
)

// FileName is the database file inside the data directory.
const FileName = "tuningbox.db"

var (
	indexBucket = []byte("index")
	blobBucket  = []byte("blobs")
	// blobTimeBucket holds when each blob was first stored (unix nanoseconds,
	// big-endian); blobs stored before it existed have no entry.
	blobTimeBucket = []byte("blob-times")
)

// revisionLen is the size of the big-endian revision that precedes every stored index value.
const revisionLen = 8

// Open opens the database in dir, creating the directory and a new database
// only where no file exists. A file that exists but is not a sound database
// (empty, truncated, no valid metadata) is ErrDamaged: it is never replaced.
// Open fails after one second if another process holds the database open.
func Open(dir string) (store.Backend, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return store.Backend{}, fmt.Errorf("create data directory: %w", err)
	}
	path := filepath.Join(dir, FileName)
	if _, err := os.Lstat(path); errors.Is(err, os.ErrNotExist) {
		if err := createFresh(path); err != nil {
			return store.Backend{}, err
		}
	}
	// Before bbolt touches a page: a truncated file faults (SIGBUS) or panics inside it.
	if err := inspect(path); err != nil {
		return store.Backend{}, err
	}
	db, err := openExisting(path, false)
	if err != nil {
		return store.Backend{}, err
	}
	return store.Backend{Index: &index{db: db}, Blobs: &blobs{db: db}, Close: db.Close, Backup: backupOf(db)}, nil
}

// createBuckets makes the buckets a database of this version needs.
func createBuckets(tx *bbolt.Tx) error {
	for _, name := range [][]byte{indexBucket, blobBucket, blobTimeBucket} {
		if _, err := tx.CreateBucketIfNotExists(name); err != nil {
			return err
		}
	}
	return nil
}

// ErrDamaged is returned (wrapped, with what is wrong) by Open and Check for a
// database file that is truncated, has no valid metadata, or fails bbolt's
// consistency check: the server refuses to start on it rather than fault later.
var ErrDamaged = errors.New("the database file is damaged; restore it from a backup")

// openError tells a damaged file from other failures of bbolt.Open.
func openError(path string, err error) error {
	for _, damage := range []error{berrors.ErrInvalid, berrors.ErrChecksum, berrors.ErrVersionMismatch, berrors.ErrInvalidMapping} {
		if errors.Is(err, damage) {
			return fmt.Errorf("open %s: %w (%v)", path, ErrDamaged, err)
		}
	}
	if fi, serr := os.Stat(path); serr == nil && fi.Mode().IsRegular() && !errors.Is(err, os.ErrPermission) {
		return fmt.Errorf("open %s: %w (%v)", path, ErrDamaged, err)
	}
	return fmt.Errorf("open %s: %w", path, err)
}

// CheckReport describes a database file that passed Check.
type CheckReport struct {
	Path       string
	Bytes      int64
	IndexItems int
	Blobs      int
}

// Check opens dir's database read-only and verifies it: metadata, size and
// every page (bbolt's consistency check). A damaged file is ErrDamaged with
// the problems found; a file in use by a server is an error too.
func Check(dir string) (CheckReport, error) {
	return CheckFile(filepath.Join(dir, FileName))
}

// CheckFile is Check of the database file at path (a backup, say).
func CheckFile(path string) (CheckReport, error) {
	rep := CheckReport{Path: path}
	if err := inspect(path); err != nil {
		return rep, err
	}
	db, err := openExisting(path, true)
	if err != nil {
		return rep, err
	}
	defer db.Close()
	return rep, db.View(func(tx *bbolt.Tx) error {
		rep.Bytes = tx.Size()
		var problems []string
		for err := range tx.Check() {
			if len(problems) < 10 {
				problems = append(problems, err.Error())
			}
		}
		if len(problems) > 0 {
			return fmt.Errorf("check %s: %w: %s", path, ErrDamaged, strings.Join(problems, "; "))
		}
		for name, n := range map[string]*int{string(indexBucket): &rep.IndexItems, string(blobBucket): &rep.Blobs} {
			if b := tx.Bucket([]byte(name)); b != nil {
				*n = b.Stats().KeyN
			}
		}
		return nil
	})
}

// index stores each item under a key made of the length-prefixed partition followed
// by the sort key, so one partition's items are contiguous, ordered by sort key,
// and never mixed with those of a partition whose name merely extends it ("a" vs "ab").
type index struct {
	db *bbolt.DB
	// generation counts the Writes that reached bbolt (store.Generational):
	// this process is the file's only writer.
	generation atomic.Uint64
}

// Generation implements store.Generational.
func (x *index) Generation() uint64 { return x.generation.Load() }

// appendKey appends the stored form of k to dst. With an empty Sort it is the
// prefix shared by every item of k.Partition.
func appendKey(dst []byte, k store.Key) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(k.Partition)))
	dst = append(dst, k.Partition...)
	return append(dst, k.Sort...)
}

// storedKey returns the stored form of k in a buffer of the right size.
func storedKey(k store.Key) []byte {
	return appendKey(make([]byte, 0, binary.MaxVarintLen64+len(k.Partition)+len(k.Sort)), k)
}

// decodeItem copies a stored value out of bbolt's memory map into an Item.
func decodeItem(k store.Key, v []byte) store.Item {
	return store.Item{Key: k, Value: bytes.Clone(v[revisionLen:]), Revision: revisionOf(v)}
}

func revisionOf(v []byte) int64 { return int64(binary.BigEndian.Uint64(v[:revisionLen])) }

func (x *index) Get(ctx context.Context, k store.Key) (store.Item, error) {
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	if err := store.CheckKey(k); err != nil {
		return store.Item{}, err
	}
	var (
		it    store.Item
		found bool
	)
	err := x.db.View(func(tx *bbolt.Tx) error {
		if v := tx.Bucket(indexBucket).Get(storedKey(k)); v != nil {
			it, found = decodeItem(k, v), true
		}
		return nil
	})
	if err != nil {
		return store.Item{}, fmt.Errorf("get %s/%s: %w", k.Partition, k.Sort, err)
	}
	if !found {
		return store.Item{}, fmt.Errorf("get %s/%s: %w", k.Partition, k.Sort, store.ErrNotFound)
	}
	return it, nil
}

func (x *index) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.CheckBatchGet(keys); err != nil {
		return nil, err
	}
	items := make(map[store.Key]store.Item, len(keys))
	err := x.db.View(func(tx *bbolt.Tx) error {
		// One cursor and one key buffer serve every lookup, and one allocation holds
		// the copies of all values: this is the read path of every Hiera lookup.
		c := tx.Bucket(indexBucket).Cursor()
		stored := make([][]byte, len(keys))
		var key []byte
		size := 0
		for i, k := range keys {
			key = appendKey(key[:0], k)
			if sk, v := c.Seek(key); bytes.Equal(sk, key) {
				stored[i] = v
				size += len(v) - revisionLen
			}
		}
		values := make([]byte, 0, size)
		for i, v := range stored {
			if v == nil {
				continue
			}
			start := len(values)
			values = append(values, v[revisionLen:]...)
			items[keys[i]] = store.Item{Key: keys[i], Value: values[start:len(values):len(values)], Revision: revisionOf(v)}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("batch get: %w", err)
	}
	return items, nil
}

func (x *index) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.CheckPartition(q.Partition); err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if q.Limit < 0 {
		return nil, fmt.Errorf("query: negative limit %d", q.Limit)
	}
	part := storedKey(store.Key{Partition: q.Partition})
	prefix := append(bytes.Clone(part), q.Prefix...)
	var items []store.Item
	collect := func(k, v []byte) bool {
		if k == nil || !bytes.HasPrefix(k, prefix) {
			return false
		}
		items = append(items, decodeItem(store.Key{Partition: q.Partition, Sort: string(k[len(part):])}, v))
		return q.Limit == 0 || len(items) < q.Limit
	}
	err := x.db.View(func(tx *bbolt.Tx) error {
		c := tx.Bucket(indexBucket).Cursor()
		if q.Reverse {
			// Start just below the exclusive upper bound: the end of the prefix range, or After.
			upper := prefixEnd(prefix)
			if q.After != "" {
				if after := append(bytes.Clone(part), q.After...); upper == nil || bytes.Compare(after, upper) < 0 {
					upper = after
				}
			}
			k, v := c.Last()
			if upper != nil {
				if k, _ = c.Seek(upper); k == nil {
					k, v = c.Last()
				} else {
					k, v = c.Prev()
				}
			}
			for ok := collect(k, v); ok; ok = collect(c.Prev()) {
			}
			return nil
		}
		// Start at the inclusive lower bound: the prefix, or the key just after After.
		lower := prefix
		if q.After != "" {
			if after := append(append(bytes.Clone(part), q.After...), 0); bytes.Compare(after, lower) > 0 {
				lower = after
			}
		}
		for ok := collect(c.Seek(lower)); ok; ok = collect(c.Next()) {
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q.Partition, err)
	}
	return items, nil
}

// prefixEnd returns the smallest key greater than every key starting with p,
// or nil when there is none (p is all 0xff).
func prefixEnd(p []byte) []byte {
	end := bytes.Clone(p)
	for i := len(end) - 1; i >= 0; i-- {
		if end[i] < 0xff {
			end[i]++
			return end[:i+1]
		}
	}
	return nil
}

func (x *index) Write(ctx context.Context, ops ...store.Op) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := store.CheckBatch(ops); err != nil {
		return err
	}
	if len(ops) == 0 {
		return nil
	}
	keys := make([][]byte, len(ops))
	for i, op := range ops {
		keys[i] = storedKey(op.Key)
	}
	// Counted after Update returns, committed or not, never before the commit:
	// whoever reads the new generation reads what the write committed.
	defer x.generation.Add(1)
	commit := x.db.Update
	if store.IsBulk(ctx) {
		// Its function may run twice (alone, after a batch it was in failed):
		// it checks every condition again.
		commit = x.db.Batch
	}
	return commit(func(tx *bbolt.Tx) error {
		// The writer lock may have been waited for: a request that ended
		// meanwhile (its deadline passed) must not commit anything.
		if err := ctx.Err(); err != nil {
			return err
		}
		b := tx.Bucket(indexBucket)
		// Check every condition before changing anything; keys are distinct, so no
		// op of the batch can change what another op's condition sees.
		revs := make([]int64, len(ops))
		for i, op := range ops {
			if v := b.Get(keys[i]); v != nil {
				revs[i] = revisionOf(v)
			}
			if !op.Cond.HoldsAt(revs[i]) {
				return fmt.Errorf("write %s/%s: %w", op.Key.Partition, op.Key.Sort, store.ErrConflict)
			}
		}
		for i, op := range ops {
			var err error
			switch op.Kind {
			case store.OpPut:
				v := make([]byte, revisionLen+len(op.Value))
				binary.BigEndian.PutUint64(v, uint64(revs[i]+1))
				copy(v[revisionLen:], op.Value)
				err = b.Put(keys[i], v)
			case store.OpDelete:
				if revs[i] > 0 {
					err = b.Delete(keys[i])
				}
			}
			if err != nil {
				return fmt.Errorf("write %s/%s: %w", op.Key.Partition, op.Key.Sort, err)
			}
		}
		return nil
	})
}

// blobs stores each blob under its hex SHA-256.
type blobs struct{ db *bbolt.DB }

func (s *blobs) Put(ctx context.Context, data []byte) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	sum := sha256.Sum256(data)
	hash := hex.EncodeToString(sum[:])
	key := []byte(hash)
	// Most puts of content-addressed data repeat existing content; a read
	// transaction avoids taking the single writer lock for them.
	var exists bool
	err := s.db.View(func(tx *bbolt.Tx) error {
		_, exists = lookupBlob(tx, key)
		return nil
	})
	if err == nil && !exists {
		commit := s.db.Update
		if store.IsBulk(ctx) {
			commit = s.db.Batch // its function may run twice: it checks for the blob again
		}
		err = commit(func(tx *bbolt.Tx) error {
			if _, exists := lookupBlob(tx, key); exists {
				return nil // stored meanwhile: keep its first time
			}
			if err := tx.Bucket(blobTimeBucket).Put(key, binary.BigEndian.AppendUint64(nil, uint64(time.Now().UnixNano()))); err != nil {
				return err
			}
			return tx.Bucket(blobBucket).Put(key, data)
		})
	}
	if err != nil {
		return "", fmt.Errorf("put blob %s: %w", hash, err)
	}
	return hash, nil
}

func (s *blobs) Get(ctx context.Context, hash string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var (
		data  []byte
		found bool
	)
	err := s.db.View(func(tx *bbolt.Tx) error {
		var v []byte
		if v, found = lookupBlob(tx, []byte(hash)); found {
			data = append([]byte{}, v...) // copied out of the memory map; non-nil even when empty
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("get blob %s: %w", hash, err)
	}
	if !found {
		return nil, fmt.Errorf("get blob %s: %w", hash, store.ErrNotFound)
	}
	return data, nil
}

func (s *blobs) List(ctx context.Context, fn func(hash string, created time.Time) error) error {
	type entry struct {
		hash    string
		created time.Time
	}
	var all []entry
	err := s.db.View(func(tx *bbolt.Tx) error {
		times := tx.Bucket(blobTimeBucket)
		return tx.Bucket(blobBucket).ForEach(func(k, _ []byte) error {
			e := entry{hash: string(k)}
			if t := times.Get(k); len(t) == 8 {
				e.created = time.Unix(0, int64(binary.BigEndian.Uint64(t)))
			}
			all = append(all, e)
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	// fn runs outside the read transaction: it may write (delete) meanwhile.
	for _, e := range all {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e.hash, e.created); err != nil {
			return err
		}
	}
	return nil
}

func (s *blobs) Delete(ctx context.Context, hash string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return s.db.Update(func(tx *bbolt.Tx) error {
		if err := tx.Bucket(blobTimeBucket).Delete([]byte(hash)); err != nil {
			return err
		}
		return tx.Bucket(blobBucket).Delete([]byte(hash))
	})
}

// lookupBlob finds the blob stored under key. It compares keys rather than testing
// the value for nil because an empty blob may come back as a nil value.
func lookupBlob(tx *bbolt.Tx, key []byte) ([]byte, bool) {
	k, v := tx.Bucket(blobBucket).Cursor().Seek(key)
	return v, bytes.Equal(k, key)
}
