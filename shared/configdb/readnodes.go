package configdb

import (
	"context"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ReadNodes answers q at each of nodes: q's level path with the node level
// appended, as Read answers it for that path. The index items of every
// node's read are fetched together (one BatchGet per 100 keys; the
// environment, the definition and the levels above the nodes are read
// once), then the documents through the cache of blobs, several at once: a
// plan reads the deployment data of a whole cluster. A node whose items show
// the cache stale, or that does not resolve, is read alone (Read retries or
// names the error). The answer maps each node as given to its document.
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
	docs := make([]*Document, len(nodes))
	readAlone := func(i int) (err error) {
		docs[i], err = s.Read(ctx, queries[i])
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
	// The documents are read concurrently: each may be a blob store's round trip.
	group, gctx := errgroup.WithContext(ctx)
	group.SetLimit(nodeReaders)
	for _, r := range reads {
		group.Go(func() error {
			sn, err := s.snapshotOf(queries[r.i].DocRef, g, r.p, r.sk, items, 0, q.Kind)
			if err != nil || sn == nil {
				return readAlone(r.i)
			}
			docs[r.i], err = s.readLoaded(gctx, sn, queries[r.i])
			return err
		})
	}
	if err := group.Wait(); err != nil {
		return nil, err
	}
	out := make(map[string]*Document, len(nodes))
	for i, n := range nodes {
		out[n] = docs[i]
	}
	return out, nil
}

// nodeReaders is how many documents ReadNodes reads at once.
const nodeReaders = 8
