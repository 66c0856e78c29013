package configdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"iter"
	"sync"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Key history: which versions of a document changed the value at one key, found
// by walking the document's versions back and comparing each with the one
// before it. Stored documents are canonical, so equal values have equal bytes.

// walkBudget is how many versions one walk back compares at most: a key's
// history comes a page of that many versions at a time, and explain names a
// value unchanged over that many versions as written by the oldest of them
// (KeySource.AtOrBefore).
const walkBudget = 256

// versionsBefore yields the versions of the document at partition older than
// before, newest first, reading the index a page (versionsPage) at a time.
func (s *Service) versionsBefore(ctx context.Context, partition string, before int) iter.Seq2[Version, error] {
	return func(yield func(Version, error) bool) {
		after := store.SortID(int64(before))
		for {
			items, err := s.idx.Query(ctx, store.Query{Partition: partition, After: after, Limit: versionsPage, Reverse: true})
			if err != nil {
				yield(Version{}, err)
				return
			}
			for _, it := range items {
				var v Version
				if err := json.Unmarshal(it.Value, &v); err != nil {
					yield(Version{}, err)
					return
				}
				if !yield(v, nil) {
					return
				}
				after = it.Sort
			}
			if len(items) < versionsPage {
				return
			}
		}
	}
}

// docVersion is one version of a document, its content read on first use.
type docVersion struct {
	Version
	doc *parsedDoc
}

func (s *Service) content(ctx context.Context, v *docVersion) (*parsedDoc, error) {
	if v.doc == nil {
		d, err := s.documents.document(ctx, v.SHA256)
		if err != nil {
			return nil, err
		}
		v.doc = d
	}
	return v.doc, nil
}

// valueAt returns the canonical JSON of v's value at path; nil when nothing is there.
func (s *Service) valueAt(ctx context.Context, v *docVersion, path []string) (json.RawMessage, error) {
	d, err := s.content(ctx, v)
	if err != nil {
		return nil, err
	}
	raw, ok := d.fields[path[0]]
	if !ok || len(path) == 1 {
		return raw, nil
	}
	node, err := decodeJSON(raw)
	if err != nil {
		return nil, err
	}
	sub, ok := lookupPath(node, path[1:])
	if !ok {
		return nil, nil
	}
	return encodeJSON(sub), nil
}

// changedAt reports whether newer holds another value at path than older
// (nil: the version before the first, where nothing is).
func (s *Service) changedAt(ctx context.Context, newer, older *docVersion, path []string) (bool, error) {
	if older == nil {
		v, err := s.valueAt(ctx, newer, path)
		return v != nil, err
	}
	if newer.SHA256 == older.SHA256 {
		return false, nil
	}
	dn, err := s.content(ctx, newer)
	if err != nil {
		return false, err
	}
	do, err := s.content(ctx, older)
	if err != nil {
		return false, err
	}
	rn, inNewer := dn.fields[path[0]]
	ro, inOlder := do.fields[path[0]]
	if inNewer == inOlder && bytes.Equal(rn, ro) {
		return false, nil // the whole top-level value is the same
	}
	if len(path) == 1 {
		return true, nil
	}
	vn, err := s.valueAt(ctx, newer, path)
	if err != nil {
		return false, err
	}
	vo, err := s.valueAt(ctx, older, path)
	return (vn == nil) != (vo == nil) || !bytes.Equal(vn, vo), err
}

// walkBack calls step with each version of the document at partition from top
// down to the first, each with the version before it (nil below the first),
// until step answers false or walkBudget versions were stepped; it returns
// the last version stepped and whether the walk went down to the first one.
// The versions' documents are read a window at a time, concurrently (blob
// reads are round trips on S3): two first, as a recent change needs no more,
// then twice as many each time up to versionsPage.
func (s *Service) walkBack(ctx context.Context, partition string, top Version, step func(newer, older *docVersion) (more bool, err error)) (last *docVersion, complete bool, err error) {
	newer := &docVersion{Version: top}
	steps, window := 0, 2
	var ahead []*docVersion
	// flush steps through ahead; stop: the walk is over.
	flush := func() (stop bool, err error) {
		if err := s.prefetch(ctx, ahead); err != nil {
			return true, err
		}
		for _, older := range ahead {
			more, err := step(newer, older)
			if steps++; err != nil || !more || steps == walkBudget {
				return true, err
			}
			newer = older
		}
		ahead, window = ahead[:0], min(2*window, versionsPage)
		return false, nil
	}
	for v, err := range s.versionsBefore(ctx, partition, top.Version) {
		if err != nil {
			return nil, false, err
		}
		if ahead = append(ahead, &docVersion{Version: v}); len(ahead) < window && steps+len(ahead) < walkBudget {
			continue
		}
		if stop, err := flush(); stop {
			return newer, false, err
		}
	}
	if stop, err := flush(); stop {
		return newer, false, err
	}
	_, err = step(newer, nil)
	return newer, true, err
}

