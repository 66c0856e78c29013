package configdb

import "github.com/tuningbox/tuningbox/shared/metrics"

// RegisterMetrics reports the service's caches (by their names prefixed
// "configdb.") and the reads waiting for a change to reg.
func (s *Service) RegisterMetrics(reg *metrics.Registry) {
	s.cache.register(reg)
	reg.Cache("configdb.docs", s.documents.docs)
	reg.Cache("configdb.snapshots", s.snapshots.snapshots)
	reg.Cache("configdb.responses", s.answers.responses)
	reg.Func(metrics.WatchersWaiting, metrics.WatchersWaitingHelp, metrics.KindGauge, []string{"kind"},
		func() float64 { return float64(s.watch.waiting.Load()) }, "document")
}
