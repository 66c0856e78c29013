package routes

import (
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// The values a Flag takes, in any case: tuning-box's presence flags
// ("?effective", "?dry_run=false", "no") and strconv.ParseBool's words, the
// values the API accepted before it had one parser. flagPattern is the same
// set as the document's JSON Schema pattern.
var (
	flagTrue    = []string{"", "1", "t", "true", "yes"}
	flagFalse   = []string{"0", "f", "false", "no"}
	flagPattern = `^(|1|0|[tT]|[fF]|[tT][rR][uU][eE]|[fF][aA][lL][sS][eE]|[yY][eE][sS]|[nN][oO])$`
)

// expected says what a value of type t must be, for error messages.
func (t ParamType) expected() string {
	switch t {
	case Flag:
		return "a boolean (true, false, 1, 0, yes, no; no value is true)"
	case Integer:
		return "a positive integer"
	case Seconds:
		return "a number of seconds"
	case DateTime:
		return "an RFC 3339 time such as 2026-01-02T15:04:05Z"
	}
	return "a string"
}

// queryValue is one parameter's value, read by its declared type.
type queryValue struct {
	name, raw string
	// valid is whether raw reads as its parameter's type.
	valid   bool
	flag    bool
	integer int
	seconds float64
	instant time.Time
}

// maxParams bounds the parameters a route declares (buildTable checks it),
// so that a Query holds its values in place: reading it allocates nothing on
// Hiera's read.
const maxParams = 8

// Query is a request's query parameters, each read by the type its route
// declares (QueryOf).
type Query struct {
	values [maxParams]queryValue
	n      int
}

// CheckQuery reads req's query by r's declarations, as the router does before
// r's handler runs. A parameter r does not declare, one given more than once
// (unless FirstOfRepeated), one newer than the request's microversion
// (Param.Since: refused rather than ignored, so a write meant as a dry run is
// never stored), or a value that is not of its parameter's type is invalid
// input (400), named in the message.
func (r Route) CheckQuery(req *http.Request) error {
	_, err := r.parseQuery(req, true)
	return err
}

// QueryOf returns the query of the route r takes (MatchOf), read by its types.
// The router refuses a request whose query does not parse before its handler
// runs (Route.CheckQuery), so handlers read it without an error. What reads
// it before that (the policy) sees a value that does not parse as given (Has)
// with its type's zero value.
func QueryOf(r *http.Request) Query {
	m, _ := MatchOf(r)
	q, _ := m.parseQuery(r, false)
	return q
}

// parseQuery reads the pairs of req's raw query in order, as url.ParseQuery
// splits and unescapes them (a pair with a semicolon, or that does not
// unescape, is skipped), without building its map: the router and the
// handler each read the query of Hiera's every read.
func (r Route) parseQuery(req *http.Request, strict bool) (Query, error) {
	var q Query
	var seen [maxParams]bool // the declared parameters given so far, by index in r.Query
	for pair := range strings.SplitSeq(req.URL.RawQuery, "&") {
		name, value, ok := readPair(pair)
		if !ok {
			continue
		}
		i := slices.IndexFunc(r.Query, func(p Param) bool { return p.Name == name })
		if i < 0 {
			if !strict {
				continue
			}
			if len(r.Query) == 0 {
				return Query{}, errs.Invalidf("unknown query parameter %q: %s %s takes none", name, r.Method, r.Path)
			}
			return Query{}, errs.Invalidf("unknown query parameter %q (%s %s takes %s)", name, r.Method, r.Path, strings.Join(r.queryNames(), ", "))
		}
		if seen[i] {
			if strict && !r.FirstOfRepeated {
				return Query{}, errs.Invalidf("query parameter %q is given more than once", name)
			}
			continue // read by its first value
		}
		seen[i] = true
		p := r.Query[i]
		if strict && p.Since != (httpapi.Version{}) && !httpapi.RequestVersion(req).AtLeast(p.Since) {
			return Query{}, errs.Invalidf("the %s parameter needs API microversion %s (OpenStack-API-Version: %s %s)", name, p.Since, httpapi.ServiceType, p.Since)
		}
		v := p.read(value)
		switch {
		case !v.valid && strict:
			return Query{}, errs.Invalidf("query parameter %s=%q: expected %s (%s)", name, value, p.Type.expected(), p.Description)
		case !strict:
			q.values[q.n] = v
			q.n++
		}
	}
	return q, nil
}

// readPair splits and unescapes one "&"-separated pair of a raw query as
// url.ParseQuery does; ok is false for a pair it skips: an empty one, one
// with a semicolon, or one that does not unescape.
func readPair(pair string) (name, value string, ok bool) {
	if pair == "" || strings.Contains(pair, ";") {
		return "", "", false
	}
	rawName, rawValue, _ := strings.Cut(pair, "=")
	name, err := url.QueryUnescape(rawName)
	if err != nil {
		return "", "", false
	}
	value, err = url.QueryUnescape(rawValue)
	return name, value, err == nil
}

// WithQueryValue returns rawQuery with the pairs of the parameter name (as
// the parser reads names) replaced by one name=value where the first stood;
// every other pair stays as sent.
func WithQueryValue(rawQuery, name, value string) string {
	pairs := strings.Split(rawQuery, "&")
	kept := pairs[:0]
	set := false
	for _, pair := range pairs {
		if n, _, ok := readPair(pair); ok && n == name {
			if set {
				continue
			}
			set = true
			pair = url.QueryEscape(name) + "=" + url.QueryEscape(value)
		}
		kept = append(kept, pair)
	}
	return strings.Join(kept, "&")
}

// read parses raw as a value of p's type; one that does not parse is not
// valid and holds the type's zero value.
func (p Param) read(raw string) queryValue {
	v := queryValue{name: p.Name, raw: raw}
	var err error
	switch p.Type {
	case Flag:
		v.flag = slices.ContainsFunc(flagTrue, func(s string) bool { return strings.EqualFold(s, raw) })
		v.valid = v.flag || slices.ContainsFunc(flagFalse, func(s string) bool { return strings.EqualFold(s, raw) })
	case Integer:
		v.integer, err = strconv.Atoi(raw)
		v.valid = err == nil && v.integer > 0
		if !v.valid {
			v.integer = 0
		}
	case Seconds:
		v.seconds, err = strconv.ParseFloat(raw, 64)
		v.valid = err == nil && !math.IsNaN(v.seconds) && !math.IsInf(v.seconds, 0)
		if !v.valid {
			v.seconds = 0
		}
	case DateTime:
		v.instant, err = time.Parse(time.RFC3339Nano, raw)
		v.valid = err == nil
	default:
		v.valid = true
	}
	return v
}

func (q Query) find(name string) (queryValue, bool) {
	i := slices.IndexFunc(q.values[:q.n], func(v queryValue) bool { return v.name == name })
	if i < 0 {
		return queryValue{}, false
	}
	return q.values[i], true
}

// Has reports whether a parameter is given (with any value).
func (q Query) Has(name string) bool {
	_, ok := q.find(name)
	return ok
}

// Len is how many of the route's parameters are given.
func (q Query) Len() int { return q.n }

// String returns a parameter's value as given ("" when absent).
func (q Query) String(name string) string {
	v, _ := q.find(name)
	return v.raw
}

// Flag returns a Flag parameter: false when absent.
func (q Query) Flag(name string) bool {
	v, _ := q.find(name)
	return v.flag
}

// Integer returns an Integer parameter, and whether it is given with a valid value.
func (q Query) Integer(name string) (int, bool) {
	v, ok := q.find(name)
	return v.integer, ok && v.valid
}

// Seconds returns a Seconds parameter, and whether it is given with a valid value.
func (q Query) Seconds(name string) (float64, bool) {
	v, ok := q.find(name)
	return v.seconds, ok && v.valid
}

// Time returns a DateTime parameter (the zero time when absent).
func (q Query) Time(name string) time.Time {
	v, _ := q.find(name)
	return v.instant
}
