package configdb

import (
	"context"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ReadNodes answers q at each of nodes: q's level path with the node level
// appended, as Read answers it for that path. The index items of every
// node's read are fetched together (one BatchGet per 100 keys; the
// environment, the definition and the levels above the nodes are read
// once), then the documents through the cache of blobs: a plan reads the
// deployment data of a whole cluster. A node whose items show the cache
// stale, or that does not resolve, is read alone (Read retries or names the
// error). The answer maps each node as given to its document.
func (s *Service) ReadNodes(ctx context.Context, q ReadQuery, nodes []string) (map[string]*Document, error) {
	if q.Version != 0 {
		return nil, errs.Invalidf("a read at many nodes reads their latest or as_of versions")
	}
	if err := q.checkOptions(); err != nil {
		return nil, err
	}
	queries := make([]ReadQuery, len(nodes))
	for i, n := range nodes {
		queries[i] = q
		queries[i].Levels = append(slices.Clip(q.Levels), LevelValue{Name: NodeLevel, Value: n})
	}
	out := make(map[string]*Document, len(nodes))
	readAlone := func(i int) error {
		d, err := s.Read(ctx, queries[i])
		out[nodes[i]] = d
		return err
	}
	g, err := s.guessOf(ctx, q.DocRef)
	if err != nil {
		return nil, err
	}
	type batched struct {
		i  int
		p  *placement
		sk snapshotKeys
	}
	var reads []batched
	var keys []store.Key
	seen := map[store.Key]bool{}
	for i := range queries {
		p, err := s.place(ctx, g.env, queries[i].Levels)
		if err != nil || p == nil {
			if err := readAlone(i); err != nil {
				return nil, err
			}
			continue
		}
		sk, err := s.snapshotKeys(queries[i].DocRef, g, p, 0, q.Kind)
		if err != nil {
			return nil, err
		}
		for _, k := range sk.keys {
			if !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
		reads = append(reads, batched{i: i, p: p, sk: sk})
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	for _, r := range reads {
		sn, err := s.snapshotOf(queries[r.i].DocRef, g, r.p, r.sk, items, 0, q.Kind)
		if err != nil || sn == nil {
			if err := readAlone(r.i); err != nil {
				return nil, err
			}
			continue
		}
		if out[nodes[r.i]], err = s.readLoaded(ctx, sn, queries[r.i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}
