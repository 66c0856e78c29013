package graphs

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// depGraph is the dependency graph of a task list: an edge u -> v means u runs before v.
//
// Edges: required_for:[r] gives task->r; requires:[r] and tasks:[r] give r->task;
// groups:[g] gives task->g, where "/re/" stands for every group task whose whole
// id matches re (a pattern that matches no group adds no edge); stage:s gives task->s.
type depGraph struct {
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

// newDepGraph builds and sorts the graph of tasks (ids unique). It fails,
// naming the tasks, when the graph has a cycle. A dependency on a task that
// is not in the graph adds no edge and a warning (as in Nailgun, a plan runs
// without it) or, strict, fails naming both tasks (validation on request).
func newDepGraph(tasks []Task, strict bool) (*depGraph, error) {
	g := &depGraph{
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

func (g *depGraph) addEdge(u, v int) {
	g.succ[u] = append(g.succ[u], v)
	g.pred[v] = append(g.pred[v], u)
}

// byID sorts task indexes by task id and drops repeats, so that nothing
// depends on the order of the input list.
func (g *depGraph) byID(s []int) []int {
	slices.SortFunc(s, func(a, b int) int { return strings.Compare(g.tasks[a].ID, g.tasks[b].ID) })
	return slices.Compact(s)
}

// sort computes g.order: among the tasks ready at any point, the smallest id first.
func (g *depGraph) sort() error {
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
	g, err := newDepGraph(tasks, true)
	if err != nil {
		return nil, err
	}
	return g.ordered(), nil
}

func (g *depGraph) ordered() []Task {
	out := make([]Task, len(g.order))
	for i, v := range g.order {
		out[i] = g.tasks[v]
	}
	return out
}
