package configdb

import (
	"context"
	"slices"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// checkOptions refuses combinations of read options that mean nothing.
func (q ReadQuery) checkOptions() error {
	switch {
	case q.Explain && !q.Effective:
		return errs.Invalidf("explain needs effective")
	case q.Merge != MergeDefault && !q.Effective:
		return errs.Invalidf("merge needs effective")
	case q.Above && !q.Effective:
		return errs.Invalidf("above needs effective")
	case q.Explain && q.ShowLookup:
		return errs.Invalidf("explain and show_lookup exclude each other")
	case q.Version > 0 && !q.AsOf.IsZero():
		return errs.Invalidf("version and as_of exclude each other")
	}
	return nil
}

// versionsPage is how many versions one step back in time reads.
const versionsPage = 16

// rewind returns loaded with every head replaced by the version that was current
// at asOf: the newest version created at or before it (none: the document did
// not exist yet). Only documents changed since asOf cost a query. The
// environment's hierarchy and the resource definition are read as they are
// now. loaded itself is left as it is: loaded snapshots are shared (snapshotLoader).
func (s *Service) rewind(ctx context.Context, loaded *snapshot, asOf time.Time) (*snapshot, error) {
	sn := new(*loaded)
	sn.heads = slices.Clone(loaded.heads)
	sn.plain = plainAnswer{} // loaded's, not of these heads
	for d := range sn.heads {
		for i, k := range kinds {
			h := sn.heads[d][i]
			if h == nil || !h.CreatedAt.After(asOf) {
				continue
			}
			v, err := s.versionAt(ctx, versionsPartition(sn.env.ID, sn.resdef.ID, k, levelPath(sn.levels[:d])), h.Version.Version, asOf)
			if err != nil {
				return nil, err
			}
			sn.heads[d][i] = nil
			if v != nil {
				sn.heads[d][i] = &head{Version: *v}
			}
		}
	}
	return sn, nil
}

// versionAt returns the newest version older than before created at or before asOf (nil: none).
func (s *Service) versionAt(ctx context.Context, partition string, before int, asOf time.Time) (*Version, error) {
	for v, err := range s.versionsBefore(ctx, partition, before) {
		if err != nil {
			return nil, err
		}
		if !v.CreatedAt.After(asOf) {
			return &v, nil
		}
	}
	return nil, nil
}

// ReadAt selects a past state of a document: at an instant, or (the addressed
// document) a version; zero values read the latest.
type ReadAt struct {
	AsOf    time.Time
	Version int
}
