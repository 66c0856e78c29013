package planner

import (
	"fmt"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
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
	// AfterEvery are tasks whose step on every node that has them (the
	// master excepted) must be passed first: a cross dependency that selects
	// every node (policy all), stored once in the plan's Every rather than as
	// a StepRef per node (see compactWaitNodes).
	AfterEvery []int `json:"after_every,omitempty"`
	// Skip says why the node passes the step without running its task
	// (SkipCondition, SkipFiltered), like group, stage and skipped tasks;
	// empty when it runs it.
	Skip string `json:"skip,omitempty"`
}

func (s NodeStep) Waits() bool {
	return len(s.After) > 0 || len(s.AfterAny) > 0 || len(s.AfterEvery) > 0
}

// StepRef names a step of a node's task list.
type StepRef struct {
	Node string `json:"node"`
	Step int    `json:"step"`
}

// compactWaitNodes is the number of nodes from which a wait for a task on
// every node that has it is stored once per step (NodeStep.AfterEvery, the
// plan's Every) instead of as a step reference per node. fuel-library's
// cross dependencies that name a task and no role (top-role-compute on every
// compute, for example) would otherwise make a plan grow with the square of
// the nodes: 493 MB of steps for 5,000 nodes.
const compactWaitNodes = 64

// resolveNodes gives each node its steps: the plan's tasks that apply to
// the node, with the cross dependencies resolved to steps of other nodes:
//   - cross-depends {name, role, policy} on task T: T waits, on each node it runs
//     on, for the task(s) named (an id or "/re/") on the nodes role selects;
//   - cross-depended-by {name, role, policy} on task T: the task(s) named wait,
//     on the nodes role selects, for T on every node T runs on;
//   - policy all (the default) waits for every such step, any for one of them;
//     a dependency that selects no step adds nothing, as in Nailgun.
//
// A wait for a task on every node that has it (no role, or "*"), once
// compactWaitNodes nodes have it, is stored compact: the task in the
// step's AfterEvery, its steps once in every (task -> its step on each node
// that has it, the master excepted).
//
// A node's order keeps every dependency of the graph between its tasks (also
// through tasks it does not run) and puts a task after what it waits for
// with policy all, on its own node or, transitively, on others; otherwise it
// follows the plan's order (tasks is in dependency order). It fails when the
// dependencies across nodes form a cycle, and with a 413 as soon as they
// make more than maxWaits waits (a compact one counts once).
func resolveNodes(tasks []Task, p *placement, maxWaits int) (steps map[string][]NodeStep, every map[int][]StepRef, err error) {
	r, err := newResolver(tasks, p)
	if err != nil {
		return nil, nil, err
	}
	if err := r.collectWaits(maxWaits); err != nil {
		return nil, nil, err
	}
	order, err := r.order()
	if err != nil {
		return nil, nil, err
	}
	steps, every = r.steps(order)
	return steps, every, checkNodeCycles(tasks, r.nodes, steps, every)
}

// resolver holds the cross dependencies of a plan as waits between
// vertices: vertex n*nt+i is task i on node n (a task that does not apply
// to the node only carries the order through).
type resolver struct {
	tasks []Task
	p     *placement
	g     *Deps
	nodes []ClusterNode
	nt    int
	// placedOn[i]: the nodes task i applies to, so that a dependency looks only there.
	placedOn [][]int
	named    map[string][]int
	// waitAll and waitAny hold the waits of the vertices that wait for
	// others (policy all, and the groups of policy any); waitEvery the tasks
	// they wait for on every node that has them (everyOn). Maps: most of the
	// vertices wait for nothing.
	waitAll   map[int][]int
	waitAny   map[int][][]int
	waitEvery map[int][]int
	// everyOn[j]: the nodes other than the master that task j applies to; set
	// for the tasks waited for compact.
	everyOn map[int][]int
	// compactFrom is compactWaitNodes (a test compares it with no compact waits).
	compactFrom int
	// waits counts the waits made so far, repeats included.
	waits int
}

func newResolver(tasks []Task, p *placement) (*resolver, error) {
	g, err := NewDeps(tasks, false)
	if err != nil {
		return nil, err
	}
	r := &resolver{tasks: tasks, p: p, g: g, nt: len(tasks), nodes: make([]ClusterNode, len(p.nodes)),
		placedOn: make([][]int, len(tasks)), named: map[string][]int{}, everyOn: map[int][]int{}, compactFrom: compactWaitNodes}
	for n := range p.nodes {
		r.nodes[n] = p.nodes[n].ClusterNode
		for i := range r.nt {
			if p.applies[n][i] {
				r.placedOn[i] = append(r.placedOn[i], n)
			}
		}
	}
	r.waitAll, r.waitAny, r.waitEvery = map[int][]int{}, map[int][][]int{}, map[int][]int{}
	return r, nil
}

