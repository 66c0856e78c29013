package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Blob garbage collection. Writers store a blob before the index write that
// references it, so a write that loses its race (or a crash between the two)
// leaves an unreferenced blob. References are kept in the index, in the same
// atomic write as what references the blob, so that the collector needs no
// knowledge of the domain:
//
//	blob#ref#<hash> / <random>  -> {}   one per write that referenced the blob (PutBlob's Ops)
//	blob#guard      / <hash>    -> {"condemned": bool}, the blob's collection state
//	blob#gc         / epoch     -> {"since": time}  since when every blob is stored with its references kept
//
// The guard makes a sweep racing a write safe. A writer reads the guard before
// it stores the blob and commits its reference only if the guard's revision is
// unchanged (PutBlob's Ops). The collector condemns a blob (moves its guard)
// before it looks for references a last time, deletes the blob only when
// there are none, and then frees the guard. So a reference committed before the
// condemnation is seen and the blob kept; one committed after it fails its
// condition, and the writer stores the blob again once the guard is free.
//
// The epoch protects blobs of builds that kept no references (before the
// collector existed): those are never collected. It is set when a store is
// first opened by a build that keeps references (InitGC, at every start-up),
// not at its first sweep: a store that holds no blob then gets the zero time,
// so every orphan it will ever hold is collected, whenever it was made; one
// that already holds blobs of unknown history gets the present.
const (
	blobRefPrefix  = "blob#ref#"
	blobGuards     = "blob#guard"
	blobGCPartKey  = "blob#gc"
	blobEpochSort  = "epoch"
	blobRefIDBytes = 8
)

// DefaultGCMinAge is the grace period of CollectGarbage: a blob younger than
// this is kept even when nothing references it (its write may still be under way).
const DefaultGCMinAge = time.Hour

// BlobRef is a blob stored for a write: Ops must be part of the write's atomic
// batch, which then records the reference and fails if a collection of the
// blob began since PutBlob read its guard (ErrConflict: retry the attempt,
// calling PutBlob again).
type BlobRef struct {
	Hash string
	Ops  []Op
}

type blobGuard struct {
	Condemned bool `json:"condemned"`
}

func guardKey(hash string) Key { return Key{Partition: blobGuards, Sort: hash} }

func refPartition(hash string) string { return blobRefPrefix + hash }

// PutBlob stores data for a write that will reference it; see BlobRef. A blob
// being collected right now is ErrConflict.
func PutBlob(ctx context.Context, idx Index, blobs Blobs, data []byte) (BlobRef, error) {
	hash := HashOf(data)
	var g blobGuard
	rev, err := GetJSON(ctx, idx, guardKey(hash), &g)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return BlobRef{}, err
	}
	if g.Condemned {
		return BlobRef{}, fmt.Errorf("blob %s is being collected: %w", hash, ErrConflict)
	}
	if _, err := blobs.Put(ctx, data); err != nil {
		return BlobRef{}, err
	}
	cond := Cond{Kind: MustNotExist}
	if rev > 0 {
		cond = Cond{Kind: RevisionIs, Revision: rev}
	}
	var id [blobRefIDBytes]byte
	if _, err := rand.Read(id[:]); err != nil {
		return BlobRef{}, err
	}
	return BlobRef{Hash: hash, Ops: []Op{
		Create(Key{Partition: refPartition(hash), Sort: hex.EncodeToString(id[:])}, []byte("{}")),
		Check(guardKey(hash), cond),
	}}, nil
}

// GCReport is what a sweep found: blobs with references, blobs without, and
// how many of those it removed (the others are younger than the grace period,
// or older than the epoch).
type GCReport struct {
	Referenced   int `json:"referenced"`
	Unreferenced int `json:"unreferenced"`
	Removed      int `json:"removed"`
}

