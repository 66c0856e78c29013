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

// Default plan limits (PlanLimits' zero fields).
const (
	DefaultPlanPairs     = 2_000_000
	DefaultPlanNodeTasks = 500_000
	DefaultPlanEdges     = 4_000_000
)

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

// planFailed names the budget a request ran out of when the work that stopped at its
// deadline was not yaql's (a store read answers context.DeadlineExceeded).
func planFailed(ctx context.Context, err error) error {
	var limit *yaql.LimitError
	if err != nil && errs.KindOf(err) == errs.Internal && ctx.Err() != nil && errors.As(context.Cause(ctx), &limit) {
		return errs.Wrap(errs.Unavailable, limit, fmt.Sprintf("planning ran out of its time budget (%s)", time.Duration(limit.Limit)))
	}
	return err
}
