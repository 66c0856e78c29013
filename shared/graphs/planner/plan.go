package planner

import (
	"context"
	"math"

	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Options are what a plan is made with besides its tasks, nodes and rules.
type Options struct {
	// Filtered[i]: the run did not select task i (nil: it selected them all).
	Filtered []bool
	// Budget bounds the plan's yaql evaluations together (nil: only each one's own limits).
	Budget *yaql.Budget
	// Patterns, when set, keeps the compiled "/re/" names for other plans.
	Patterns *Patterns
	// MaxNodeTasks bounds the tasks placed, summed over the nodes (checked
	// before any expression is evaluated); MaxWaits the waits across nodes
	// (a wait for a task on every node that has it counts once). Zero: no bound.
	MaxNodeTasks, MaxWaits int
	// Explain records why each task is on each node and runs or is skipped (Result.Why).
	Explain bool
}

// Result is a plan: each node's steps and what the plan found on the way.
type Result struct {
	// Steps: node -> its steps, in the order it runs them.
	Steps map[string][]NodeStep
	// Every: task -> its step on each node that has it, the master excepted,
	// for the tasks steps wait for on every node (NodeStep.AfterEvery).
	Every map[int][]StepRef
	// Limits caps, by task id, how many nodes may run the task at once.
	Limits map[string]int
	// Unplaced are the tasks (that do work) placed on no node.
	Unplaced []string
	// Warnings name what the tasks refer to and the nodes do not have.
	Warnings []string
	// Groups are the fault-tolerance groups.
	Groups []FaultToleranceGroup
	// Why, when explained: node -> why each task is on it (by task index).
	Why map[string][]*wire.Why
}

// Plan places tasks (in dependency order) on nodes by rules, evaluates what
// depends on each node's data, and resolves the cross dependencies to each
// node's steps. It reads nothing but its arguments.
func Plan(ctx context.Context, tasks []Task, nodes []PlanNode, rules Rules, opts Options) (*Result, error) {
	filtered := opts.Filtered
	if filtered == nil {
		filtered = make([]bool, len(tasks))
	}
	maxNodeTasks, maxWaits := opts.MaxNodeTasks, opts.MaxWaits
	if maxNodeTasks <= 0 {
		maxNodeTasks = math.MaxInt
	}
	if maxWaits <= 0 {
		maxWaits = math.MaxInt
	}
	p, err := arrange(tasks, nodes, rules, opts.Patterns, opts.Explain)
	if err != nil {
		return nil, err
	}
	if err := checkNodeTasks(p, maxNodeTasks); err != nil {
		return nil, err
	}
	if err := p.evaluate(ctx, tasks, filtered, opts.Budget); err != nil {
		return nil, err
	}
	out := &Result{Limits: p.limits, Unplaced: p.unplaced}
	if out.Steps, out.Every, err = resolveNodes(tasks, p, maxWaits); err != nil {
		return nil, err
	}
	out.Groups = faultToleranceGroups(tasks, p)
	out.Warnings = append(p.warnings, masterWarnings(tasks, p)...)
	if opts.Explain {
		out.Why = make(map[string][]*wire.Why, len(nodes))
		for n := range nodes {
			out.Why[nodes[n].ID] = p.why[n]
		}
	}
	return out, nil
}
