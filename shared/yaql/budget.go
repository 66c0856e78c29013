package yaql

import (
	"context"
	"sync/atomic"
	"time"
)

// Default budget of a request's evaluations together (BudgetLimits' zero fields):
// a step is some 10 to 50 ns, so the steps are one to five seconds of CPU.
// fuel-library's default graph planned on 1,000 nodes spends 670,000 steps and
// 44 bytes on a first run, 1,580,000 and 16 KB on a re-run, 2,310,000 steps
// explained (its conditions share most of their work through a Cache); the time
// is below API Gateway's 29 s, so that the answer names the budget rather than
// being the gateway's 504.
const (
	DefaultBudgetSteps = 100_000_000
	DefaultBudgetBytes = 64 << 20
	DefaultBudgetTime  = 25 * time.Second
)

// BudgetLimits are the totals a Budget allows.
type BudgetLimits struct {
	Steps int64         // steps of all the evaluations (Limits.Steps counts the same)
	Bytes int64         // bytes of the strings they make (Limits.Bytes counts the same)
	Time  time.Duration // from NewBudget to the deadline Context sets
}

// Budget bounds all the evaluations of one request together: a plan evaluates one
// expression per task and node, each within its own Limits, and thousands of them
// must not add up to minutes of CPU. The caller makes one per request, evaluates
// under the context Context returns and passes the Budget in every Env. It is safe
// for concurrent use; evaluations running at once may together overrun it by what
// each may still spend when it starts.
type Budget struct {
	limits       BudgetLimits
	deadline     time.Time
	steps, bytes atomic.Int64
}

// NewBudget starts a request's budget now; zero limits are the defaults.
func NewBudget(limits BudgetLimits) *Budget {
	if limits.Steps <= 0 {
		limits.Steps = DefaultBudgetSteps
	}
	if limits.Bytes <= 0 {
		limits.Bytes = DefaultBudgetBytes
	}
	if limits.Time <= 0 {
		limits.Time = DefaultBudgetTime
	}
	return &Budget{limits: limits, deadline: time.Now().Add(limits.Time)}
}

// Context is ctx ending at the budget's deadline, when context.Cause gives the
// budget's *LimitError ("time"), so that the request's other work stops too and
// the error says which budget ran out.
func (b *Budget) Context(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadlineCause(ctx, b.deadline, &LimitError{Budget: "time", Limit: int64(b.limits.Time), Plan: true})
}

// Used reports the steps and bytes the evaluations spent so far.
func (b *Budget) Used() (steps, bytes int64) { return b.steps.Load(), b.bytes.Load() }

// remaining is what an evaluation starting now may spend of the budget.
func (b *Budget) remaining() (steps, bytes int64) {
	return b.limits.Steps - b.steps.Load(), b.limits.Bytes - b.bytes.Load()
}

// charge adds what an evaluation spent.
func (b *Budget) charge(steps, bytes int) {
	b.steps.Add(int64(steps))
	b.bytes.Add(int64(bytes))
}
