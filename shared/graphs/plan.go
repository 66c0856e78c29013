package graphs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/yaql"
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
	subgraphs []planner.Subgraph
	nodes     []planner.ClusterNode
	// force ignores the nodes' old data: changed() is true everywhere (Nailgun's force).
	force bool
	// explain records why each task is on each node and runs or is skipped (frozenPlan.Why).
	explain bool
	// budget bounds the evaluations of the request (Service.planning).
	budget *yaql.Budget
}

// plan makes the frozen plan of one graph of a cluster on some of its nodes,
// within the request's budget and the service's PlanLimits.
func (s *Service) plan(ctx context.Context, req planRequest) (*frozenPlan, error) {
	tasks, filtered, err := req.merged.deps.Select(planner.Selection{
		GraphType: req.run.Type, Tasks: req.run.Tasks, SkipTasks: req.run.SkipTasks, Subgraphs: req.subgraphs,
	})
	if err != nil {
		return nil, err
	}
	if err := planner.CheckPairs(len(tasks), len(req.nodes), s.planLimits.Pairs); err != nil {
		return nil, err
	}
	settings, err := s.clusterSettings(ctx, req.cluster)
	if err != nil {
		return nil, err
	}
	meta, err := s.clusterMetadata(ctx, settings)
	if err != nil {
		return nil, err
	}
	nodes := make([]planner.PlanNode, len(req.nodes))
	for n, node := range req.nodes {
		nodes[n].ClusterNode = node
	}
	frozen := &frozenPlan{Tasks: tasks, Resource: deploymentInfoResource(meta)}
	var warnings []string
	if need := planner.DataNeeds(tasks); need != planner.NoData {
		if warnings, err = s.loadNodeData(ctx, req, frozen, nodes, need); err != nil {
			return nil, err
		}
	}
	p, err := planner.Plan(ctx, tasks, nodes, planner.NewRules(meta...), planner.Options{
		Filtered: filtered, Budget: req.budget, Patterns: s.patterns,
		MaxNodeTasks: s.planLimits.NodeTasks, MaxWaits: s.planLimits.Edges, Explain: req.explain,
	})
	if err != nil {
		return nil, err
	}
	frozen.Nodes, frozen.Every, frozen.Limits, frozen.Unplaced = p.Steps, p.Every, p.Limits, p.Unplaced
	frozen.Warnings = append(append(slices.Clone(req.merged.deps.Warnings()), warnings...), p.Warnings...)
	frozen.setPlaceholders(nodes, settings.MasterIP)
	frozen.planned = nodes
	frozen.Groups = p.Groups
	if req.explain {
		frozen.Why = p.Why
		if err := s.originate(ctx, req.cluster, frozen, nodes); err != nil {
			return nil, err
		}
	}
	return frozen, nil
}

