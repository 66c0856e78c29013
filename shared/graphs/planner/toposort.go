package planner

import (
	"container/heap"
	"slices"
	"strings"
)

// topoSort sorts the vertices 0..len(indegree)-1 (Kahn's algorithm): a
// vertex is ready once its indegree[v] predecessors have released it, and
// among the ready ones the least by less goes first; each vertex sorted
// releases its successors through succ. It returns the order; the vertices
// left unsorted (indegree > 0 after it) lie on a cycle or behind one.
func topoSort(indegree []int, less func(a, b int) bool, succ func(u int, release func(v int))) []int {
	ready := &vertexHeap{less: less}
	for v, d := range indegree {
		if d == 0 {
			ready.items = append(ready.items, v)
		}
	}
	heap.Init(ready)
	release := func(v int) {
		if indegree[v]--; indegree[v] == 0 {
			heap.Push(ready, v)
		}
	}
	order := make([]int, 0, len(indegree))
	for ready.Len() > 0 {
		u := heap.Pop(ready).(int)
		order = append(order, u)
		succ(u, release)
	}
	return order
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

// cycleThrough walks back from start, a vertex left unsorted, along back
// (an unsorted predecessor of a vertex: every unsorted vertex has one) until
// a vertex repeats, and returns that cycle forwards.
func cycleThrough(start int, back func(v int) int) []int {
	seenAt := map[int]int{}
	var path []int
	for v := start; ; v = back(v) {
		if at, ok := seenAt[v]; ok {
			path = path[at:]
			break
		}
		seenAt[v] = len(path)
		path = append(path, v)
	}
	slices.Reverse(path)
	return path
}

// cycleString names a cycle's entries "a -> b -> ... -> a" from its
// smallest one, so that the message does not depend on where the walk began.
func cycleString(names []string) string {
	first := 0
	for i, name := range names {
		if name < names[first] {
			first = i
		}
	}
	names = append(names[first:], names[:first]...)
	return strings.Join(append(names, names[0]), " -> ")
}
