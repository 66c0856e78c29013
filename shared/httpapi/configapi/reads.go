package configapi

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// v13Parameters are the query parameters microversion 1.3 adds to document routes.
var v13Parameters = []string{"merge", "explain", "as_of", "wait", "dry_run"}

// checkParameters refuses a 1.3 parameter asked at an older microversion: a
// client that has not asked for 1.3 must not get a write stored that it meant as
// a dry run, nor an answer of another shape.
func checkParameters(r *http.Request, q url.Values) error {
	if httpapi.RequestVersion(r).AtLeast(httpapi.V1_3) {
		return nil
	}
	for _, p := range v13Parameters {
		if q.Has(p) {
			return errs.Invalidf("the %s parameter needs API microversion 1.3 (OpenStack-API-Version: config 1.3)", p)
		}
	}
	return nil
}

// readOptions reads the 1.3 options of a document read into rq, and its wait
// (?wait=SECONDS: how long to hold the read while its ETag matches If-None-Match).
func readOptions(r *http.Request, q url.Values, rq *configdb.ReadQuery) (wait time.Duration, err error) {
	if err := checkParameters(r, q); err != nil {
		return 0, err
	}
	if rq.Merge, err = configdb.ParseMergeMode(q.Get("merge")); err != nil {
		return 0, err
	}
	rq.Explain = flag(q, "explain")
	if rq.AsOf, err = parseAsOf(q.Get("as_of")); err != nil {
		return 0, err
	}
	if q.Has("wait") {
		seconds, err := strconv.ParseFloat(q.Get("wait"), 64)
		if err != nil || seconds < 0 || math.IsNaN(seconds) || math.IsInf(seconds, 0) {
			return 0, errs.Invalidf("wait must be a number of seconds (at most %v are waited)", configdb.MaxWait.Seconds())
		}
		wait = time.Duration(min(seconds, configdb.MaxWait.Seconds()) * float64(time.Second))
	}
	return wait, nil
}

// parseAsOf reads an RFC 3339 instant ("" is none).
func parseAsOf(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, errs.Invalidf("as_of must be an RFC 3339 time such as 2026-01-02T15:04:05Z, not %q", s)
	}
	return t, nil
}
