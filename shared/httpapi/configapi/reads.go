package configapi

import (
	"net/http"
	"net/url"
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

// readOptions reads the 1.3 options of a document read into rq.
func readOptions(r *http.Request, q url.Values, rq *configdb.ReadQuery) error {
	if err := checkParameters(r, q); err != nil {
		return err
	}
	var err error
	if rq.Merge, err = configdb.ParseMergeMode(q.Get("merge")); err != nil {
		return err
	}
	rq.Explain = flag(q, "explain")
	rq.AsOf, err = parseAsOf(q.Get("as_of"))
	return err
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
