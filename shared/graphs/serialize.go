package graphs

import (
	"context"
	"slices"

	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// serialized_tasks, and a node's task list as it and a plan show it, in the
// API's own types: the listing writes them as they are.
type (
	ClusterTasks   = wire.ClusterTasks
	SerializedTask = wire.SerializedTask
	NodeTaskRef    = wire.NodeTaskRef
	NodeTasks      = wire.NodeTasks
	SkippedTask    = wire.SkippedTask
)

// SkipType is the reason of a task whose type is skipped.
const SkipType = "type"

// serialize lists the tasks a node's agent runs, in order. The waits of the
// group, stage and skipped steps before a task are the task's own: the agent
// passes them when it claims the task.
func serialize(ctx context.Context, plan *frozenPlan, node string, r *nodeRenderer) ([]SerializedTask, error) {
	name := func(r planner.StepRef) NodeTaskRef {
		return NodeTaskRef{Node: r.Node, Task: plan.Tasks[plan.steps(r.Node)[r.Step].Task].ID}
	}
	out := []SerializedTask{}
	var item SerializedTask
	listed := map[NodeTaskRef]bool{} // item.WaitFor's refs: a task may wait for thousands
	for _, step := range plan.steps(node) {
		for _, r := range step.After {
			if ref := name(r); !listed[ref] {
				listed[ref] = true
				item.WaitFor = append(item.WaitFor, ref)
			}
		}
		for _, group := range step.AfterAny {
			refs := make([]NodeTaskRef, len(group))
			for i, r := range group {
				refs[i] = name(r)
			}
			item.WaitForAny = append(item.WaitForAny, refs)
		}
		for _, j := range step.AfterEvery {
			every := wire.TaskOnEveryNode{Task: plan.Tasks[j].ID, Nodes: len(plan.Every[j])}
			if !slices.Contains(item.WaitForEvery, every) {
				item.WaitForEvery = append(item.WaitForEvery, every)
			}
		}
		if plan.handedOut(step) {
			body, err := r.body(ctx, node, step.Task)
			if err != nil {
				return nil, err
			}
			item.Task, item.Why = body, plan.whyOn(node, step.Task)
			out = append(out, item)
			item = SerializedTask{}
			clear(listed)
		}
	}
	return out, nil
}

// SerializedTasks returns each node's task list of a cluster's merged graph
// of a type, as an execution on those nodes (all the cluster's when none are
// given) hands them to the agents, with the tasks each node skips and why.
// force plans as an execution with force would: every node's old data unknown.
func (s *Service) SerializedTasks(ctx context.Context, clusterID int64, graphType string, requested []NodeID, force, explain bool) (ClusterTasks, error) {
	out, pages, err := s.SerializedTaskPages(ctx, clusterID, graphType, requested, force, explain, "")
	if err != nil {
		return ClusterTasks{}, err
	}
	out.Nodes, err = pages.all()
	return out, err
}

// clusterPlan makes the plan of SerializedTasks: nil when the cluster has no nodes and none were requested.
func (s *Service) clusterPlan(ctx context.Context, clusterID int64, graphType string, requested []NodeID, force, explain bool) (_ *frozenPlan, _ []planner.ClusterNode, err error) {
	ctx, budget, finish := s.planning(ctx)
	defer finish(&err)
	m, err := s.mergedGraph(ctx, clusterID, graphType)
	if err != nil {
		return nil, nil, err
	}
	clusterNodes, err := s.clusters.Nodes(ctx, clusterName(clusterID))
	if err != nil || len(clusterNodes) == 0 && len(requested) == 0 {
		return nil, nil, err
	}
	nodes, err := selectNodes(clusterID, clusterNodes, requested)
	if err != nil {
		return nil, nil, err
	}
	plan, err := s.plan(ctx, planRequest{cluster: clusterID, graphType: graphType, merged: m, nodes: nodes, force: force, explain: explain, budget: budget})
	return plan, nodes, err
}

// nodeTasks is a node's part of the plan as serialized_tasks and the plan
// show it, its tasks' bodies rendered by r.
func (p *frozenPlan) nodeTasks(ctx context.Context, n planner.ClusterNode, r *nodeRenderer) (NodeTasks, error) {
	tasks, err := serialize(ctx, p, n.ID, r)
	return NodeTasks{Node: n.ID, Roles: orEmpty(n.Roles), Tasks: tasks, Skipped: p.skipped(n.ID)}, err
}

// skipped lists the tasks placed on a node that it does not run, with the reason.
func (p *frozenPlan) skipped(node string) []SkippedTask {
	out := []SkippedTask{}
	for _, step := range p.steps(node) {
		t := p.Tasks[step.Task]
		switch {
		case step.Skip != "":
			out = append(out, SkippedTask{Task: t.ID, Reason: step.Skip, Why: p.whyOn(node, step.Task)})
		case t.Type == planner.TypeSkipped:
			out = append(out, SkippedTask{Task: t.ID, Reason: SkipType, Why: p.whyOn(node, step.Task)})
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
