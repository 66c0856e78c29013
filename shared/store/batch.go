package store

import "fmt"

// CheckBatch returns nil for a write batch every backend accepts, else why
// not: too many operations, a key named twice, an invalid key
// (ErrInvalidKey), a value over MaxValueSize (ErrValueTooLarge), or an
// unknown operation or condition kind. None of these is ErrConflict: callers
// retry conflicts, and an invalid batch would fail forever.
func CheckBatch(ops []Op) error {
	if len(ops) > MaxWriteBatch {
		return fmt.Errorf("write batch of %d operations: at most %d allowed", len(ops), MaxWriteBatch)
	}
	seen := make(map[Key]bool, len(ops))
	for _, op := range ops {
		if err := CheckKey(op.Key); err != nil {
			return err
		}
		if seen[op.Key] {
			return fmt.Errorf("write batch names %s/%s more than once", op.Key.Partition, op.Key.Sort)
		}
		seen[op.Key] = true
		switch op.Kind {
		case OpPut:
			if len(op.Value) > MaxValueSize {
				return fmt.Errorf("put %s/%s: value of %d bytes: %w", op.Key.Partition, op.Key.Sort, len(op.Value), ErrValueTooLarge)
			}
		case OpDelete, OpCheck:
		default:
			return fmt.Errorf("write %s/%s: unknown operation kind %d", op.Key.Partition, op.Key.Sort, op.Kind)
		}
		if op.Cond.Kind < Always || op.Cond.Kind > RevisionIs {
			return fmt.Errorf("write %s/%s: unknown condition kind %d", op.Key.Partition, op.Key.Sort, op.Cond.Kind)
		}
	}
	return nil
}

// CheckBatchGet returns nil for keys every backend's BatchGet accepts: at
// most MaxBatchGet, each valid (ErrInvalidKey).
func CheckBatchGet(keys []Key) error {
	if len(keys) > MaxBatchGet {
		return fmt.Errorf("batch get of %d keys: at most %d allowed", len(keys), MaxBatchGet)
	}
	for _, k := range keys {
		if err := CheckKey(k); err != nil {
			return err
		}
	}
	return nil
}

// HoldsAt reports whether c is met by an item at revision rev (0 = absent),
// for a backend that checks conditions itself.
func (c Cond) HoldsAt(rev int64) bool {
	switch c.Kind {
	case MustNotExist:
		return rev == 0
	case MustExist:
		return rev > 0
	case RevisionIs:
		return rev > 0 && rev == c.Revision
	default:
		return true
	}
}
