package planner

import (
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Deps is the dependency graph of a task list: an edge u -> v means u runs before v.
//
// Edges: required_for:[r] gives task->r; requires:[r] and tasks:[r] give r->task;
// groups:[g] gives task->g, where "/re/" stands for every group task whose whole
// id matches re (a pattern that matches no group adds no edge); stage:s gives task->s.
type Deps struct {
	tasks []Task
	index map[string]int
	succ  [][]int // by task id, no duplicates
	pred  [][]int // by task id, no duplicates
	// order is the topological order: among the tasks ready at any point, the
	// one with the smallest id (byte order) comes first, so the order is stable.
	order []int
	// warnings name the dependencies on tasks that are not in the graph: as
	// in Nailgun, such a name depends on nothing.
	warnings []string
}

// NewDeps builds and sorts the graph of tasks (ids unique). It fails,
// naming the tasks, when the graph has a cycle. A dependency on a task that
// is not in the graph adds no edge and a warning (as in Nailgun, a plan runs
// without it) or, strict, fails naming both tasks (validation on request).
func NewDeps(tasks []Task, strict bool) (*Deps, error) {
	g := &Deps{
		tasks: tasks,
		index: make(map[string]int, len(tasks)),
		succ:  make([][]int, len(tasks)),
		pred:  make([][]int, len(tasks)),
	}
	for i, t := range tasks {
		g.index[t.ID] = i
	}
	var groups []int
	for i, t := range tasks {
		if t.Type == TypeGroup {
			groups = append(groups, i)
		}
	}
	var missing []string
	link := func(from, to string, self int, relation string) {
		u, uok := g.index[from]
		v, vok := g.index[to]
		if !uok || !vok {
			other := to
			if !uok {
				other = from
			}
			missing = append(missing, fmt.Sprintf("%q %s %q", tasks[self].ID, relation, other))
			return
		}
		g.addEdge(u, v)
	}
	patterns := map[string]*regexp.Regexp{}
	for i, t := range tasks {
		for _, r := range t.RequiredFor {
			link(t.ID, r, i, "is required for")
		}
		for _, r := range t.Requires {
			link(r, t.ID, i, "requires")
		}
		for _, r := range t.Tasks {
			link(r, t.ID, i, "depends on (tasks)")
		}
		for _, grp := range t.Groups {
			pattern, isRegex := groupPattern(grp)
			if !isRegex {
				// groups is a placement field (Nailgun's): a name that is no group task adds no edge.
				if j, ok := g.index[grp]; ok && tasks[j].Type == TypeGroup {
					g.addEdge(i, j)
				}
				continue
			}
			re, ok := patterns[pattern]
			if !ok {
				re = regexp.MustCompile(pattern) // validated when the task was parsed
				patterns[pattern] = re
			}
			for _, j := range groups {
				if j != i && re.MatchString(tasks[j].ID) {
					g.addEdge(i, j)
				}
			}
		}
		if t.Stage != "" {
			link(t.ID, t.Stage, i, "is in stage")
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		warning := "Tasks depend on tasks that are not in the graph: " + strings.Join(slices.Compact(missing), "; ")
		if strict {
			return nil, errs.Invalidf("%s", warning)
		}
		g.warnings = []string{warning}
	}
	for i := range g.succ {
		g.succ[i] = g.byID(g.succ[i])
		g.pred[i] = g.byID(g.pred[i])
	}
	if err := g.sort(); err != nil {
		return nil, err
	}
	return g, nil
}

func (g *Deps) addEdge(u, v int) {
	g.succ[u] = append(g.succ[u], v)
	g.pred[v] = append(g.pred[v], u)
}

// byID sorts task indexes by task id and drops repeats, so that nothing
// depends on the order of the input list.
func (g *Deps) byID(s []int) []int {
	slices.SortFunc(s, func(a, b int) int { return strings.Compare(g.tasks[a].ID, g.tasks[b].ID) })
	return slices.Compact(s)
}

// sort computes g.order: among the tasks ready at any point, the smallest id first.
func (g *Deps) sort() error {
	indegree := make([]int, len(g.tasks))
	for v := range g.tasks {
		indegree[v] = len(g.pred[v])
	}
	byID := func(a, b int) bool { return g.tasks[a].ID < g.tasks[b].ID }
	g.order = topoSort(indegree, byID, func(u int, release func(int)) {
		for _, v := range g.succ[u] {
			release(v)
		}
	})
	if len(g.order) == len(g.tasks) {
		return nil
	}
	// Back along the smallest-id unsorted predecessor, from the smallest-id unsorted task.
	unsorted := func(v int) bool { return indegree[v] > 0 }
	smallest := func(vs []int) int {
		next := -1
		for _, v := range vs {
			if unsorted(v) && (next < 0 || byID(v, next)) {
				next = v
			}
		}
		return next
	}
	all := make([]int, len(g.tasks))
	for v := range all {
		all[v] = v
	}
	cycle := cycleThrough(smallest(all), func(v int) int { return smallest(g.pred[v]) })
	names := make([]string, len(cycle))
	for i, v := range cycle {
		names[i] = fmt.Sprintf("%q", g.tasks[v].ID)
	}
	return errs.Invalidf("Tasks form a cycle: %s", cycleString(names))
}

// Order returns tasks in dependency order, ties broken by task id.
func Order(tasks []Task) ([]Task, error) {
	if err := checkDuplicates(tasks); err != nil {
		return nil, err
	}
	g, err := NewDeps(tasks, true)
	if err != nil {
		return nil, err
	}
	return g.Ordered(), nil
}

// Warnings name the dependencies on tasks that are not in the graph.
func (g *Deps) Warnings() []string { return g.warnings }

// Edges yields each dependency of the graph: the task depended on, then the
// task that depends on it.
func (g *Deps) Edges() iter.Seq2[Task, Task] {
	return func(yield func(Task, Task) bool) {
		for u := range g.tasks {
			for _, v := range g.succ[u] {
				if !yield(g.tasks[u], g.tasks[v]) {
					return
				}
			}
		}
	}
}

// Ordered returns the graph's tasks in dependency order.
func (g *Deps) Ordered() []Task {
	out := make([]Task, len(g.order))
	for i, v := range g.order {
		out[i] = g.tasks[v]
	}
	return out
}

// Subgraph selects the tasks reachable from any Start task that reach any End
// task (both ends included); an empty side does not limit.
type Subgraph struct {
	Start []string `json:"start"`
	End   []string `json:"end"`
}

// Selection is what a run selects of a graph: its Tasks (none: all) but
// SkipTasks, on a path of one of its Subgraphs (none: everywhere).
type Selection struct {
	// GraphType names the graph in errors.
	GraphType        string
	Tasks, SkipTasks []string
	Subgraphs        []Subgraph
}

// Select returns the ordered tasks of one run of the graph (each node runs
// those placed on it, see Plan): tasks the run does not select are sent as
// skipped, and marked filtered (Options.Filtered).
func (g *Deps) Select(run Selection) ([]Task, []bool, error) {
	if unknown := g.missingIDs(append(slices.Clone(run.Tasks), run.SkipTasks...)); len(unknown) > 0 {
		return nil, nil, errs.Invalidf("Tasks %s are not present in deployment graph %q", strings.Join(unknown, ", "), run.GraphType)
	}
	selected := make([]bool, len(g.tasks))
	for i := range selected {
		selected[i] = len(run.Tasks) == 0
	}
	for _, id := range run.Tasks {
		selected[g.index[id]] = true
	}
	for _, id := range run.SkipTasks {
		selected[g.index[id]] = false
	}
	if len(run.Subgraphs) > 0 {
		inSub, err := g.subgraphMembers(run.GraphType, run.Subgraphs)
		if err != nil {
			return nil, nil, err
		}
		for i := range selected {
			selected[i] = selected[i] && inSub[i]
		}
	}
	plan := make([]Task, len(g.order))
	filtered := make([]bool, len(g.order))
	for i, v := range g.order {
		t := g.tasks[v]
		if !selected[v] && !t.NoOp() {
			t, filtered[i] = t.asSkipped(), true
		}
		plan[i] = t
	}
	return plan, filtered, nil
}

// subgraphMembers marks the tasks that lie on a path of one of the subgraphs.
func (g *Deps) subgraphMembers(graphType string, subgraphs []Subgraph) ([]bool, error) {
	members := make([]bool, len(g.tasks))
	for i, sg := range subgraphs {
		if unknown := g.missingIDs(append(slices.Clone(sg.Start), sg.End...)); len(unknown) > 0 {
			return nil, errs.Invalidf("subgraphs[%d]: Tasks %s are not present in deployment graph %q", i, strings.Join(unknown, ", "), graphType)
		}
		fromStart := g.reach(sg.Start, g.succ)
		toEnd := g.reach(sg.End, g.pred)
		for v := range members {
			members[v] = members[v] || (fromStart[v] && toEnd[v])
		}
	}
	return members, nil
}

// reach marks the tasks reachable from ids (included) along edges; with no ids, every task.
func (g *Deps) reach(ids []string, edges [][]int) []bool {
	marked := make([]bool, len(g.tasks))
	if len(ids) == 0 {
		for i := range marked {
			marked[i] = true
		}
		return marked
	}
	stack := make([]int, 0, len(ids))
	for _, id := range ids {
		v := g.index[id]
		if !marked[v] {
			marked[v] = true
			stack = append(stack, v)
		}
	}
	for len(stack) > 0 {
		u := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, v := range edges[u] {
			if !marked[v] {
				marked[v] = true
				stack = append(stack, v)
			}
		}
	}
	return marked
}

// missingIDs returns the ids that are not tasks of g, sorted and without repeats.
func (g *Deps) missingIDs(ids []string) []string {
	var out []string
	for _, id := range ids {
		if _, ok := g.index[id]; !ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
