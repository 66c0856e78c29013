package planner

import (
	"context"
	"errors"
	"fmt"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// How many cross dependencies an expression may give (fuel-library's give at
// most a few), and what a plan's compiled "/re/" names may hold
// (fuel-library's are a handful of KB; names from expressions could
// otherwise be a new regular expression per node).
const (
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

func tooLarge(what string, n, limit int, hint string) error {
	return errs.New(errs.TooLarge, "the plan would have %d %s, over the limit of %d: %s", n, what, limit, hint)
}

// CheckPairs bounds tasks x nodes to maxPairs, before anything is placed
// (or the nodes' data read).
func CheckPairs(tasks, nodes, maxPairs int) error {
	if pairs := tasks * nodes; pairs > maxPairs {
		return tooLarge(fmt.Sprintf("task x node pairs (%d tasks, %d nodes)", tasks, nodes), pairs, maxPairs, "plan fewer nodes at once")
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

// checkNodeTasks bounds the tasks placed on nodes to maxNodeTasks, before any is evaluated.
func checkNodeTasks(p *placement, maxNodeTasks int) error {
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
	if placed > maxNodeTasks {
		return tooLarge("node tasks", placed, maxNodeTasks, "plan fewer nodes at once, or place tasks on fewer roles")
	}
	return nil
}
