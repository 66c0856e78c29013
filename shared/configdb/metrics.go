package configdb

import "github.com/tuningbox/tuningbox/shared/metrics"

// RegisterMetrics reports the service's caches (by their names prefixed
// "configdb.") and the reads waiting for a change to reg.
func (s *Service) RegisterMetrics(reg *metrics.Registry) {
	for name, c := range map[string]metrics.CacheStats{
		"docs": s.docs, "responses": s.responses, "merges": s.merges, "guesses": s.guesses,
		"environments": s.envs, "resource_definitions": s.resdefs, "placements": s.placements,
		"schemas": s.schemas, "heads": s.heads, "snapshots": s.snapshots,
	} {
		reg.Cache("configdb."+name, c)
	}
	reg.Func(metrics.WatchersWaiting, metrics.WatchersWaitingHelp, metrics.KindGauge, []string{"kind"},
		func() float64 { return float64(s.watch.waiting.Load()) }, "document")
}