func (r *resolver) vertex(n, i int) int { return n*r.nt + i }

// tasksNamed returns the tasks a cross dependency's name stands for.
func (r *resolver) tasksNamed(name string) []int {
	ids, ok := r.named[name]
	if !ok {
		ids = r.p.tasksNamed(r.tasks, r.g.index, name)
		r.named[name] = ids
	}
	return ids
}

// compact says whether waits for task j on every node that has it are
// stored compact: the dependency selects every node, waits for all of
// them, and j is on enough nodes. A task waiting for itself elsewhere never
// is (that is a cycle, which explicit waits name).
func (r *resolver) compact(cd CrossDependency, i, j int) bool {
	return i != j && cd.Policy != "any" && r.p.selectsEveryNode(cd) && len(r.everyNode(j)) >= r.compactFrom
}

// everyNode returns the nodes other than the master that task j applies to.
func (r *resolver) everyNode(j int) []int {
	on, ok := r.everyOn[j]
	if !ok {
		on = slices.DeleteFunc(slices.Clone(r.placedOn[j]), func(m int) bool { return r.p.master[m] })
		r.everyOn[j] = on
	}
	return on
}

// collectWaits resolves every cross dependency of every placed task; it
// stops, before the waits take more room, once they are more than maxWaits.
// A cross dependency never makes a task wait for itself on its own node (Nailgun's excludes).
func (r *resolver) collectWaits(maxWaits int) error {
	for i, t := range r.tasks {
		for _, n := range r.placedOn[i] {
			for _, cd := range r.p.crossDeps(t, n, i, false) {
				r.dependsOn(n, i, cd)
			}
			for _, cd := range r.p.crossDeps(t, n, i, true) {
				r.dependedBy(n, i, cd)
			}
			if r.waits > maxWaits {
				return tooLarge("cross-node waits or more", r.waits, maxWaits, fmt.Sprintf("task %q's cross dependencies select too many tasks on too many nodes", t.ID))
			}
		}
		r.dependedByEvery(t, i)
	}
	for v, refs := range r.waitAll {
		if len(refs) > 1 {
			slices.Sort(refs)
			r.waitAll[v] = slices.Compact(refs)
		}
	}
	for v, tasks := range r.waitEvery {
		if len(tasks) > 1 {
			slices.Sort(tasks)
			r.waitEvery[v] = slices.Compact(tasks)
		}
	}
	return checkPatterns(r.p)
}

// selected says whether task j on node m is what a cross dependency of task i on node n selects.
func (r *resolver) selected(n, i, m, j int, takes []bool, self bool) bool {
	return !(m == n && j == i) && (m == n && self || takes != nil && takes[m])
}

// dependsOn adds the waits of a cross-depends of task i on node n.
func (r *resolver) dependsOn(n, i int, cd CrossDependency) {
	takes, self := r.p.crossSelection(cd, n)
	v := r.vertex(n, i)
	var refs []int
	for _, j := range r.tasksNamed(cd.Name) {
		if r.compact(cd, i, j) {
			r.waitEvery[v] = append(r.waitEvery[v], j)
			r.waits++
			if self && r.p.master[n] && r.p.applies[n][j] { // the master selected as itself, outside every
				refs = append(refs, r.vertex(n, j))
			}
			continue
		}
		for _, m := range r.placedOn[j] {
			if r.selected(n, i, m, j, takes, self) {
				refs = append(refs, r.vertex(m, j))
			}
		}
	}
	r.addWaits(v, cd.Policy, refs)
}

// dependedBy adds the waits of a cross-depended-by of task i on node n,
// but for the tasks dependedByEvery makes wait compact.
func (r *resolver) dependedBy(n, i int, cd CrossDependency) {
	takes, self := r.p.crossSelection(cd, n)
	uniform := r.uniformDependedBy(r.tasks[i], n)
	for _, j := range r.tasksNamed(cd.Name) {
		// The master's i is outside every (dependedByEvery): its waiters wait for it one by one.
		if uniform && r.compact(cd, j, i) && !r.p.master[n] {
			continue
		}
		for _, m := range r.placedOn[j] {
			if r.selected(n, i, m, j, takes, self) {
				r.addWaits(r.vertex(m, j), cd.Policy, []int{r.vertex(n, i)})
			}
		}
	}
}

