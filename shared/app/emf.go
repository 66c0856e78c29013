package app

import (
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuningbox/tuningbox/shared/metrics"
)

// emfNamespace is the CloudWatch namespace of the metrics a function writes.
const emfNamespace = "tuningbox"

// emfSeriesEvery is how often an instance writes what its counters and
// gauges did (CloudWatch's standard resolution): every invocation writes
// its request, but a line per cache and store kind at every invocation
// would cost more in log ingestion than serving the request.
const emfSeriesEvery = time.Minute

// emfState is what FlushEMF needs across invocations: the invocation's
// request, and the values already written, so that counters go out as what
// changed since the last flush (CloudWatch sums them).
type emfState struct {
	function string
	mu       sync.Mutex
	// pending is the request of the invocation not flushed yet (none: nil):
	// its count by route, method and code, its duration by route.
	pending []*emfEntry
	// written holds the value of every series as last flushed, by family and
	// label values; seriesAt is when (zero: never).
	written  map[string]float64
	seriesAt time.Time
}

// emfEntry is one set of label values with the metrics it carries.
type emfEntry struct {
	labels, values []string
	metrics        []emfMetric
}

type emfMetric struct {
	name, unit string
	value      float64
}

func (s *emfState) request(route, method string, code int, seconds float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = []*emfEntry{
		{labels: []string{"route", "method", "code"}, values: []string{route, method, strconv.Itoa(code)}, metrics: []emfMetric{{RequestsTotal, "Count", 1}}},
		{labels: []string{"route"}, values: []string{route}, metrics: []emfMetric{{RequestDuration, "Seconds", seconds}}},
	}
}

// EnableEMF makes the metrics keep what FlushEMF writes; function is the
// value of the "function" dimension every metric gets (the Lambda function's name).
func (m *Metrics) EnableEMF(function string) {
	m.invocation = &emfState{function: function, written: map[string]float64{}}
}

// FlushEMF writes, as CloudWatch Embedded Metric Format JSON lines, the
// request of the invocation that just ended and, at most every
// emfSeriesEvery, every series that changed since it last wrote them:
// counters as their increase, gauges as their level. Series with different
// label names share a line, so a flush takes as few lines as the most label
// values one label set changed in. Without EnableEMF, or with nothing
// changed, it writes nothing. What changed after an instance's last flush of
// the series is not written (Lambda gives no notice of the end).
func (m *Metrics) FlushEMF(w io.Writer, now time.Time) error {
	s := m.invocation
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	entries := s.pending
	s.pending = nil
	if !s.seriesAt.IsZero() && now.Sub(s.seriesAt) < emfSeriesEvery {
		return s.write(w, entries, now)
	}
	s.seriesAt = now
	bySeries := map[string]*emfEntry{}
	m.registry.Each(func(f metrics.Family, series metrics.Series, value float64) {
		key := f.Name + "\x00" + strings.Join(series.Values, "\x00")
		change := value
		if f.Kind == metrics.KindCounter {
			change = value - s.written[key]
		}
		last, seen := s.written[key]
		if f.Kind == metrics.KindCounter && change == 0 || f.Kind == metrics.KindGauge && (seen && last == value || !seen && value == 0) {
			return
		}
		s.written[key] = value
		entryKey := strings.Join(f.Labels, "\x00") + "\x01" + strings.Join(series.Values, "\x00")
		e, ok := bySeries[entryKey]
		if !ok {
			e = &emfEntry{labels: f.Labels, values: series.Values}
			bySeries[entryKey] = e
			entries = append(entries, e)
		}
		e.metrics = append(e.metrics, emfMetric{f.Name, "Count", change})
	})
	return s.write(w, entries, now)
}

// write writes the entries as EMF lines.
func (s *emfState) write(w io.Writer, entries []*emfEntry, now time.Time) error {
	for _, line := range s.pack(entries, now) {
		b, err := json.Marshal(line)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// pack places each entry in the first line whose members it does not clash
// with (a label of another value, a metric already there), each line one EMF document.
func (s *emfState) pack(entries []*emfEntry, now time.Time) []map[string]any {
	var lines []map[string]any
	for _, e := range entries {
		i := slices.IndexFunc(lines, func(line map[string]any) bool { return fits(line, e) })
		if i < 0 {
			lines = append(lines, map[string]any{"function": s.function, "_aws": map[string]any{"Timestamp": now.UnixMilli(), "CloudWatchMetrics": []any{}}})
			i = len(lines) - 1
		}
		line := lines[i]
		for j, l := range e.labels {
			line[l] = e.values[j]
		}
		var defs []map[string]string
		for _, metric := range e.metrics {
			line[metric.name] = metric.value
			defs = append(defs, map[string]string{"Name": metric.name, "Unit": metric.unit})
		}
		meta := line["_aws"].(map[string]any)
		meta["CloudWatchMetrics"] = append(meta["CloudWatchMetrics"].([]any), map[string]any{
			"Namespace": emfNamespace, "Dimensions": [][]string{append([]string{"function"}, e.labels...)}, "Metrics": defs,
		})
	}
	return lines
}

func fits(line map[string]any, e *emfEntry) bool {
	for j, l := range e.labels {
		if v, ok := line[l]; ok && v != e.values[j] {
			return false
		}
	}
	for _, metric := range e.metrics {
		if _, ok := line[metric.name]; ok {
			return false
		}
	}
	return true
}
