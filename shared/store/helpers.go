package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/retry"
)

// SortID formats an integer id as a sort key that orders numerically (zero-padded to 20 digits).
func SortID(id int64) string { return fmt.Sprintf("%020d", id) }

// ParseSortID is the inverse of SortID.
func ParseSortID(s string) (int64, error) { return strconv.ParseInt(s, 10, 64) }

// GetJSON reads the item at k and decodes its value into v, returning the item's revision.
// A missing item returns ErrNotFound.
func GetJSON(ctx context.Context, idx Index, k Key, v any) (int64, error) {
	it, err := idx.Get(ctx, k)
	if err != nil {
		return 0, err
	}
	if err := json.Unmarshal(it.Value, v); err != nil {
		return 0, fmt.Errorf("decode %s/%s: %w", k.Partition, k.Sort, err)
	}
	return it.Revision, nil
}

// counter is the value of an id counter item.
type counter struct {
	Last int64 `json:"last"`
}

// MaxID is the largest integer id: 2^53-1, the largest integer every JSON
// client (JavaScript, jq) reads exactly. Generated ids never pass it.
const MaxID = 1<<53 - 1

// MaxChosenID is the largest id a client may choose: 2^31-1, the largest id
// Nailgun and tuning-box can give a cluster, environment or node (PostgreSQL
// integer columns), so ids equal to the deployment tool's always fit. A chosen
// id moves the automatic ids past it, and more than 2^53-2^31 automatic ids
// remain after the largest: a chosen id never exhausts them.
const MaxChosenID = 1<<31 - 1

// ErrIDTooLarge is returned by ReserveID for an id outside 1..MaxChosenID (a 400).
var ErrIDTooLarge = errs.New(errs.Invalid, "an id a client chooses is an integer from 1 to %d", MaxChosenID)

// ErrIDsExhausted is returned by NextID when the counter has reached MaxID:
// no id is ever handed out twice or wraps around.
var ErrIDsExhausted = errs.New(errs.Conflict, "no free id is left: ids go up to %d", MaxID)

// NextID allocates the next integer id from the counter item at k (1, 2, 3, ...).
// Ids are never handed out twice, even after the entity that had one is deleted;
// an id whose entity was never created is simply skipped.
func NextID(ctx context.Context, idx Index, k Key) (int64, error) {
	return advanceCounter(ctx, idx, k, func(last int64) (int64, error) {
		if last >= MaxID {
			return 0, ErrIDsExhausted
		}
		return last + 1, nil
	})
}

// ReserveID makes sure the counter at k never hands out id (used when a client
// chooses an id): automatic ids continue after it. An id outside
// 1..MaxChosenID is ErrIDTooLarge, nothing is changed.
func ReserveID(ctx context.Context, idx Index, k Key, id int64) error {
	if id < 1 || id > MaxChosenID {
		return ErrIDTooLarge
	}
	_, err := advanceCounter(ctx, idx, k, func(last int64) (int64, error) { return max(last, id), nil })
	return err
}

// advanceCounter moves the counter at k from its last value to next(last) with a
// compare-and-swap, retrying (RetryConflicts) when another writer moved it first.
func advanceCounter(ctx context.Context, idx Index, k Key, next func(last int64) (int64, error)) (int64, error) {
	var n int64
	err := RetryConflicts(ctx, "allocate an id", func() error {
		var c counter
		rev, err := GetJSON(ctx, idx, k, &c)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return err
		}
		if n, err = next(c.Last); err != nil {
			return err
		}
		if rev > 0 && n == c.Last {
			return nil
		}
		op := Create(k, mustJSON(counter{Last: n}))
		if rev > 0 {
			op = Update(k, mustJSON(counter{Last: n}), rev)
		}
		return idx.Write(ctx, op)
	})
	return n, err
}

// RetryConflicts runs attempt again while it fails with ErrConflict, under the
// one retry policy (retry.Default: bounded attempts, jittered exponential
// backoff, the context's deadline respected). An attempt reads fresh state,
// decides and writes conditionally, so a conflict means another writer got in
// between and the attempt is simply redone. When the attempts are used up the
// answer is a 409 naming what: too many concurrent changes, try again.
func RetryConflicts(ctx context.Context, what string, attempt func() error) error {
	return RetryConflictsOn(ctx, nil, "", what, attempt)
}

// RetryConflictsOn is RetryConflicts for a hot item, such as a document's
// head: the backoff reached on key carries over to its next write through c
// (nil: none), so writers in other processes stop colliding at every write.
func RetryConflictsOn(ctx context.Context, c *retry.Contention, key, what string, attempt func() error) error {
	first := 0
	if c != nil {
		first = c.Step(key)
	}
	failed, err := retry.Default.DoFrom(ctx, first, attempt, func(err error) bool { return errors.Is(err, ErrConflict) })
	if c != nil {
		c.Done(key, first, failed)
	}
	if errors.Is(err, retry.ErrExhausted) {
		return errs.Conflictf("%s: too many concurrent changes; try again", what)
	}
	return err
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with plain structs
	}
	return b
}

// HashOf is the name of data in a Blobs store: its hex SHA-256.
func HashOf(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