// uniformDependedBy says whether every node sees task t's cross-depended-by
// as its own list (not computed per node by yaql), so that the tasks it
// names wait for t on every node that has it alike.
func (r *resolver) uniformDependedBy(t Task, n int) bool {
	return t.CrossDependedBy.Expr == nil || r.p.crossDependedBy[n] == nil
}

// dependedByEvery makes the tasks that task i's cross-depended-by names
// wait, compact, for i on every node that has it: on every node (other than
// the master) that has them.
func (r *resolver) dependedByEvery(t Task, i int) {
	if len(r.placedOn[i]) == 0 || !r.uniformDependedBy(t, r.placedOn[i][0]) {
		return
	}
	for _, cd := range r.p.crossDeps(t, r.placedOn[i][0], i, true) {
		for _, j := range r.tasksNamed(cd.Name) {
			if r.compact(cd, j, i) {
				for _, m := range r.everyNode(j) {
					v := r.vertex(m, j)
					r.waitEvery[v] = append(r.waitEvery[v], i)
				}
				r.waits += len(r.everyNode(j))
			}
		}
	}
}

func (r *resolver) addWaits(v int, policy string, refs []int) {
	if len(refs) == 0 {
		return
	}
	r.waits += len(refs)
	if policy == "any" {
		r.waitAny[v] = append(r.waitAny[v], refs)
		return
	}
	r.waitAll[v] = append(r.waitAll[v], refs...) // repeats are dropped by collectWaits
}

// order sorts every (node, task) vertex topologically: the graph's edges on
// each node, and an edge from each step waited for (policy all) to the
// waiting one. A compact wait for task j goes through a vertex of its own
// (hub j, after the real ones): every node's j before it, every step
// waiting for j after it; a hub goes first as soon as it is ready, so the
// order is the one the edges from each node's j would give. Among the
// vertices ready at any point the task earliest in the plan (then the node
// listed first) goes first, so without cross dependencies each node keeps
// the plan's order.
func (r *resolver) order() ([]int, error) {
	nt, total := r.nt, len(r.nodes)*r.nt
	hub := func(j int) int { return total + j }
	pos := make([]int, nt)
	for p, i := range r.g.order {
		pos[i] = p
	}
	// The graph's edges on each node are read from g; only the waits across nodes are stored.
	crossSucc := map[int][]int{}
	indegree := make([]int, total+nt)
	for v := range total {
		indegree[v] = len(r.g.pred[v%nt])
	}
	for v, refs := range r.waitAll {
		for _, u := range refs {
			crossSucc[u] = append(crossSucc[u], v)
		}
		indegree[v] += len(refs)
	}
	for v, tasks := range r.waitEvery {
		for _, j := range tasks {
			crossSucc[hub(j)] = append(crossSucc[hub(j)], v)
		}
		indegree[v] += len(tasks)
	}
	for j, on := range r.everyOn {
		if len(crossSucc[hub(j)]) > 0 {
			for _, m := range on {
				crossSucc[r.vertex(m, j)] = append(crossSucc[r.vertex(m, j)], hub(j))
			}
			indegree[hub(j)] = len(on)
		}
	}
	less := func(a, b int) bool {
		switch {
		case a >= total || b >= total:
			return a > b // hubs first
		case pos[a%nt] != pos[b%nt]:
			return pos[a%nt] < pos[b%nt]
		}
		return a/nt < b/nt
	}
	order := topoSort(indegree, less, func(u int, release func(int)) {
		if u < total {
			base := u - u%nt
			for _, w := range r.g.succ[u%nt] {
				release(base + w)
			}
		}
		for _, v := range crossSucc[u] {
			release(v)
		}
	})
	order = slices.DeleteFunc(order, func(v int) bool { return v >= total })
	if len(order) == total {
		return order, nil
	}
	return nil, r.cycleError(indegree, hub)
}

// cycleError names a cycle among the vertices order left unsorted.
func (r *resolver) cycleError(indegree []int, hub func(int) int) error {
	nt, total := r.nt, len(r.nodes)*r.nt
	pred := func(v int) []int {
		if v >= total {
			j := v - total
			out := make([]int, 0, len(r.everyOn[j]))
			for _, m := range r.everyOn[j] {
				out = append(out, r.vertex(m, j))
			}
			return out
		}
		base := v - v%nt
		out := slices.Clone(r.waitAll[v])
		for _, j := range r.waitEvery[v] {
			out = append(out, hub(j))
		}
		for _, u := range r.g.pred[v%nt] {
			out = append(out, base+u)
		}
		return out
	}
	unsorted := func(v int) bool { return indegree[v] > 0 }
	cycle := cycleThrough(slices.IndexFunc(indegree, func(d int) bool { return d > 0 }), func(v int) int {
		preds := pred(v)
		return preds[slices.IndexFunc(preds, unsorted)]
	})
	// Tasks a node does not run, and hubs, only carry the order.
	var names []string
	for _, v := range cycle {
		if v < total && r.p.applies[v/nt][v%nt] {
			names = append(names, fmt.Sprintf("%q on node %s", r.tasks[v%nt].ID, r.nodes[v/nt].ID))
		}
	}
	return errs.Invalidf("Tasks form a cycle across nodes: %s", cycleString(names))
}

