package graphs

import (
	"sync"

	"github.com/tuningbox/tuningbox/shared/metrics"
)

// The families of deployment events: each counts what entered a state in this
// process, so the store is not read to report them.
const (
	runsFamily  = "tuningbox_runs_total"
	tasksFamily = "tuningbox_tasks_total"
)

// stateCounts counts the transactions (runs) and tasks that entered each state.
type stateCounts struct {
	reg *metrics.Registry
	mu  sync.Mutex
	// byState holds each family's counter per state, resolved once.
	byState map[[2]string]*metrics.Counter
}

func (c *stateCounts) count(family, state string) {
	c.mu.Lock()
	counter, ok := c.byState[[2]string{family, state}]
	if !ok {
		help := "Deployment transactions that entered a state in this process (running, ready, error, stopped)."
		if family == tasksFamily {
			help = "Tasks that entered a state in this process: claimed (running) or reported (ready, skipped, error)."
		}
		counter = c.reg.Counter(family, help, []string{"state"}, state)
		if c.byState == nil {
			c.byState = map[[2]string]*metrics.Counter{}
		}
		c.byState[[2]string{family, state}] = counter
	}
	c.mu.Unlock()
	counter.Inc()
}

// RegisterMetrics reports the service's caches (by their names prefixed
// "graphs."), the agents' claims waiting for work, and the transactions and
// tasks that entered each state to reg.
func (s *Service) RegisterMetrics(reg *metrics.Registry) {
	reg.Cache("graphs.tasks", s.decoded)
	reg.Cache("graphs.plans", s.plans)
	reg.Cache("graphs.patterns", s.patterns)
	reg.Func(metrics.WatchersWaiting, metrics.WatchersWaitingHelp, metrics.KindGauge, []string{"kind"},
		func() float64 { return float64(s.executions.waiting.Load()) }, "claim")
	s.states.mu.Lock()
	defer s.states.mu.Unlock()
	s.states.reg, s.states.byState = reg, nil
}
