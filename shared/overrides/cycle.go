package overrides

import (
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// edge is a dependency: from is applied before to.
type edge struct{ from, to int }

// dependencyGraph holds the relationships between the resources of a catalog,
// by resource index.
type dependencyGraph struct {
	next     [][]int  // successors of each resource
	declared [][]edge // the edges each resource's own metaparameters declare
}

// newDependencyGraph reads the metaparameters of every resource: A {before/notify => B}
// is A -> B, A {require/subscribe => B} is B -> A. References to resources
// outside the catalog cannot be part of a cycle and are left out.
func newDependencyGraph(catalog []Resource, index map[Ref]int) (*dependencyGraph, error) {
	g := &dependencyGraph{next: make([][]int, len(catalog)), declared: make([][]edge, len(catalog))}
	for i, r := range catalog {
		for _, name := range metaparameters {
			v, ok := r.Parameters[name]
			if !ok {
				continue
			}
			refs, err := refList(catalogPath.index(i).key("parameters").key(name), v)
			if err != nil {
				return nil, err
			}
			for _, ref := range refs {
				j, ok := index[ref]
				if !ok {
					continue
				}
				e := edge{from: i, to: j}
				if name == "require" || name == "subscribe" {
					e = edge{from: j, to: i}
				}
				g.next[e.from] = append(g.next[e.from], e.to)
				g.declared[i] = append(g.declared[i], e)
			}
		}
	}
	return g, nil
}

// checkCycles fails when an edge declared by a touched (updated or created)
// resource lies on a cycle. Edges of untouched resources can close such a
// cycle, but a cycle made only of them was in the catalog already and is not
// the override data's doing.
func checkCycles(catalog []Resource, index map[Ref]int, touched []int) error {
	g, err := newDependencyGraph(catalog, index)
	if err != nil {
		return err
	}
	component := g.components()
	for _, r := range touched {
		for _, e := range g.declared[r] {
			if component[e.from] != component[e.to] {
				continue
			}
			cycle := append([]int{e.from}, g.shortestPath(e.to, e.from)...)
			names := make([]string, len(cycle))
			for i, n := range cycle {
				names[i] = catalog[n].Ref().String()
			}
			return errs.Invalidf("dependency cycle: %s; the catalog was left unchanged", strings.Join(names, " -> "))
		}
	}
	return nil
}

// components numbers the strongly connected components (Tarjan): two
// resources share a number exactly when each depends on the other. A
// self-loop's resource is its own component, so an edge u -> u is caught too.
func (g *dependencyGraph) components() []int {
	n := len(g.next)
	component, order, low := make([]int, n), make([]int, n), make([]int, n)
	onStack := make([]bool, n)
	var stack []int
	visited, found := 0, 0
	var visit func(v int)
	visit = func(v int) {
		visited++
		order[v], low[v] = visited, visited
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range g.next[v] {
			switch {
			case order[w] == 0:
				visit(w)
				low[v] = min(low[v], low[w])
			case onStack[w]:
				low[v] = min(low[v], order[w])
			}
		}
		if low[v] != order[v] {
			return
		}
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			component[w] = found
			if w == v {
				break
			}
		}
		found++
	}
	for v := range n {
		if order[v] == 0 {
			visit(v)
		}
	}
	return component
}

// shortestPath returns the resources on a shortest path from -> ... -> to
// (breadth-first, so the result is the same on every run); to must be reachable.
func (g *dependencyGraph) shortestPath(from, to int) []int {
	prev := map[int]int{from: from}
	queue := []int{from}
	for len(queue) > 0 && queue[0] != to {
		v := queue[0]
		queue = queue[1:]
		for _, w := range g.next[v] {
			if _, seen := prev[w]; !seen {
				prev[w] = v
				queue = append(queue, w)
			}
		}
	}
	path := []int{to}
	for v := to; v != from; v = prev[v] {
		path = append(path, prev[v])
	}
	slices.Reverse(path)
	return path
}