// steps lists each node's steps in order, with their waits as steps of
// other nodes, and every (see resolveNodes).
func (r *resolver) steps(order []int) (map[string][]NodeStep, map[int][]StepRef) {
	nodes, nt := r.nodes, r.nt
	// Each node's steps by node index, then keyed by node id; stepAt[v]:
	// where vertex v's step is in its node's list (its node is v/nt).
	perNode := make([][]NodeStep, len(nodes))
	for n := range nodes {
		perNode[n] = make([]NodeStep, 0, len(slices.DeleteFunc(slices.Clone(r.p.applies[n]), func(b bool) bool { return !b })))
	}
	stepAt := make([]int32, len(nodes)*nt)
	for _, v := range order {
		n, i := v/nt, v%nt
		if r.p.applies[n][i] {
			stepAt[v] = int32(len(perNode[n]))
			perNode[n] = append(perNode[n], NodeStep{Task: i, Skip: r.p.skip[n][i]})
		}
	}
	stepOf := func(v int) StepRef { return StepRef{Node: nodes[v/nt].ID, Step: int(stepAt[v])} }
	var every map[int][]StepRef
	for _, tasks := range r.waitEvery {
		for _, j := range tasks {
			if _, ok := every[j]; ok {
				continue
			}
			if every == nil {
				every = map[int][]StepRef{}
			}
			refs := make([]StepRef, len(r.everyOn[j]))
			for k, m := range r.everyOn[j] {
				refs[k] = stepOf(r.vertex(m, j))
			}
			every[j] = refs
		}
	}
	steps := make(map[string][]NodeStep, len(nodes))
	for n, node := range nodes {
		own := perNode[n]
		for k := range own {
			v := r.vertex(n, own[k].Task)
			// A step of the same node before this one is passed anyway: no
			// wait; an "any" group holding one is met already.
			implied := func(ref int) bool { return ref/nt == n && int(stepAt[ref]) < k }
			for _, ref := range r.waitAll[v] {
				if !implied(ref) {
					own[k].After = append(own[k].After, stepOf(ref))
				}
			}
			for _, group := range r.waitAny[v] {
				if !slices.ContainsFunc(group, implied) {
					refs := make([]StepRef, len(group))
					for x, ref := range group {
						refs[x] = stepOf(ref)
					}
					own[k].AfterAny = append(own[k].AfterAny, refs)
				}
			}
			own[k].AfterEvery = r.waitEvery[v]
		}
		steps[node.ID] = own
	}
	return steps, every
}

// checkNodeCycles plays the plan through: a step is done once the step before
// it on its node, every step of After and of every's lists for AfterEvery,
// and one step of each AfterAny group are. A step that never gets done lies
// on a cycle (or behind one), which is named.
func checkNodeCycles(tasks []Task, nodes []ClusterNode, steps map[string][]NodeStep, every map[int][]StepRef) error {
	pt := newPlayThrough(len(tasks), nodes, steps, every)
	// In the order of the steps: which one goes first does not matter here.
	done := topoSort(pt.pending, func(a, b int) bool { return a < b }, pt.release)
	if len(done) == len(pt.pending) {
		return nil
	}
	return pt.cycleError(tasks, done)
}

// playThrough is a plan as checkNodeCycles plays it: vertices are every
// node's steps, one after another (the step before v on its node is v-1),
// then a hub per task: a compact wait for task j goes through hub(j), done
// once every step of every[j] is.
type playThrough struct {
	refs   []StepRef
	all    []*NodeStep
	offset map[string]int
	every  map[int][]StepRef
	// pending counts, by vertex, what it still waits for; dependents are the
	// vertices each one releases; groupMet[v][g]: v's AfterAny group g is met.
	pending    []int
	dependents [][]waitEdge
	groupMet   [][]bool
	// isDone, once played, marks the vertices done (hubs never waited for count as done).
	isDone []bool
}

// waitEdge releases vertex to: a plain predecessor (group -1) or one of its AfterAny group.
type waitEdge struct{ to, group int }

