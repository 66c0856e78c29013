// Package promexport exports a handler's metrics (shared/app.Metrics) as
// Prometheus text at GET /metrics: the app.Scraper of the processes that
// serve the API themselves (the local server, the tools and tests). The
// Lambda functions do not import it: Prometheus's client brings protobuf,
// whose reflection makes the linker keep every exported method of every
// reachable type, and collectors that run at start-up.
package promexport

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/metrics"
)

// exporter holds the request series (Prometheus counters and histograms,
// resolved per route once) beside the collector of the neutral registry.
type exporter struct {
	gatherer *prometheus.Registry
	// routes holds each route's series by route id (app.UnmatchedRoute for a request no route took).
	routes map[string]*routeSeries
}

// New is the Scraper of reg (app.Options.Scraper): the requests by route,
// method and code and their durations, every series of reg, and the Go
// runtime's and the process's collectors.
func New(reg *metrics.Registry) app.Scraper {
	e := &exporter{gatherer: prometheus.NewRegistry(), routes: map[string]*routeSeries{}}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: app.RequestsTotal, Help: app.RequestsHelp},
		[]string{"route", "method", "code"})
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: app.RequestDuration, Help: app.RequestDurationHelp,
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25}}, []string{"route"})
	e.gatherer.MustRegister(requests, durations, registryCollector{reg},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, id := range append(routeIDs(), app.UnmatchedRoute) {
		s := &routeSeries{id: id, durations: durations, requests: requests}
		s.counters.Store(&map[methodCode]prometheus.Counter{})
		e.routes[id] = s
	}
	return e
}

func routeIDs() []string {
	ids := make([]string, len(routes.Table))
	for i, r := range routes.Table {
		ids[i] = r.ID
	}
	return ids
}

// Request counts one answered request: a map read and atomic adds.
func (e *exporter) Request(route, method string, code int, seconds float64) {
	s, ok := e.routes[route]
	if !ok {
		s = e.routes[app.UnmatchedRoute]
	}
	s.observer().Observe(seconds)
	s.counter(method, code).Inc()
}

// ServeHTTP answers GET /metrics: every series as Prometheus text.
func (e *exporter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	families, err := e.gatherer.Gather()
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	format := expfmt.NewFormat(expfmt.TypeTextPlain)
	w.Header().Set("Content-Type", string(format))
	enc := expfmt.NewEncoder(w, format)
	for _, f := range families {
		if err := enc.Encode(f); err != nil {
			return // the answer is partly out: nothing better to do
		}
	}
}

// routeSeries are the request series of one route, each resolved at its
// first request (a scrape shows the routes that were used).
type routeSeries struct {
	id        string
	durations *prometheus.HistogramVec
	duration  atomic.Pointer[prometheus.Observer]
	requests  *prometheus.CounterVec
	// counters holds the request counters by method and status, copied on
	// write: readers never lock.
	counters atomic.Pointer[map[methodCode]prometheus.Counter]
	mu       sync.Mutex
}

type methodCode struct {
	method string
	code   int
}

func (s *routeSeries) observer() prometheus.Observer {
	if o := s.duration.Load(); o != nil {
		return *o
	}
	o := s.durations.WithLabelValues(s.id)
	s.duration.Store(&o)
	return o
}

func (s *routeSeries) counter(method string, code int) prometheus.Counter {
	key := methodCode{method, code}
	if c, ok := (*s.counters.Load())[key]; ok {
		return c
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := *s.counters.Load()
	if c, ok := old[key]; ok {
		return c
	}
	next := make(map[methodCode]prometheus.Counter, len(old)+1)
	for k, v := range old {
		next[k] = v
	}
	c := s.requests.WithLabelValues(s.id, method, strconv.Itoa(code))
	next[key] = c
	s.counters.Store(&next)
	return c
}

// registryCollector exports the neutral registry's series to Prometheus,
// reading their values at each scrape. It describes nothing ahead (an
// unchecked collector): the families grow as states and kinds appear.
type registryCollector struct{ reg *metrics.Registry }

func (registryCollector) Describe(chan<- *prometheus.Desc) {}

func (c registryCollector) Collect(ch chan<- prometheus.Metric) {
	descs := map[string]*prometheus.Desc{}
	c.reg.Each(func(f metrics.Family, s metrics.Series, value float64) {
		d, ok := descs[f.Name]
		if !ok {
			d = prometheus.NewDesc(f.Name, f.Help, f.Labels, nil)
			descs[f.Name] = d
		}
		kind := prometheus.CounterValue
		if f.Kind == metrics.KindGauge {
			kind = prometheus.GaugeValue
		}
		ch <- prometheus.MustNewConstMetric(d, kind, value, s.Values...)
	})
}
