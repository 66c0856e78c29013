package graphs

import (
	"container/heap"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// ClusterNode is a member of a cluster as a deployment sees it: the node
// registry's integer id (as a string) and the node's roles.
type ClusterNode struct {
	ID    string   `json:"id"`
	Roles []string `json:"roles"`
	// FQDN, when the registry knows it, names the node to people beside its id.
	FQDN string `json:"fqdn,omitempty"`
}

// Role names with a meaning of their own in role selections.
const (
	// AnyRole ("*") selects every node.
	AnyRole = "*"
	// SelfRole selects, in a cross dependency, the node the depending task runs on.
	SelfRole = "self"
)

// NodeStep is one entry of a node's task list in a frozen plan. Steps run in
// list order on their node; a step also waits for steps of other nodes.
type NodeStep struct {
	// Task is the index of the task in the plan's task list.
	Task int `json:"task"`
	// After are steps that must be passed first (cross dependencies with policy all).
	After []StepRef `json:"after,omitempty"`
	// AfterAny are groups of steps of which one must be passed first (policy any).
	AfterAny [][]StepRef `json:"after_any,omitempty"`
	// Skip says why the node passes the step without running its task
	// (SkipCondition, SkipFiltered), like group, stage and skipped tasks;
	// empty when it runs it.
	Skip string `json:"skip,omitempty"`
}

func (s NodeStep) waits() bool { return len(s.After) > 0 || len(s.AfterAny) > 0 }

// StepRef names a step of a node's task list.
type StepRef struct {
	Node string `json:"node"`
	Step int    `json:"step"`
}

// resolveNodes gives each node its steps: the plan's tasks that apply to
// the node, with the cross dependencies resolved to steps of other nodes:
//   - cross-depends {name, role, policy} on task T: T waits, on each node it runs
//     on, for the task(s) named (an id or "/re/") on the nodes role selects;
//   - cross-depended-by {name, role, policy} on task T: the task(s) named wait,
//     on the nodes role selects, for T on every node T runs on;
//   - policy all (the default) waits for every such step, any for one of them;
//     a dependency that selects no step adds nothing, as in Nailgun.
//
// A node's order keeps every dependency of the graph between its tasks (also
// through tasks it does not run) and puts a task after what it waits for
// with policy all, on its own node or, transitively, on others; otherwise it
// follows the plan's order (tasks is in dependency order). It fails when the
// dependencies across nodes form a cycle.
func resolveNodes(tasks []Task, p *placement) (map[string][]NodeStep, error) {
	g, err := newDepGraph(tasks, false)
	if err != nil {
		return nil, err
	}
	nodes := make([]ClusterNode, len(p.nodes))
	for n := range p.nodes {
		nodes[n] = p.nodes[n].ClusterNode
	}
	nt := len(tasks)
	applies := p.applies
	named := func(name string) []int { return p.tasksNamed(tasks, g.index, name) }
	// Vertex n*nt+i is task i on node n (a task that does not apply to the
	// node only carries the order through). waitAll and waitAny hold the
	// cross dependencies of each vertex.
	vertex := func(n, i int) int { return n*nt + i }
	waitAll := make([][]int, len(nodes)*nt)
	waitAny := make([][][]int, len(nodes)*nt)
	addWaits := func(v int, policy string, refs []int) {
		if len(refs) == 0 {
			return
		}
		if policy == "any" {
			waitAny[v] = append(waitAny[v], refs)
			return
		}
		waitAll[v] = append(waitAll[v], refs...) // repeats are dropped below
	}
	// placedOn[i]: the nodes task i applies to, so that a dependency looks only there.
	placedOn := make([][]int, nt)
	for n := range nodes {
		for i := range nt {
			if applies[n][i] {
				placedOn[i] = append(placedOn[i], n)
			}
		}
	}
	namedCache := map[string][]int{}
	cachedNamed := func(name string) []int {
		ids, ok := namedCache[name]
		if !ok {
			ids = named(name)
			namedCache[name] = ids
		}
		return ids
	}
	// A cross dependency never makes a task wait for itself on its own node (Nailgun's excludes).
	for i, t := range tasks {
		for _, n := range placedOn[i] {
			for _, cd := range p.crossDeps(t, n, i, false) {
				takes, self := p.crossSelection(cd, n)
				var refs []int
				for _, j := range cachedNamed(cd.Name) {
					for _, m := range placedOn[j] {
						if !(m == n && j == i) && (m == n && self || takes != nil && takes[m]) {
							refs = append(refs, vertex(m, j))
						}
					}
				}
				addWaits(vertex(n, i), cd.Policy, refs)
			}
			for _, cd := range p.crossDeps(t, n, i, true) {
				takes, self := p.crossSelection(cd, n)
				for _, j := range cachedNamed(cd.Name) {
					for _, m := range placedOn[j] {
						if !(m == n && j == i) && (m == n && self || takes != nil && takes[m]) {
							addWaits(vertex(m, j), cd.Policy, []int{vertex(n, i)})
						}
					}
				}
			}
		}
	}
	for v := range waitAll {
		if len(waitAll[v]) > 1 {
			slices.Sort(waitAll[v])
			waitAll[v] = slices.Compact(waitAll[v])
		}
	}
	order, err := orderAcrossNodes(g, nodes, applies, waitAll)
	if err != nil {
		return nil, err
	}
	// Each node's steps by node index (a step knows its node by index too, so
	// no map is read per vertex), then keyed by node id.
	perNode := make([][]NodeStep, len(nodes))
	for n := range nodes {
		perNode[n] = make([]NodeStep, 0, len(slices.DeleteFunc(slices.Clone(applies[n]), func(b bool) bool { return !b })))
	}
	stepOf := make([]StepRef, len(nodes)*nt)
	nodeOf := make([]int, len(nodes)*nt)
	for _, v := range order {
		n, i := v/nt, v%nt
		if applies[n][i] {
			stepOf[v], nodeOf[v] = StepRef{Node: nodes[n].ID, Step: len(perNode[n])}, n
			perNode[n] = append(perNode[n], NodeStep{Task: i, Skip: p.skip[n][i]})
		}
	}
	steps := make(map[string][]NodeStep, len(nodes))
	for n, node := range nodes {
		own := perNode[n]
		for k := range own {
			v := vertex(n, own[k].Task)
			// A step of the same node before this one is passed anyway: no
			// wait; an "any" group holding one is met already.
			implied := func(r int) bool { return nodeOf[r] == n && stepOf[r].Step < k }
			for _, r := range waitAll[v] {
				if !implied(r) {
					own[k].After = append(own[k].After, stepOf[r])
				}
			}
			for _, group := range waitAny[v] {
				if !slices.ContainsFunc(group, implied) {
					refs := make([]StepRef, len(group))
					for x, r := range group {
						refs[x] = stepOf[r]
					}
					own[k].AfterAny = append(own[k].AfterAny, refs)
				}
			}
		}
		steps[node.ID] = own
	}
	return steps, checkNodeCycles(tasks, nodes, steps)
}

// orderAcrossNodes sorts every (node, task) vertex topologically: the
// graph's edges on each node, and an edge from each step waited for (policy
// all) to the waiting one. Among the vertices ready at any point the task
// earliest in the plan (then the node listed first) goes first, so without
// cross dependencies each node keeps the plan's order.
func orderAcrossNodes(g *depGraph, nodes []ClusterNode, applies [][]bool, waitAll [][]int) ([]int, error) {
	nt := len(g.tasks)
	pos := make([]int, nt)
	for p, i := range g.order {
		pos[i] = p
	}
	total := len(nodes) * nt
	// The graph's edges on each node are read from g; only the waits across nodes are stored.
	crossSucc := make([][]int, total)
	for v, refs := range waitAll {
		for _, r := range refs {
			crossSucc[r] = append(crossSucc[r], v)
		}
	}
	pred := func(v int) []int {
		base := v - v%nt
		out := slices.Clone(waitAll[v])
		for _, u := range g.pred[v%nt] {
			out = append(out, base+u)
		}
		return out
	}
	indegree := make([]int, total)
	ready := &vertexHeap{less: func(a, b int) bool {
		if pos[a%nt] != pos[b%nt] {
			return pos[a%nt] < pos[b%nt]
		}
		return a/nt < b/nt
	}}
	for v := range total {
		if indegree[v] = len(g.pred[v%nt]) + len(waitAll[v]); indegree[v] == 0 {
			ready.items = append(ready.items, v)
		}
	}
	heap.Init(ready)
	order := make([]int, 0, total)
	release := func(v int) {
		if indegree[v]--; indegree[v] == 0 {
			heap.Push(ready, v)
		}
	}
	for ready.Len() > 0 {
		u := heap.Pop(ready).(int)
		order = append(order, u)
		base := u - u%nt
		for _, w := range g.succ[u%nt] {
			release(base + w)
		}
		for _, v := range crossSucc[u] {
			release(v)
		}
	}
	if len(order) == total {
		return order, nil
	}
	// Walk back along predecessors left unsorted until one repeats; name the
	// steps of the cycle (tasks a node does not run only carry the order).
	start := slices.IndexFunc(indegree, func(d int) bool { return d > 0 })
	seenAt := map[int]int{}
	var path []int
	for v := start; ; {
		if at, ok := seenAt[v]; ok {
			path = path[at:]
			break
		}
		seenAt[v] = len(path)
		path = append(path, v)
		preds := pred(v)
		v = preds[slices.IndexFunc(preds, func(p int) bool { return indegree[p] > 0 })]
	}
	slices.Reverse(path)
	var names []string
	for _, v := range path {
		if applies[v/nt][v%nt] {
			names = append(names, fmt.Sprintf("%q on node %s", g.tasks[v%nt].ID, nodes[v/nt].ID))
		}
	}
	first := 0
	for i, name := range names {
		if name < names[first] {
			first = i
		}
	}
	names = append(names[first:], names[:first]...)
	return nil, errs.Invalidf("Tasks form a cycle across nodes: %s", strings.Join(append(names, names[0]), " -> "))
}

// vertexHeap is a heap of vertices ordered by less.
type vertexHeap struct {
	items []int
	less  func(a, b int) bool
}

func (h *vertexHeap) Len() int           { return len(h.items) }
func (h *vertexHeap) Less(i, j int) bool { return h.less(h.items[i], h.items[j]) }
func (h *vertexHeap) Swap(i, j int)      { h.items[i], h.items[j] = h.items[j], h.items[i] }
func (h *vertexHeap) Push(x any)         { h.items = append(h.items, x.(int)) }
func (h *vertexHeap) Pop() any {
	n := len(h.items) - 1
	x := h.items[n]
	h.items = h.items[:n]
	return x
}

// checkNodeCycles plays the plan through: a step is done once the step before
// it on its node, every step of After and one step of each AfterAny group
// are. A step that never gets done lies on a cycle (or behind one), which is
// named.
func checkNodeCycles(tasks []Task, nodes []ClusterNode, steps map[string][]NodeStep) error {
	offset := make(map[string]int, len(nodes))
	var refs []StepRef
	var all []NodeStep // every node's steps, one after another: the step before v on its node is v-1
	for _, n := range nodes {
		offset[n.ID] = len(refs)
		for k, step := range steps[n.ID] {
			refs = append(refs, StepRef{Node: n.ID, Step: k})
			all = append(all, step)
		}
	}
	flat := func(r StepRef) int { return offset[r.Node] + r.Step }
	type edge struct{ to, group int } // group -1: a plain predecessor
	pending := make([]int, len(refs))
	dependents := make([][]edge, len(refs))
	groupMet := make([][]bool, len(refs))
	for v, r := range refs {
		s := all[v]
		if r.Step > 0 {
			pending[v]++ // released by the step before it (below)
		}
		for _, a := range s.After {
			pending[v]++
			dependents[flat(a)] = append(dependents[flat(a)], edge{v, -1})
		}
		groupMet[v] = make([]bool, len(s.AfterAny))
		for g, group := range s.AfterAny {
			pending[v]++
			for _, a := range group {
				dependents[flat(a)] = append(dependents[flat(a)], edge{v, g})
			}
		}
	}
	done := make([]bool, len(refs))
	var queue []int
	for v := range refs {
		if pending[v] == 0 {
			queue = append(queue, v)
		}
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		done[u] = true
		if next := u + 1; next < len(refs) && refs[next].Step > 0 {
			if pending[next]--; pending[next] == 0 {
				queue = append(queue, next)
			}
		}
		for _, e := range dependents[u] {
			if e.group >= 0 {
				if groupMet[e.to][e.group] {
					continue
				}
				groupMet[e.to][e.group] = true
			}
			if pending[e.to]--; pending[e.to] == 0 {
				queue = append(queue, e.to)
			}
		}
	}
	start := slices.Index(done, false)
	if start < 0 {
		return nil
	}
	// Every step not done has a blocker not done: walk back along blockers until one repeats.
	blocker := func(v int) int {
		r, s := refs[v], all[v]
		if r.Step > 0 && !done[v-1] {
			return v - 1
		}
		for _, a := range s.After {
			if !done[flat(a)] {
				return flat(a)
			}
		}
		for g, group := range s.AfterAny {
			if !groupMet[v][g] {
				return flat(group[0])
			}
		}
		panic("graphs: a step left undone has no blocker")
	}
	seenAt := map[int]int{}
	var path []int
	for v := start; ; v = blocker(v) {
		if at, ok := seenAt[v]; ok {
			path = path[at:]
			break
		}
		seenAt[v] = len(path)
		path = append(path, v)
	}
	slices.Reverse(path)
	name := func(v int) string {
		return fmt.Sprintf("%q on node %s", tasks[all[v].Task].ID, refs[v].Node)
	}
	// Named from its smallest entry, so the message is stable.
	first := 0
	for i, v := range path {
		if name(v) < name(path[first]) {
			first = i
		}
	}
	names := make([]string, 0, len(path)+1)
	for i := range len(path) + 1 {
		names = append(names, name(path[(first+i)%len(path)]))
	}
	return errs.Invalidf("Tasks form a cycle across nodes: %s", strings.Join(names, " -> "))
}

// SerializedTask is a task of a node's list as the node's agent gets it,
// with the tasks of other nodes it waits for.
type SerializedTask struct {
	// Task is the task as the node's agent gets it (see Claim.Task).
	Task       wire.TaskDocument `json:"task"`
	Why        *wire.Why         `json:"why,omitempty"`
	WaitFor    []NodeTaskRef     `json:"wait_for,omitempty"`
	WaitForAny [][]NodeTaskRef   `json:"wait_for_any,omitempty"`
}

// NodeTaskRef names a task on a node.
type NodeTaskRef struct {
	Node string `json:"node"`
	Task string `json:"task"`
}

// NodeTasks is one node's task list, and the tasks placed on it that it skips.
type NodeTasks struct {
	Node    string           `json:"node"`
	Roles   []string         `json:"roles"`
	Tasks   []SerializedTask `json:"tasks"`
	Skipped []SkippedTask    `json:"skipped"`
}

// SkippedTask is a task placed on a node that the node passes without running it.
type SkippedTask struct {
	Task   string    `json:"task"`
	Reason string    `json:"reason"`
	Why    *wire.Why `json:"why,omitempty"`
}

// SkipType is the reason of a task whose type is skipped.
const SkipType = "type"

// ClusterTasks is the answer of serialized_tasks: each node's task list.
type ClusterTasks struct {
	Cluster   int64       `json:"cluster"`
	GraphType string      `json:"graph_type"`
	Nodes     []NodeTasks `json:"nodes"`
	// Warnings name what the graph refers to and the cluster does not have.
	Warnings []string `json:"warnings,omitempty"`
	// Unplaced are the tasks placed on no node.
	Unplaced []string `json:"unplaced,omitempty"`
}

// serialize lists the tasks a node's agent runs, in order. The waits of the
// group, stage and skipped steps before a task are the task's own: the agent
// passes them when it claims the task.
func serialize(ctx context.Context, plan *frozenPlan, node string, r *nodeRenderer) ([]SerializedTask, error) {
	name := func(r StepRef) NodeTaskRef {
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
func (s *Service) clusterPlan(ctx context.Context, clusterID int64, graphType string, requested []NodeID, force, explain bool) (_ *frozenPlan, _ []ClusterNode, err error) {
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
func (p *frozenPlan) nodeTasks(ctx context.Context, n ClusterNode, r *nodeRenderer) (NodeTasks, error) {
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
		case t.Type == TypeSkipped:
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