func newPlayThrough(nt int, nodes []ClusterNode, steps map[string][]NodeStep, every map[int][]StepRef) *playThrough {
	count := 0
	for _, n := range nodes {
		count += len(steps[n.ID])
	}
	pt := &playThrough{refs: make([]StepRef, 0, count), all: make([]*NodeStep, 0, count), offset: make(map[string]int, len(nodes)), every: every}
	for _, n := range nodes {
		pt.offset[n.ID] = len(pt.refs)
		for k := range steps[n.ID] {
			pt.refs = append(pt.refs, StepRef{Node: n.ID, Step: k})
			pt.all = append(pt.all, &steps[n.ID][k])
		}
	}
	pt.pending = make([]int, len(pt.refs)+nt)
	pt.dependents = make([][]waitEdge, len(pt.refs)+nt)
	pt.groupMet = make([][]bool, len(pt.refs))
	for j, on := range every {
		pt.pending[pt.hub(j)] = len(on)
		for _, a := range on {
			pt.dependents[pt.flat(a)] = append(pt.dependents[pt.flat(a)], waitEdge{pt.hub(j), -1})
		}
	}
	for v := range pt.refs {
		pt.addWaits(v)
	}
	return pt
}

func (pt *playThrough) flat(r StepRef) int { return pt.offset[r.Node] + r.Step }

func (pt *playThrough) hub(j int) int { return len(pt.refs) + j }

// addWaits counts what step v waits for and makes it their dependent.
func (pt *playThrough) addWaits(v int) {
	s := pt.all[v]
	if pt.refs[v].Step > 0 {
		pt.pending[v]++ // released by the step before it (release)
	}
	for _, a := range s.After {
		pt.pending[v]++
		pt.dependents[pt.flat(a)] = append(pt.dependents[pt.flat(a)], waitEdge{v, -1})
	}
	for _, j := range s.AfterEvery {
		pt.pending[v]++
		pt.dependents[pt.hub(j)] = append(pt.dependents[pt.hub(j)], waitEdge{v, -1})
	}
	pt.groupMet[v] = make([]bool, len(s.AfterAny))
	for g, group := range s.AfterAny {
		pt.pending[v]++
		for _, a := range group {
			pt.dependents[pt.flat(a)] = append(pt.dependents[pt.flat(a)], waitEdge{v, g})
		}
	}
}

// release, once vertex u is done, releases the step after it on its node and
// its dependents (an AfterAny group once, by the first of its steps done).
func (pt *playThrough) release(u int, release func(int)) {
	if next := u + 1; u < len(pt.refs) && next < len(pt.refs) && pt.refs[next].Step > 0 {
		release(next)
	}
	for _, e := range pt.dependents[u] {
		if e.group >= 0 {
			if pt.groupMet[e.to][e.group] {
				continue
			}
			pt.groupMet[e.to][e.group] = true
		}
		release(e.to)
	}
}

// cycleError names a cycle of the steps left undone: every step not done has
// a blocker not done, so walking back along blockers repeats one.
func (pt *playThrough) cycleError(tasks []Task, done []int) error {
	pt.isDone = make([]bool, len(pt.pending))
	for _, v := range done {
		pt.isDone[v] = true
	}
	start := slices.IndexFunc(pt.refs, func(r StepRef) bool { return !pt.isDone[pt.flat(r)] })
	var names []string
	for _, v := range cycleThrough(start, pt.blocker) {
		if v < len(pt.refs) {
			names = append(names, fmt.Sprintf("%q on node %s", tasks[pt.all[v].Task].ID, pt.refs[v].Node))
		}
	}
	return errs.Invalidf("Tasks form a cycle across nodes: %s", cycleString(names))
}

// blocker returns a vertex not done that undone vertex v waits for.
func (pt *playThrough) blocker(v int) int {
	if v >= len(pt.refs) {
		on := pt.every[v-len(pt.refs)]
		return pt.flat(on[slices.IndexFunc(on, func(a StepRef) bool { return !pt.isDone[pt.flat(a)] })])
	}
	r, s := pt.refs[v], pt.all[v]
	if r.Step > 0 && !pt.isDone[v-1] {
		return v - 1
	}
	for _, a := range s.After {
		if !pt.isDone[pt.flat(a)] {
			return pt.flat(a)
		}
	}
	for _, j := range s.AfterEvery {
		if !pt.isDone[pt.hub(j)] {
			return pt.hub(j)
		}
	}
	for g, group := range s.AfterAny {
		if !pt.groupMet[v][g] {
			return pt.flat(group[0])
		}
	}
	panic("graphs: a step left undone has no blocker")
}