// CollectGarbage removes the blobs no index item references that were stored
// after the epoch and at least minAge ago. It is safe to run while writes go on
// and while another sweep runs. On a store without an epoch it sets one first (InitGC).
func CollectGarbage(ctx context.Context, idx Index, blobs Blobs, minAge time.Duration) (GCReport, error) {
	var rep GCReport
	epoch, err := gcEpoch(ctx, idx, blobs)
	if err != nil {
		return rep, err
	}
	cutoff := time.Now().Add(-minAge)
	type stored struct {
		hash    string
		created time.Time
	}
	var all []stored
	if err := blobs.List(ctx, func(hash string, created time.Time) error {
		all = append(all, stored{hash, created})
		return nil
	}); err != nil {
		return rep, fmt.Errorf("list blobs: %w", err)
	}
	for _, b := range all {
		referenced, err := hasRefs(ctx, idx, b.hash)
		if err != nil {
			return rep, err
		}
		if referenced {
			rep.Referenced++
			continue
		}
		rep.Unreferenced++
		if !b.created.After(epoch) || b.created.After(cutoff) {
			continue
		}
		removed, err := collect(ctx, idx, blobs, b.hash)
		if err != nil {
			return rep, err
		}
		if removed {
			rep.Removed++
		}
	}
	return rep, nil
}

// collect condemns hash, removes it if no reference appeared, and frees its guard.
func collect(ctx context.Context, idx Index, blobs Blobs, hash string) (bool, error) {
	var g blobGuard
	rev, err := GetJSON(ctx, idx, guardKey(hash), &g)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return false, err
	}
	if g.Condemned {
		return false, nil // another sweep is at it
	}
	condemn := Create(guardKey(hash), mustJSON(blobGuard{Condemned: true}))
	if rev > 0 {
		condemn = Update(guardKey(hash), mustJSON(blobGuard{Condemned: true}), rev)
	}
	if err := idx.Write(ctx, condemn); err != nil {
		if errors.Is(err, ErrConflict) {
			return false, nil // a writer or another sweep got in: leave it to the next sweep
		}
		return false, err
	}
	// From here no new reference can commit; one committed before is seen now.
	// The guard is freed whatever happens, also when ctx ended meanwhile.
	free := func() error {
		return idx.Write(context.WithoutCancel(ctx), Put(guardKey(hash), mustJSON(blobGuard{})))
	}
	referenced, err := hasRefs(ctx, idx, hash)
	if err == nil && !referenced {
		err = blobs.Delete(ctx, hash)
	}
	if ferr := free(); err == nil {
		err = ferr
	}
	return err == nil && !referenced, err
}

func hasRefs(ctx context.Context, idx Index, hash string) (bool, error) {
	items, err := idx.Query(ctx, Query{Partition: refPartition(hash), Limit: 1})
	return len(items) > 0, err
}

// InitGC gives the store its epoch if it has none: the zero time when it
// holds no blob yet (every blob it will hold is stored with its references
// kept, so every orphan is collectable), else the present (its blobs may come
// from a build that kept no references). Call it at start-up, before writes.
func InitGC(ctx context.Context, idx Index, blobs Blobs) error {
	_, err := gcEpoch(ctx, idx, blobs)
	return err
}

// errFound stops a listing at its first blob.
var errFound = errors.New("found")

// gcEpoch returns the epoch, setting it (InitGC) when there is none.
func gcEpoch(ctx context.Context, idx Index, blobs Blobs) (time.Time, error) {
	k := Key{Partition: blobGCPartKey, Sort: blobEpochSort}
	var e struct {
		Since time.Time `json:"since"`
	}
	_, err := GetJSON(ctx, idx, k, &e)
	if err == nil {
		return e.Since, nil
	}
	if !errors.Is(err, ErrNotFound) {
		return time.Time{}, err
	}
	err = blobs.List(ctx, func(string, time.Time) error { return errFound })
	switch {
	case errors.Is(err, errFound):
		e.Since = time.Now().UTC()
	case err != nil:
		return time.Time{}, fmt.Errorf("list blobs: %w", err)
	}
	value, _ := json.Marshal(e)
	if err := idx.Write(ctx, Create(k, value)); err != nil && !errors.Is(err, ErrConflict) {
		return time.Time{}, err
	}
	return gcEpoch(ctx, idx, blobs)
}
