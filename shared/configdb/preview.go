package configdb

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
)

// Preview is what a document write would do, computed and stored nowhere: the
// version it would create and, for every registered node of the environment
// whose effective document it would change, how.
type Preview struct {
	Version  int
	Affected []AffectedNode
}

// AffectedNode is one node's effective document change.
type AffectedNode struct {
	Node    Node
	Changes Diff
}

// NodeLister lists the registered nodes of an environment. A NodeRegistry that
// also implements it gives dry runs the nodes they affect.
type NodeLister interface {
	InEnvironment(ctx context.Context, env int64) ([]Node, error)
}

// PreviewPut is PutDocument with nothing stored.
func (s *Service) PreviewPut(ctx context.Context, ref DocRef, kind Kind, body []byte, ifMatch string) (Preview, error) {
	edit, err := putEdit(body)
	if err != nil {
		return Preview{}, err
	}
	return s.preview(ctx, ref, kind, ifMatch, edit)
}

// PreviewKeys is EditKeys with nothing stored.
func (s *Service) PreviewKeys(ctx context.Context, ref DocRef, kind Kind, edit KeyEdit, ops []KeyOp, ifMatch string) (Preview, error) {
	return s.preview(ctx, ref, kind, ifMatch, keysEdit(ref, kind, edit, ops))
}

func (s *Service) preview(ctx context.Context, ref DocRef, kind Kind, ifMatch string, edit documentEdit) (Preview, error) {
	audit.NothingWritten(ctx) // a dry run has no audit record
	sn, err := s.snapshots.load(ctx, ref, 0, "")
	if err != nil {
		return Preview{}, err
	}
	cur, doc, err := s.nextDocument(ctx, sn, kind, ifMatch, edit)
	if err != nil {
		return Preview{}, err
	}
	p := Preview{Version: 1, Affected: []AffectedNode{}}
	if cur != nil {
		p.Version = cur.Version.Version + 1
	}
	sha := sha256Hex(doc)
	parsed, err := parseDocument(doc, sha)
	if err != nil {
		return Preview{}, err
	}
	nodes, err := s.environmentNodes(ctx, sn.env)
	if err != nil {
		return Preview{}, err
	}
	written := layer{depth: sn.depth(), sha: sha, kind: kind, doc: parsed}
	for _, n := range nodes {
		changes, ok, err := s.nodeChanges(ctx, sn, n, written)
		if err != nil {
			return Preview{}, err
		}
		if ok && !changes.Empty() {
			p.Affected = append(p.Affected, AffectedNode{Node: n, Changes: changes})
		}
	}
	return p, nil
}

// environmentNodes lists the environment's registered nodes when it has a node level.
func (s *Service) environmentNodes(ctx context.Context, env envRecord) ([]Node, error) {
	lister, ok := s.nodes.(NodeLister)
	if !ok || !slices.ContainsFunc(env.Levels, func(l Level) bool { return IsNodeLevel(l.Name) }) {
		return nil, nil
	}
	nodes, err := lister.InEnvironment(ctx, env.ID)
	slices.SortFunc(nodes, func(a, b Node) int { return cmp.Compare(a.ID, b.ID) })
	return nodes, err
}

// nodeChanges diffs node n's effective document now and with the written layer
// in place; ok is false when the write is not on the node's level path or the
// node's path does not resolve (a node not placed on the levels above it).
func (s *Service) nodeChanges(ctx context.Context, written *snapshot, n Node, w layer) (Diff, bool, error) {
	nodeLevel := slices.IndexFunc(written.env.Levels, func(l Level) bool { return IsNodeLevel(l.Name) })
	ref := DocRef{
		Env:      strconv.FormatInt(written.env.ID, 10),
		Levels:   []LevelValue{{Name: written.env.Levels[nodeLevel].Name, Value: strconv.FormatInt(n.ID, 10)}},
		Resource: strconv.FormatInt(written.resdef.ID, 10),
	}
	sn, err := s.snapshots.load(ctx, ref, 0, "")
	if e := (*errs.Error)(nil); errors.As(err, &e) {
		return Diff{}, false, nil
	}
	if err != nil {
		return Diff{}, false, err
	}
	if sn.depth() < written.depth() || levelPath(sn.levels[:written.depth()]) != levelPath(written.levels) {
		return Diff{}, false, nil
	}
	mode := mergeMode(MergeDefault, sn.resdef)
	before := sn.effectiveLayers(Values)
	after := make([]layer, 0, len(before)+1)
	for d := 0; d <= sn.depth(); d++ {
		for _, k := range kinds {
			if d == w.depth && k == w.kind {
				after = append(after, w)
				continue
			}
			after = sn.addLayer(after, d, k, Values)
		}
	}
	a, err := s.mergedBody(ctx, before, mode)
	if err != nil {
		return Diff{}, false, err
	}
	b, err := s.mergedBody(ctx, after, mode)
	if err != nil {
		return Diff{}, false, err
	}
	d, err := diffJSON(a, b)
	return d, err == nil, err
}

// mergedBody merges layers and encodes the result (no caches: a dry run's
// merge is never asked again).
func (s *Service) mergedBody(ctx context.Context, layers []layer, mode MergeMode) ([]byte, error) {
	merge := s.merge
	if mode == MergeDeep {
		merge = s.deepMerge
	}
	m, err := merge(ctx, layers)
	if err != nil {
		return nil, err
	}
	return m.encode(layers, nil, "")
}
