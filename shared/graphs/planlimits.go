package graphs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// PlanLimits bound what one request may plan (serialized_tasks, an execution, an
// upload with ?validate): its yaql evaluations together, and the size of each plan,
// checked before the plan is built. fuel-library's default graph on 1,000 nodes is
// 204,000 pairs, 65,716 node tasks (group and stage tasks included) and 785,000 waits
// across nodes, a plan of 20.7 MB of JSON: a fifth, an eighth and a fifth of the defaults.
type PlanLimits struct {
	// Budget bounds the request's yaql evaluations together: steps, bytes and
	// time, which is also the request's deadline (zero fields: yaql's defaults).
	Budget yaql.BudgetLimits
	// Pairs bounds tasks x nodes: the planner keeps some 100 bytes per pair.
	Pairs int
	// NodeTasks bounds the tasks placed, summed over the nodes.
	NodeTasks int
	// Edges bounds the waits across nodes the cross dependencies make.
	Edges int
}

// Default plan limits (PlanLimits' zero fields), how many cross dependencies an
// expression may give (fuel-library's give at most a few), and what a plan's
// compiled "/re/" names may hold (fuel-library's are a handful of KB; names from
// expressions could otherwise be a new regular expression per node).
const (
	DefaultPlanPairs     = 1_000_000
	DefaultPlanNodeTasks = 500_000
	DefaultPlanEdges     = 4_000_000
	MaxCrossDependencies = 1000
	maxPlanPatternBytes  = 64 << 20
)

// matchesNothing is the matcher of the names a plan no longer compiles.
var matchesNothing = mustPattern(`$.^`)

func mustPattern(src string) *yaql.Pattern {
	p, err := yaql.CompilePattern(src)
	if err != nil {
		panic(err)
	}
	return p
}

// WithPlanLimits sets the limits of planning; zero fields keep the defaults.
func WithPlanLimits(l PlanLimits) Option {
	return func(s *Service) {
		if l.Pairs <= 0 {
			l.Pairs = DefaultPlanPairs
		}
		if l.NodeTasks <= 0 {
			l.NodeTasks = DefaultPlanNodeTasks
		}
		if l.Edges <= 0 {
			l.Edges = DefaultPlanEdges
		}
		s.planLimits = l
	}
}

// planning starts a request that plans: its budget, and its context, which ends at
// the budget's deadline (or when the client leaves). The request ends with
// defer finish(&err), which names the budget that stopped it.
func (s *Service) planning(ctx context.Context) (_ context.Context, _ *yaql.Budget, finish func(*error)) {
	budget := yaql.NewBudget(s.planLimits.Budget)
	ctx, cancel := budget.Context(ctx)
	return ctx, budget, func(err *error) {
		*err = planFailed(ctx, *err)
		cancel()
	}
}

// expressionFailed is the error of an expression that failed in a plan: the request's
// budget of time (503) or of steps and bytes (413), the request's own end (as it is),
// or else the expression's (400); the message is formatted from format and args.
func expressionFailed(err error, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	var limit *yaql.LimitError
	switch {
	case errors.As(err, &limit) && limit.Plan && limit.Budget == "time":
		return errs.Wrap(errs.Unavailable, err, msg)
	case errors.As(err, &limit) && limit.Plan:
		return errs.Wrap(errs.TooLarge, err, msg)
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	}
	return errs.Wrap(errs.Invalid, err, msg)
}

// planFailed names the budget a request ran out of when the work that stopped at its
// deadline was not yaql's (a store read answers context.DeadlineExceeded).
func planFailed(ctx context.Context, err error) error {
	var limit *yaql.LimitError
	if err != nil && errs.KindOf(err) == errs.Internal && ctx.Err() != nil && errors.As(context.Cause(ctx), &limit) {
		return errs.Wrap(errs.Unavailable, limit, fmt.Sprintf("planning ran out of its time budget (%s)", time.Duration(limit.Limit)))
	}
	return err
}

func tooLarge(what string, n, limit int, hint string) error {
	return errs.New(errs.TooLarge, "the plan would have %d %s, over the limit of %d: %s", n, what, limit, hint)
}

// checkPairs bounds tasks x nodes, before anything is placed.
func (l PlanLimits) checkPairs(tasks, nodes int) error {
	if pairs := tasks * nodes; pairs > l.Pairs {
		return tooLarge(fmt.Sprintf("task x node pairs (%d tasks, %d nodes)", tasks, nodes), pairs, l.Pairs, "plan fewer nodes at once")
	}
	return nil
}

// checkPatterns bounds the plan's compiled names.
func checkPatterns(p *placement) error {
	if p.patternBytes > maxPlanPatternBytes {
		return errs.New(errs.TooLarge, "the plan's \"/re/\" names compile to over %d bytes: use fewer distinct regular expressions", maxPlanPatternBytes)
	}
	return nil
}

// checkNodeTasks bounds the tasks placed on nodes, before any is evaluated.
func (l PlanLimits) checkNodeTasks(p *placement) error {
	if err := checkPatterns(p); err != nil {
		return err
	}
	placed := 0
	for _, applies := range p.applies {
		for _, on := range applies {
			if on {
				placed++
			}
		}
	}
	if placed > l.NodeTasks {
		return tooLarge("node tasks", placed, l.NodeTasks, "plan fewer nodes at once, or place tasks on fewer roles")
	}
	return nil
}

// checkEdges bounds the waits across nodes that the cross dependencies would make
// (resolveNodes; counted as it counts them, repeats included), before they are made.
func (l PlanLimits) checkEdges(tasks []Task, p *placement) error {
	index := make(map[string]int, len(tasks))
	for i, t := range tasks {
		index[t.ID] = i
	}
	type selected struct {
		takes *bool // the selection (crossSelection's shared answer)
		task  int
	}
	// on counts the nodes of a selection that a task is placed on.
	on := map[selected]int{}
	count := func(takes []bool, j int) int {
		key := selected{&takes[0], j}
		c, ok := on[key]
		if !ok {
			for m := range takes {
				if takes[m] && p.applies[m][j] {
					c++
				}
			}
			on[key] = c
		}
		return c
	}
	named := map[string][]int{}
	edges := 0
	for i, t := range tasks {
		for n := range p.nodes {
			if !p.applies[n][i] {
				continue
			}
			for _, dependedBy := range []bool{false, true} {
				for _, cd := range p.crossDeps(t, n, i, dependedBy) {
					ids, ok := named[cd.Name]
					if !ok {
						ids = p.tasksNamed(tasks, index, cd.Name)
						named[cd.Name] = ids
					}
					takes, self := p.crossSelection(cd, n)
					for _, j := range ids {
						if takes != nil {
							edges += count(takes, j)
						}
						if self {
							edges++
						}
					}
					if edges > l.Edges {
						return tooLarge("cross-node waits or more", edges, l.Edges, fmt.Sprintf("task %q's cross dependencies select too many tasks on too many nodes", t.ID))
					}
				}
			}
		}
	}
	return checkPatterns(p)
}
