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
// checked as the plan is built. fuel-library's default graph on 5,000 nodes is
// 1,020,000 pairs, 328,600 node tasks (group and stage tasks included) and some
// 80,000 waits across nodes (those for a task on every node stored once per step),
// a plan of 10 MB of JSON.
type PlanLimits struct {
	// Budget bounds the request's yaql evaluations together: steps, bytes and
	// time, which is also the request's deadline (zero fields: yaql's defaults).
	Budget yaql.BudgetLimits
	// Pairs bounds tasks x nodes: the planner keeps some 100 bytes per pair.
	Pairs int
	// NodeTasks bounds the tasks placed, summed over the nodes.
	NodeTasks int
	// Edges bounds the waits across nodes the cross dependencies make (a
	// wait for a task on every node that has it counts once).
	Edges int
}

// Default plan limits (PlanLimits' zero fields), how many cross dependencies an
// expression may give (fuel-library's give at most a few), and what a plan's
// compiled "/re/" names may hold (fuel-library's are a handful of KB; names from
// expressions could otherwise be a new regular expression per node).
const (
	DefaultPlanPairs     = 2_000_000
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