// prefetch reads the documents of versions, concurrently.
func (s *Service) prefetch(ctx context.Context, versions []*docVersion) error {
	var wg sync.WaitGroup
	failures := make([]error, len(versions))
	for i, v := range versions {
		wg.Go(func() { _, failures[i] = s.content(ctx, v) })
	}
	wg.Wait()
	return errors.Join(failures...)
}

// writersOf finds, for each of paths, the newest version of the document at
// partition up to top whose value there differs from the version before it:
// the version that wrote the value top holds there (top holds a value at
// each path). A path whose value did not change within walkBudget versions
// gets the oldest of them, at or before.
func (s *Service) writersOf(ctx context.Context, partition string, top Version, paths [][]string) ([]KeySource, error) {
	out := make([]KeySource, len(paths))
	pending := make([]int, len(paths))
	for i := range pending {
		pending[i] = i
	}
	last, complete, err := s.walkBack(ctx, partition, top, func(newer, older *docVersion) (bool, error) {
		if older == nil {
			return false, nil // the first version: it wrote what is still pending
		}
		open := pending[:0]
		for _, i := range pending {
			changed, err := s.changedAt(ctx, newer, older, paths[i])
			if err != nil {
				return false, err
			}
			if changed {
				out[i] = sourceOf(newer.Version)
			} else {
				open = append(open, i)
			}
		}
		pending = open
		return len(pending) > 0, nil
	})
	if err != nil {
		return nil, err
	}
	for _, i := range pending {
		// Not changed since last: set by it or (the walk stopped) earlier.
		out[i] = sourceOf(last.Version)
		out[i].AtOrBefore = !complete
	}
	return out, nil
}

func sourceOf(v Version) KeySource {
	return KeySource{Version: v.Version, CreatedAt: v.CreatedAt, WrittenBy: v.WrittenBy}
}

// KeyChange is a version in which the value at a key changed: Old and New are
// the canonical JSON of the value in the version before it and in it, nil
// where the key was not there.
type KeyChange struct {
	Version
	Old, New json.RawMessage
}

// KeyHistory is a page of a key's history, newest first.
type KeyHistory struct {
	Changes []KeyChange
	// Before, when not zero, continues the history: older changes may be in
	// the versions before this one (HistoryPage.Before).
	Before int
}

// HistoryPage selects a page of a key's history.
type HistoryPage struct {
	// Before, when not zero, looks only at the versions older than this one.
	Before int
	// Limit is the most changes a page holds (0: DefaultHistoryLimit).
	Limit int
}

// The page sizes of a key's history.
const (
	DefaultHistoryLimit = 20
	MaxHistoryLimit     = 100
)

// History lists the versions of the kind document at ref in which the value
// at key (a dot path, "a.b.0") changed, newest first, each with its old and
// new value and its writer. A page ends after Limit changes or after
// walkBudget versions compared, whichever comes first, and then names where
// the next one starts. A key that never held a value has no changes (not an error).
func (s *Service) History(ctx context.Context, ref DocRef, kind Kind, key string, page HistoryPage) (KeyHistory, error) {
	switch {
	case key == "":
		return KeyHistory{}, errs.Invalidf("key is required: a dot path such as nova.workers")
	case page.Before < 0:
		return KeyHistory{}, errs.Invalidf("before must be a positive version number")
	case page.Limit < 0 || page.Limit > MaxHistoryLimit:
		return KeyHistory{}, errs.Invalidf("limit must be between 1 and %d", MaxHistoryLimit)
	case page.Limit == 0:
		page.Limit = DefaultHistoryLimit
	}
	sn, err := s.snapshots.load(ctx, ref, 0, "")
	if err != nil {
		return KeyHistory{}, err
	}
	h := sn.addressed(kind)
	if h == nil || page.Before == 1 {
		return KeyHistory{Changes: []KeyChange{}}, nil
	}
	levels := levelPath(sn.levels)
	top := h.Version
	if page.Before > 0 && page.Before <= top.Version {
		if _, err := store.GetJSON(ctx, s.idx, versionKey(sn.env.ID, sn.resdef.ID, kind, levels, page.Before-1), &top); err != nil {
			return KeyHistory{}, err
		}
	}
	partition := versionsPartition(sn.env.ID, sn.resdef.ID, kind, levels)
	path := splitDotPath(key)
	out := KeyHistory{Changes: []KeyChange{}}
	last, complete, err := s.walkBack(ctx, partition, top, func(newer, older *docVersion) (bool, error) {
		changed, err := s.changedAt(ctx, newer, older, path)
		if err != nil || !changed {
			return true, err
		}
		c := KeyChange{Version: newer.Version}
		if c.New, err = s.valueAt(ctx, newer, path); err != nil {
			return false, err
		}
		if older != nil {
			if c.Old, err = s.valueAt(ctx, older, path); err != nil {
				return false, err
			}
		}
		out.Changes = append(out.Changes, c)
		return len(out.Changes) < page.Limit, nil
	})
	if err != nil {
		return KeyHistory{}, err
	}
	if !complete && last.Version.Version > 1 {
		out.Before = last.Version.Version
	}
	return out, nil
}