// clusterMetadata returns the role metadata of a cluster's release, then of
// its plugins in plugin order.
func (s *Service) clusterMetadata(ctx context.Context, settings ClusterSettings) ([]planner.EntryMetadata, error) {
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
	var out []planner.EntryMetadata
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

// deploymentInfoResource is the resource holding the nodes' deployment
// data: the last that the release and the plugins name.
func deploymentInfoResource(meta []planner.EntryMetadata) string {
	resource := planner.DefaultDeploymentInfoResource
	for _, m := range meta {
		if m.DeploymentInfoResource != "" {
			resource = m.DeploymentInfoResource
		}
	}
	return resource
}

// nodeDataBatch is how many nodes' documents one read asks for: the
// documents of a batch are held at once, undecoded, while it is decoded.
const nodeDataBatch = 256

// loadNodeData reads each node's deployment data ($) and, unless forced, its
// old data ($%old): the data its last successful run of the graph type read.
// A node whose data did not change since gets the same value as both, so
// comparing them costs nothing. need says what reads the data: without any
// data, expressions are an error and placeholders stay as written.
func (s *Service) loadNodeData(ctx context.Context, req planRequest, frozen *frozenPlan, nodes []planner.PlanNode, need int) ([]string, error) {
	resource := frozen.Resource
	all := make([]int, len(nodes))
	for n := range nodes {
		all[n] = n
	}
	data := newDataDecoder()
	at := s.now()
	pins := make(map[string]DataPin, len(nodes))
	err := s.readNodeData(ctx, req.cluster, resource, nodes, all, time.Time{}, func(n int, doc NodeDocument) error {
		var err error
		if nodes[n].Data, err = data.decode(doc.Body); err != nil {
			return fmt.Errorf("deployment data of node %s: %w", nodes[n].ID, err)
		}
		nodes[n].Old = map[string]any{}
		nodes[n].History = historyFirst
		pins[nodes[n].ID] = DataPin{At: at, ETag: doc.ETag}
		return nil
	})
	if errs.Is(err, errs.NotFound) {
		if need == planner.DataForExpressions {
			return nil, missingDeploymentData(resource, err)
		}
		return []string{fmt.Sprintf("placeholders such as {%s} stay as written: %s", planner.PlaceholderClusterID, errs.Message(err))}, nil
	}
	if err != nil {
		return nil, err
	}
	frozen.Data = pins
	if req.force {
		for n := range nodes {
			nodes[n].History = historyForced
		}
		return nil, nil
	}
	last, err := s.lastDeployed(ctx, req.cluster, req.graphType)
	if err != nil {
		return nil, err
	}
	// Nodes whose data changed since their last run read it back as it was then, grouped by instant.
	changed := map[time.Time][]int{}
	for n := range nodes {
		pin, ok := last[nodes[n].ID]
		switch {
		case !ok:
		case pin.ETag == pins[nodes[n].ID].ETag:
			nodes[n].Old = nodes[n].Data
			nodes[n].History = historySince(pin, true)
			frozen.setOld(nodes[n].ID, pin)
		default:
			changed[pin.At] = append(changed[pin.At], n)
		}
	}
	for at, group := range changed {
		err := s.readNodeData(ctx, req.cluster, resource, nodes, group, at, func(n int, doc NodeDocument) error {
			// Read back exactly what the run read, or treat the node as never deployed.
			if doc.ETag != last[nodes[n].ID].ETag {
				return nil
			}
			var err error
			if nodes[n].Old, err = data.decode(doc.Body); err != nil {
				return err
			}
			nodes[n].History = historySince(last[nodes[n].ID], false)
			frozen.setOld(nodes[n].ID, last[nodes[n].ID])
			return nil
		})
		if err != nil && !errs.Is(err, errs.NotFound) {
			return nil, err
		}
	}
	return nil, nil
}

// readNodeData reads the deployment data of the nodes at positions group
// (at an instant, or now when at is zero) in batches of nodeDataBatch, and
// hands each node's document to use; a node with no document is left out.
func (s *Service) readNodeData(ctx context.Context, cluster int64, resource string, nodes []planner.PlanNode, group []int, at time.Time, use func(n int, doc NodeDocument) error) error {
	for start := 0; start < len(group); start += nodeDataBatch {
		batch := group[start:min(start+nodeDataBatch, len(group))]
		ids := make([]string, len(batch))
		for k, n := range batch {
			ids[k] = nodes[n].ID
		}
		docs, err := s.clusters.NodeData(ctx, clusterName(cluster), resource, ids, at)
		if err != nil {
			return err
		}
		for _, n := range batch {
			if doc, ok := docs[nodes[n].ID]; ok {
				if err := use(n, doc); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// dataDecoder decodes the nodes' deployment data of one plan, sharing what
// they share: each distinct top-level value of their documents is decoded
// once, and every node whose document holds it gets the same object. A
// cluster's nodes share most of their data (the cluster's network_metadata,
// its settings), so the plan holds it about once rather than once per node,
// and the yaql Cache of the plan evaluates what they share once. The values
// are read-only: the planner and yaql never change node data.
type dataDecoder struct {
	// values holds the decoded top-level values by their JSON.
	values map[string]any
}

func newDataDecoder() *dataDecoder { return &dataDecoder{values: map[string]any{}} }

// decode decodes a deployment data document ({} when empty).
func (d *dataDecoder) decode(body []byte) (any, error) {
	if len(body) == 0 {
		return map[string]any{}, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return decodeData(body) // not an object: decoded whole (or the error named)
	}
	out := make(map[string]any, len(fields))
	for k, raw := range fields {
		v, ok := d.values[string(raw)]
		if !ok {
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, err
			}
			d.values[string(raw)] = v
		}
		out[k] = v
	}
	return out, nil
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

// missingDeploymentData is the plan error when the nodes' deployment data,
// which the graph's expressions read, is no resource of the cluster's
// environment (err: the ConfigDB's not found): planning on {} would skip
// tasks silently.
func missingDeploymentData(resource string, err error) error {
	return errs.Conflictf("the graph's expressions read each node's deployment data, the resource %q of the cluster's environment "+
		"(deployment_info_resource of its release or plugins, %s by default): %s", resource, planner.DefaultDeploymentInfoResource, errs.Message(err))
}
