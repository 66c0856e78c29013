package planner

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// DOTOptions filter the graph.gv rendering.
type DOTOptions struct {
	// Tasks, when set, keeps these tasks as they are and shows every other
	// (except group, stage and skipped tasks) as skipped.
	Tasks []string
	// ParentsFor, when set, shows only this task and everything it depends on.
	ParentsFor string
	// Remove drops the tasks of these types: any of group, stage, skipped.
	Remove []string
}

// removableTypes are the task types DOTOptions.Remove accepts.
var removableTypes = []string{TypeGroup, TypeStage, TypeSkipped}

// DOT draws the graph g, named name, after applying opts. Nodes come
// in dependency order, edges by source in that order then by target id, so
// equal graphs render to equal text.
func DOT(name string, g *Deps, opts DOTOptions) (string, error) {
	if unknown := g.missingIDs(opts.Tasks); len(unknown) > 0 {
		return "", errs.Invalidf("Tasks %s are not present in deployment graph", strings.Join(unknown, ", "))
	}
	if _, ok := g.index[opts.ParentsFor]; opts.ParentsFor != "" && !ok {
		return "", errs.Invalidf("Task %s is not present in graph", opts.ParentsFor)
	}
	var badTypes []string
	for _, typ := range opts.Remove {
		if !slices.Contains(removableTypes, typ) {
			badTypes = append(badTypes, typ)
		}
	}
	if len(badTypes) > 0 {
		return "", errs.Invalidf("Task types %s do not exist (remove accepts %s)", strings.Join(badTypes, ", "), strings.Join(removableTypes, ", "))
	}
	// Marking tasks skipped changes no edge: only group tasks are the targets of
	// pattern edges, and they are never marked.
	shown := onlyTasks(g.tasks, opts.Tasks)
	var roots []string
	if opts.ParentsFor != "" {
		roots = []string{opts.ParentsFor}
	}
	keep := g.reach(roots, g.pred)
	for i, t := range shown {
		if slices.Contains(opts.Remove, t.Type) {
			keep[i] = false
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(name))
	b.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n")
	for _, v := range g.order {
		if keep[v] {
			fmt.Fprintf(&b, "  %s%s;\n", dotQuote(shown[v].ID), dotStyle[shown[v].Type])
		}
	}
	for _, u := range g.order {
		if !keep[u] {
			continue
		}
		for _, v := range g.succ[u] {
			if keep[v] {
				fmt.Fprintf(&b, "  %s -> %s;\n", dotQuote(shown[u].ID), dotQuote(shown[v].ID))
			}
		}
	}
	b.WriteString("}\n")
	return b.String(), nil
}

// dotStyle sets structural and skipped tasks apart from the tasks that run.
var dotStyle = map[string]string{
	TypeGroup:   " [shape=ellipse, fillcolor=yellowgreen]",
	TypeStage:   " [shape=diamond, fillcolor=lightblue]",
	TypeSkipped: " [fillcolor=gray95, fontcolor=gray50]",
}

// onlyTasks returns tasks with every task not selected (and not structural)
// turned into a skipped one; with no selection, tasks as they are.
func onlyTasks(tasks []Task, selected []string) []Task {
	if len(selected) == 0 {
		return tasks
	}
	keep := make(map[string]bool, len(selected))
	for _, id := range selected {
		keep[id] = true
	}
	out := make([]Task, len(tasks))
	for i, t := range tasks {
		if !t.NoOp() && !keep[t.ID] {
			t = t.asSkipped()
		}
		out[i] = t
	}
	return out
}

// dotQuote quotes a DOT identifier.
func dotQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
}
