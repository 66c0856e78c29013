package graphs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NodeDocument is a node's deployment data as the ConfigDB answers it: the
// effective document's JSON and its ETag.
type NodeDocument struct {
	Body []byte
	ETag string
}

// DataPin records the deployment data a node's conditions read in a run:
// when it was read and the ETag it had, so that a later run can read it back
// (the ConfigDB's as_of) as the node's old data.
type DataPin struct {
	At   time.Time `json:"at"`
	ETag string    `json:"etag"`
}

// planRequest is what a plan is made from.
type planRequest struct {
	cluster   int64
	graphType string
	merged    MergedGraph
	run       GraphRun
	subgraphs []Subgraph
	nodes     []ClusterNode
	// force ignores the nodes' old data: changed() is true everywhere (Nailgun's force).
	force bool
}

// plan makes the frozen plan of one graph of a cluster on some of its nodes.
func (s *Service) plan(ctx context.Context, req planRequest) (*frozenPlan, error) {
	tasks, filtered, err := freezePlan(req.merged.deps, req.run, req.subgraphs)
	if err != nil {
		return nil, err
	}
	meta, err := s.clusterMetadata(ctx, req.cluster)
	if err != nil {
		return nil, err
	}
	nodes := make([]PlanNode, len(req.nodes))
	for n, node := range req.nodes {
		nodes[n].ClusterNode = node
	}
	var pins map[string]DataPin
	var warnings []string
	if needsData(tasks) {
		if pins, warnings, err = s.loadNodeData(ctx, req, meta, nodes); err != nil {
			return nil, err
		}
	}
	p, err := place(ctx, tasks, filtered, nodes, newTagRules(meta...))
	if err != nil {
		return nil, err
	}
	steps, err := resolveNodes(tasks, p)
	if err != nil {
		return nil, err
	}
	warnings = append(append(slices.Clone(req.merged.deps.warnings), warnings...), p.warnings...)
	return &frozenPlan{Tasks: tasks, Nodes: steps, Limits: p.limits, Data: pins, Warnings: warnings, Unplaced: p.unplaced,
		Groups: faultToleranceGroups(tasks, p)}, nil
}

// clusterMetadata returns the role metadata of a cluster's release, then of
// its plugins in plugin order.
func (s *Service) clusterMetadata(ctx context.Context, cluster int64) ([]EntryMetadata, error) {
	settings, err := s.clusterSettings(ctx, cluster)
	if err != nil {
		return nil, err
	}
	var keys []store.Key
	if settings.ReleaseID != nil {
		keys = append(keys, entryKey(Release, *settings.ReleaseID))
	}
	for _, id := range settings.Plugins {
		keys = append(keys, entryKey(Plugin, id))
	}
	items, err := s.getMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	var out []EntryMetadata
	for _, k := range keys {
		if it, ok := items[k]; ok {
			var e Entry
			if err := decodeItem(it, &e); err != nil {
				return nil, err
			}
			out = append(out, e.EntryMetadata)
		}
	}
	return out, nil
}

