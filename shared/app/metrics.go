package app

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Metrics are one handler's metrics: the neutral registry the services,
// caches and store count in, and the requests the handler answered. On
// Lambda, FlushEMF writes what one invocation changed as CloudWatch Embedded
// Metric Format lines; a process with a Scraper (the local server's
// Prometheus) serves them at GET /metrics.
type Metrics struct {
	registry *metrics.Registry
	// scraper, when set, counts every request and answers GET /metrics.
	scraper Scraper
	// invocation, when set (Lambda), keeps the last request for FlushEMF.
	invocation *emfState
}

// A Scraper exports a handler's metrics to a collector that reads them at
// GET /metrics: the local server's Prometheus text (shared/app/promexport,
// built from the handler's registry by Options.Scraper). The Lambda functions
// have none and do not link Prometheus, whose package initialization and
// reflection cost start-up time and binary size: API Gateway routes no
// /metrics, and the functions' EMF lines are the metrics there.
type Scraper interface {
	// Request counts one answered request by route id ("unmatched": none),
	// method ("other": not a standard one) and status code.
	Request(route, method string, code int, seconds float64)
	// ServeHTTP answers GET /metrics.
	http.Handler
}

// The request families, whichever exporter writes them.
const (
	RequestsTotal       = "tuningbox_requests_total"
	RequestsHelp        = "Requests answered, by route id, method and status code."
	RequestDuration     = "tuningbox_request_duration_seconds"
	RequestDurationHelp = "Time to answer a request, by route id."
	// UnmatchedRoute is the route label of a request no route took.
	UnmatchedRoute = "unmatched"
)

// newMetrics returns the metrics of a handler, exported by the scraper that
// newScraper builds from them (nil: none).
func newMetrics(newScraper func(*metrics.Registry) Scraper) *Metrics {
	m := &Metrics{registry: metrics.NewRegistry()}
	if newScraper != nil {
		m.scraper = newScraper(m.registry)
	}
	return m
}

// methods are the method label's values; any other method counts as "other".
var methods = map[string]string{"GET": "GET", "HEAD": "HEAD", "POST": "POST", "PUT": "PUT", "PATCH": "PATCH", "DELETE": "DELETE", "OPTIONS": "OPTIONS"}

// observe counts one answered request (httpapi.Options.Observe).
func (m *Metrics) observe(r *http.Request, status int, elapsed time.Duration) {
	id := UnmatchedRoute
	if match, ok := routes.RecordedMatch(r); ok {
		id = match.ID
	}
	method, ok := methods[r.Method]
	if !ok {
		method = "other"
	}
	seconds := elapsed.Seconds()
	if m.scraper != nil {
		m.scraper.Request(id, method, status, seconds)
	}
	if m.invocation != nil {
		m.invocation.request(id, method, status, seconds)
	}
}

// serve answers GET /metrics through the scraper; a process without one
// (a Lambda function) has nothing to serve there.
func (m *Metrics) serve(w http.ResponseWriter, r *http.Request) {
	if m.scraper == nil {
		httpapi.Error(w, r, errs.NotFoundf("this process exports no metrics at %s (a Lambda function writes them as CloudWatch EMF lines)", routes.MetricsPath))
		return
	}
	m.scraper.ServeHTTP(w, r)
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
