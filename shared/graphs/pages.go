package graphs

import (
	"context"
	"iter"
	"math"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

// NodePages lists a plan's nodes' task lists in pages: Nodes yields them in
// order from the node after the page's marker; the caller takes as many as
// fit its page and asks Next for the marker of the page that follows the
// last one it took.
type NodePages struct {
	Nodes iter.Seq2[NodeTasks, error]
	Next  func(ctx context.Context, last string) (string, error)
}

// all drains the pages into one list.
func (p NodePages) all() ([]NodeTasks, error) {
	out := []NodeTasks{}
	for n, err := range p.Nodes {
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

// pageBatch is how many nodes' steps a page reads from a stored plan at once.
const pageBatch = 64

// eachNodeTasks yields the task lists of nodes, reading the plan's steps
// pageBatch nodes at a time through load, their bodies rendered by render.
func eachNodeTasks(ctx context.Context, nodes []planner.ClusterNode, load func(ids []string) (*frozenPlan, error), render func(*frozenPlan) *nodeRenderer) iter.Seq2[NodeTasks, error] {
	return func(yield func(NodeTasks, error) bool) {
		for start := 0; start < len(nodes); start += pageBatch {
			batch := nodes[start:min(start+pageBatch, len(nodes))]
			plan, err := load(nodeIDs(batch))
			if err != nil {
				yield(NodeTasks{}, err)
				return
			}
			r := render(plan)
			for _, n := range batch {
				tasks, err := plan.nodeTasks(ctx, n, r)
				if !yield(tasks, err) || err != nil {
					return
				}
			}
		}
	}
}

// after returns the nodes after the one named last ("" for all of them).
func after(nodes []planner.ClusterNode, last string) ([]planner.ClusterNode, error) {
	if last == "" {
		return nodes, nil
	}
	i := slices.IndexFunc(nodes, func(n planner.ClusterNode) bool { return n.ID == last })
	if i < 0 {
		return nil, errs.Invalidf("marker: node %s is not listed here", last)
	}
	return nodes[i+1:], nil
}

// PlanPages returns a sub-transaction's frozen plan without its nodes'
// task lists, and those in pages from the node after marker (a node id):
// of every node of the plan, or of only, when given (a node's explanations
// read without the plan's other nodes').
func (s *Service) PlanPages(ctx context.Context, id string, only []string, marker string) (Plan, NodePages, error) {
	rec, isSub, err := s.lookupTx(ctx, id)
	if err != nil {
		return Plan{}, NodePages{}, err
	}
	if !isSub {
		return Plan{}, NodePages{}, errs.Invalidf("Transaction %s is a top-level transaction; each of its sub-transactions has a plan", id)
	}
	head, err := s.loadPlan(ctx, rec.Plan)
	if err != nil {
		return Plan{}, NodePages{}, err
	}
	listed := rec.Nodes
	if only != nil {
		if missing := slices.DeleteFunc(slices.Clone(only), func(n string) bool { return slices.Contains(rec.Nodes, n) }); len(missing) > 0 {
			return Plan{}, NodePages{}, errs.Invalidf("Nodes %s are not in the plan of transaction %s", strings.Join(missing, ", "), id)
		}
		listed = slices.DeleteFunc(slices.Clone(rec.Nodes), func(n string) bool { return !slices.Contains(only, n) })
	}
	nodes := make([]planner.ClusterNode, len(listed))
	for i, n := range listed {
		nodes[i].ID = n
	}
	if nodes, err = after(nodes, marker); err != nil {
		return Plan{}, NodePages{}, err
	}
	out := Plan{Transaction: rec.UUID, GraphType: rec.GraphType, Nodes: rec.Nodes, Tasks: head.Tasks, Warnings: head.Warnings, Unplaced: head.Unplaced,
		FaultToleranceGroups: head.Groups}
	pages := NodePages{
		Nodes: eachNodeTasks(ctx, nodes, func(ids []string) (*frozenPlan, error) { return s.loadPlanShowing(ctx, rec.Plan, ids) },
			func(p *frozenPlan) *nodeRenderer { return s.pinnedRenderer(rec.ClusterID, p) }),
		Next: func(_ context.Context, last string) (string, error) { return last, nil },
	}
	return out, pages, nil
}

// Plan returns the frozen plan of a sub-transaction, every node's task list included.
func (s *Service) Plan(ctx context.Context, id string) (Plan, error) {
	out, pages, err := s.PlanPages(ctx, id, nil, "")
	if err != nil {
		return Plan{}, err
	}
	nodes, err := pages.all()
	if err != nil {
		return Plan{}, err
	}
	out.NodeTasks, out.Skipped = make(map[string][]SerializedTask, len(nodes)), make(map[string][]SkippedTask, len(nodes))
	for _, n := range nodes {
		out.NodeTasks[n.Node], out.Skipped[n.Node] = n.Tasks, n.Skipped
	}
	return out, nil
}

// A serialized_tasks marker names the plan its first page made, stored as
// blobs that nothing references (the garbage collector removes them after
// its grace period), and the last node of the page before: "<hash>:<node>".
const markerSeparator = ":"

// SerializedTaskPages returns serialized_tasks without the nodes' task
// lists, and those in pages. Without a marker the plan is made (as
// SerializedTasks makes it), and stored only when a page's Next is asked
// for; with one, the pages come from the plan the marker names.
func (s *Service) SerializedTaskPages(ctx context.Context, clusterID int64, graphType string, requested []NodeID, force, explain bool, marker string) (ClusterTasks, NodePages, error) {
	out := ClusterTasks{Cluster: clusterID, GraphType: graphType}
	none := NodePages{Nodes: func(func(NodeTasks, error) bool) {}}
	if marker == "" {
		plan, nodes, err := s.clusterPlan(ctx, clusterID, graphType, requested, force, explain)
		if err != nil || plan == nil {
			return out, none, err
		}
		out.Warnings, out.Unplaced = plan.Warnings, plan.Unplaced
		var stored string
		next := func(ctx context.Context, last string) (string, error) {
			if stored == "" {
				var err error
				if stored, _, err = storePlan(ctx, plan, nodeIDs(nodes), math.MaxInt, s.unreferencedBlob); err != nil {
					return "", err
				}
			}
			return stored + markerSeparator + last, nil
		}
		live := s.liveRenderer(clusterID, plan, plan.planned)
		return out, NodePages{Nodes: eachNodeTasks(ctx, nodes, func([]string) (*frozenPlan, error) { return plan, nil },
			func(*frozenPlan) *nodeRenderer { return live }), Next: next}, nil
	}
	hash, last, ok := strings.Cut(marker, markerSeparator)
	if !ok {
		return out, none, errs.Invalidf("marker %q: not a marker of serialized_tasks", marker)
	}
	if _, err := s.blobs.Get(ctx, hash); err != nil {
		return out, none, errs.Invalidf("marker %q: its plan is gone; list from the first page again", marker)
	}
	head, err := s.loadPlan(ctx, hash)
	if err != nil {
		return out, none, err
	}
	clusterNodes, err := s.clusters.Nodes(ctx, clusterName(clusterID))
	if err != nil {
		return out, none, err
	}
	nodes, err := selectNodes(clusterID, clusterNodes, requested)
	if err != nil {
		return out, none, err
	}
	if nodes, err = after(nodes, last); err != nil {
		return out, none, err
	}
	out.Warnings, out.Unplaced = head.Warnings, head.Unplaced
	return out, NodePages{
		Nodes: eachNodeTasks(ctx, nodes, func(ids []string) (*frozenPlan, error) { return s.loadPlanShowing(ctx, hash, ids) },
			func(p *frozenPlan) *nodeRenderer { return s.pinnedRenderer(clusterID, p) }),
		Next: func(_ context.Context, last string) (string, error) { return hash + markerSeparator + last, nil },
	}, nil
}