// loadNodeData reads each node's deployment data ($) and, unless forced, its
// old data ($%old): the data its last successful run of the graph type read.
// A node whose data did not change since gets the same value as both, so
// comparing them costs nothing.
func (s *Service) loadNodeData(ctx context.Context, req planRequest, meta []EntryMetadata, nodes []PlanNode) (map[string]DataPin, []string, error) {
	resource := DefaultDeploymentInfoResource
	for _, m := range meta {
		if m.DeploymentInfoResource != "" {
			resource = m.DeploymentInfoResource
		}
	}
	ids := make([]string, len(nodes))
	for n := range nodes {
		ids[n] = nodes[n].ID
	}
	docs, err := s.clusters.NodeData(ctx, clusterName(req.cluster), resource, ids, time.Time{})
	if errs.Is(err, errs.NotFound) {
		for n := range nodes {
			nodes[n].Data, nodes[n].Old = map[string]any{}, map[string]any{}
		}
		return nil, []string{fmt.Sprintf("conditions read no data: %s", errs.Message(err))}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	at := s.now()
	pins := make(map[string]DataPin, len(nodes))
	for n := range nodes {
		doc := docs[nodes[n].ID]
		if nodes[n].Data, err = decodeData(doc.Body); err != nil {
			return nil, nil, fmt.Errorf("deployment data of node %s: %w", nodes[n].ID, err)
		}
		nodes[n].Old = map[string]any{}
		pins[nodes[n].ID] = DataPin{At: at, ETag: doc.ETag}
	}
	if req.force {
		return pins, nil, nil
	}
	last, err := s.lastDeployed(ctx, req.cluster, req.graphType)
	if err != nil {
		return nil, nil, err
	}
	// Nodes whose data changed since their last run read it back as it was then, grouped by instant.
	changed := map[time.Time][]int{}
	for n := range nodes {
		pin, ok := last[nodes[n].ID]
		switch {
		case !ok:
		case pin.ETag == pins[nodes[n].ID].ETag:
			nodes[n].Old = nodes[n].Data
		default:
			changed[pin.At] = append(changed[pin.At], n)
		}
	}
	for at, group := range changed {
		ids := make([]string, len(group))
		for k, n := range group {
			ids[k] = nodes[n].ID
		}
		docs, err := s.clusters.NodeData(ctx, clusterName(req.cluster), resource, ids, at)
		if err != nil && !errs.Is(err, errs.NotFound) {
			return nil, nil, err
		}
		for _, n := range group {
			// Read back exactly what the run read, or treat the node as never deployed.
			if doc, ok := docs[nodes[n].ID]; ok && doc.ETag == last[nodes[n].ID].ETag {
				if nodes[n].Old, err = decodeData(doc.Body); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return pins, nil, nil
}

// decodeData decodes a deployment data document ({} when empty).
func decodeData(body []byte) (any, error) {
	if len(body) == 0 {
		return map[string]any{}, nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return v, nil
}

// deployedState is what a cluster's finished runs of one graph type left:
// for each node, the data its last successful run read. Seen is the newest
// finished transaction already accounted for, so each run is read once.
type deployedState struct {
	Seen  string             `json:"seen"`
	Nodes map[string]DataPin `json:"nodes"`
}

func deployedKey(cluster int64, graphType string) store.Key {
	return store.Key{Partition: prefix + "deployed", Sort: store.SortID(cluster) + "#" + graphType}
}

// lastDeployed returns, for each node of the cluster, the data pin of its
// last successful run of graphType (a node that finished its part of the
// sub-transaction in status ready).
func (s *Service) lastDeployed(ctx context.Context, cluster int64, graphType string) (map[string]DataPin, error) {
	st, _, _, err := s.deployed(ctx, cluster, graphType)
	return st.Nodes, err
}

// deployed reads the deployed state and brings it up to date with the
// cluster's transactions that finished since; changed says it must be written.
func (s *Service) deployed(ctx context.Context, cluster int64, graphType string) (st deployedState, rev int64, changed bool, err error) {
	it, err := s.idx.Get(ctx, deployedKey(cluster, graphType))
	switch {
	case err == nil:
		if err := decodeItem(it, &st); err != nil {
			return st, 0, false, err
		}
		rev = it.Revision
	case !errors.Is(err, store.ErrNotFound):
		return st, 0, false, err
	}
	if st.Nodes == nil {
		st.Nodes = map[string]DataPin{}
	}
	refs, err := s.idx.Query(ctx, store.Query{Partition: historyPartition(cluster), Reverse: true})
	if err != nil {
		return st, 0, false, err
	}
	// The runs not seen yet, oldest first; stop at one still running.
	var keys []store.Key
	for _, ref := range refs {
		if ref.Key.Sort <= st.Seen {
			break
		}
		keys = append(keys, txKey(ref.Key.Sort))
	}
	slices.Reverse(keys)
	found, err := s.getMany(ctx, keys)
	if err != nil {
		return st, 0, false, err
	}
	for _, k := range keys {
		var parent txRecord
		if it, ok := found[k]; !ok {
			continue
		} else if err := decodeItem(it, &parent); err != nil {
			return st, 0, false, err
		}
		if parent.Status == StatusRunning || parent.Status == StatusPending {
			break
		}
		subs, _, err := s.loadSubs(ctx, parent.Subs)
		if err != nil {
			return st, 0, false, err
		}
		for _, sub := range subs {
			if sub.GraphType != graphType || sub.DryRun || sub.Plan == "" {
				continue
			}
			if err := s.recordDeployed(ctx, sub, st.Nodes); err != nil {
				return st, 0, false, err
			}
		}
		st.Seen, changed = parent.UUID, true
	}
	return st, rev, changed, nil
}

// recordDeployed sets the pins of the nodes that finished sub in status ready.
func (s *Service) recordDeployed(ctx context.Context, sub txRecord, pins map[string]DataPin) error {
	items, err := s.idx.Query(ctx, store.Query{Partition: prefix + "txnode#" + sub.UUID})
	if err != nil {
		return err
	}
	var plan *frozenPlan
	for _, it := range items {
		var p NodeProgress
		if err := decodeItem(it, &p); err != nil {
			return err
		}
		if p.Status != StatusReady {
			continue
		}
		if plan == nil {
			if plan, err = s.loadPlan(ctx, sub.Plan); err != nil {
				return err
			}
		}
		if pin, ok := plan.Data[p.Node]; ok {
			pins[p.Node] = pin
		} else {
			delete(pins, p.Node) // ran without reading data: nothing to compare with
		}
	}
	return nil
}

// deployedOps returns the write that keeps the deployed state of the
// execution's graph types up to date (none when nothing changed).
func (s *Service) deployedOps(ctx context.Context, cluster int64, types []string) ([]store.Op, error) {
	var ops []store.Op
	slices.Sort(types)
	for _, t := range slices.Compact(types) {
		st, rev, changed, err := s.deployed(ctx, cluster, t)
		if err != nil {
			return nil, err
		}
		switch {
		case !changed:
		case rev == 0:
			ops = append(ops, store.Create(deployedKey(cluster, t), mustJSON(st)))
		default:
			ops = append(ops, store.Update(deployedKey(cluster, t), mustJSON(st), rev))
		}
	}
	return ops, nil
}
