package app

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/common/expfmt"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Metrics are one handler's metrics: the requests it answered (Prometheus
// counters and histograms, resolved per route once) and the neutral registry
// the services, caches and store count in. GET /metrics serves them as
// Prometheus text; on Lambda, FlushEMF writes what one invocation changed as
// CloudWatch Embedded Metric Format lines.
type Metrics struct {
	registry *metrics.Registry
	gatherer *prometheus.Registry
	// routes holds each route's series by route id ("" for a request no route took).
	routes map[string]*routeSeries
	// invocation, when set (Lambda), keeps the last request for FlushEMF.
	invocation *emfState
}

// The request families.
const (
	requestsTotal   = "tuningbox_requests_total"
	requestDuration = "tuningbox_request_duration_seconds"
	unmatchedRoute  = "unmatched"
)

// routeSeries are the request series of one route, each resolved at its
// first request (a scrape shows the routes that were used): counting a
// request is then a map read and atomic adds.
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

// newMetrics returns the metrics of a handler, with series for every route of the table.
func newMetrics() *Metrics {
	m := &Metrics{registry: metrics.NewRegistry(), gatherer: prometheus.NewRegistry(), routes: map[string]*routeSeries{}}
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{Name: requestsTotal, Help: "Requests answered, by route id, method and status code."},
		[]string{"route", "method", "code"})
	durations := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: requestDuration, Help: "Time to answer a request, by route id.",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 25}}, []string{"route"})
	m.gatherer.MustRegister(requests, durations, registryCollector{m.registry},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, id := range append(routeIDs(), unmatchedRoute) {
		s := &routeSeries{id: id, durations: durations, requests: requests}
		s.counters.Store(&map[methodCode]prometheus.Counter{})
		m.routes[id] = s
	}
	return m
}

func routeIDs() []string {
	ids := make([]string, len(routes.Table))
	for i, r := range routes.Table {
		ids[i] = r.ID
	}
	return ids
}

// methods are the method label's values; any other method counts as "other".
var methods = map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH", "DELETE": "DELETE", "OPTIONS": "OPTIONS"}

// observe counts one answered request (httpapi.Options.Observe).
func (m *Metrics) observe(r *http.Request, status int, elapsed time.Duration) {
	id := unmatchedRoute
	if match, ok := routes.RecordedMatch(r); ok {
		id = match.ID
	}
	method, ok := methods[r.Method]
	if !ok {
		method = "other"
	}
	s := m.routes[id]
	seconds := elapsed.Seconds()
	s.observer().Observe(seconds)
	s.counter(method, status).Inc()
	if m.invocation != nil {
		m.invocation.request(id, method, status, seconds)
	}
}

// serve answers GET /metrics: every series as Prometheus text.
func (m *Metrics) serve(w http.ResponseWriter, r *http.Request) {
	families, err := m.gatherer.Gather()
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

// The store's families.
const (
	storeCalls         = "tuningbox_store_calls_total"
	conditionFailures  = "tuningbox_store_conditional_check_failures_total"
	storeCallsHelp     = "Calls to the store (index: DynamoDB or bbolt; blob: S3 or bbolt), by kind; cached blob reads are not calls."
	conditionFailsHelp = "Index writes refused because a condition did not hold (another writer went first)."
)

// countedIndex counts the calls to an index by kind, and its refused writes.
type countedIndex struct {
	next                         store.Index
	get, batchGet, query, writes *metrics.Counter
	conflicts                    *metrics.Counter
}

func newCountedIndex(next store.Index, reg *metrics.Registry) store.Index {
	kind := func(k string) *metrics.Counter { return reg.Counter(storeCalls, storeCallsHelp, []string{"kind"}, k) }
	c := &countedIndex{next: next, get: kind("index_get"), batchGet: kind("index_batch_get"), query: kind("index_query"), writes: kind("index_write"),
		conflicts: reg.Counter(conditionFailures, conditionFailsHelp, nil)}
	if g, ok := next.(store.Generational); ok {
		return countedGenerational{c, g}
	}
	return c
}

func (c *countedIndex) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.get.Inc()
	return c.next.Get(ctx, k)
}

func (c *countedIndex) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	c.batchGet.Inc()
	return c.next.BatchGet(ctx, keys)
}

func (c *countedIndex) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	c.query.Inc()
	return c.next.Query(ctx, q)
}

func (c *countedIndex) Write(ctx context.Context, ops ...store.Op) error {
	c.writes.Inc()
	err := c.next.Write(ctx, ops...)
	if errors.Is(err, store.ErrConflict) {
		c.conflicts.Inc()
	}
	return err
}

// countedGenerational is a countedIndex of an index that is its items' only
// writer: every write still goes through it, so its generation still holds.
type countedGenerational struct {
	*countedIndex
	gen store.Generational
}

func (c countedGenerational) Generation() uint64 { return c.gen.Generation() }

// countedBlobs counts the calls to a blob store by kind.
type countedBlobs struct {
	next                   store.Blobs
	put, get, list, delete *metrics.Counter
}

func newCountedBlobs(next store.Blobs, reg *metrics.Registry) store.Blobs {
	kind := func(k string) *metrics.Counter { return reg.Counter(storeCalls, storeCallsHelp, []string{"kind"}, k) }
	return &countedBlobs{next: next, put: kind("blob_put"), get: kind("blob_get"), list: kind("blob_list"), delete: kind("blob_delete")}
}

func (c *countedBlobs) Put(ctx context.Context, data []byte) (string, error) {
	c.put.Inc()
	return c.next.Put(ctx, data)
}

func (c *countedBlobs) Get(ctx context.Context, hash string) ([]byte, error) {
	c.get.Inc()
	return c.next.Get(ctx, hash)
}

func (c *countedBlobs) List(ctx context.Context, fn func(hash string, created time.Time) error) error {
	c.list.Inc()
	return c.next.List(ctx, fn)
}

func (c *countedBlobs) Delete(ctx context.Context, hash string) error {
	c.delete.Inc()
	return c.next.Delete(ctx, hash)
}
