// Package routestest checks HTTP traffic against the served OpenAPI document
// (routes.Document) with kin-openapi's validator, so the document cannot drift
// from the code: every request a test sends through Validating is matched to
// its route by the route table, and its answer must be one the document
// declares for that operation (status, content type and body schema). A
// request the document calls invalid must be refused with a 4xx.
package routestest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// Bodies that are not JSON (the graph.gv drawing, an environment export,
// plain or gzip, the console's files) are text to the checks: kin-openapi
// decodes only the media types it is told of.
func init() {
	for _, mediaType := range []string{"text/vnd.graphviz", "application/x-ndjson", "application/gzip", "text/html", "text/javascript", "text/css"} {
		openapi3filter.RegisterBodyDecoder(mediaType, openapi3filter.PlainBodyDecoder)
	}
}

// Spec loads routes.Document with kin-openapi (once per test binary).
var Spec = sync.OnceValues(func() (*openapi3.T, error) {
	doc, err := openapi3.NewLoader().LoadFromData(routes.Document())
	if err != nil {
		return nil, err
	}
	return doc, doc.Validate(context.Background())
})

type reporterKey struct{}

// ReportTo makes a disagreement of the request's exchange fail t instead of
// the t given to Validating: a fuzz target's requests report to the input's t.
func ReportTo(ctx context.Context, t testing.TB) context.Context {
	return context.WithValue(ctx, reporterKey{}, t)
}

// Validating wraps h: each exchange is checked against the document and a
// disagreement fails t (or the request's ReportTo). h's answers pass through
// unchanged. When t ends it logs how many requests were checked ("OpenAPI-checked").
func Validating(t testing.TB, h http.Handler) http.Handler {
	doc, err := Spec()
	if err != nil {
		t.Fatalf("the OpenAPI document does not validate: %v", err)
	}
	var checked, unrouted atomic.Int64
	t.Cleanup(func() {
		t.Logf("OpenAPI-checked: %d requests, %d of them routed by the table", checked.Load(), checked.Load()-unrouted.Load())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		h.ServeHTTP(rec, r)
		checked.Add(1)
		routed, err := check(doc, r, body, rec)
		if !routed {
			unrouted.Add(1)
		}
		if err != nil {
			report := t
			if rt, ok := r.Context().Value(reporterKey{}).(testing.TB); ok {
				report = rt
			}
			report.Errorf("OpenAPI: %s %s -> %d: %v", r.Method, r.URL.RequestURI(), rec.status, err)
		}
	})
}

// check reports whether r took a route of the table, and how the exchange disagrees with the document.
func check(doc *openapi3.T, r *http.Request, body []byte, rec *recorder) (routed bool, err error) {
	reply := rec.body.Bytes()
	if rec.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(bytes.NewReader(reply))
		if err != nil {
			return false, fmt.Errorf("gzip answer: %w", err)
		}
		if reply, err = io.ReadAll(zr); err != nil {
			return false, fmt.Errorf("gzip answer: %w", err)
		}
	}
	m, ok := routes.Find(r)
	if !ok {
		switch {
		case rec.status == http.StatusNotFound || rec.status == http.StatusMethodNotAllowed,
			// the policy refuses an unrouted request to a principal without the rights a route there would need
			rec.status == http.StatusUnauthorized || rec.status == http.StatusForbidden:
			return false, errorBody(doc, reply, r.Method)
		case rec.status >= 300 && rec.status < 400 || rec.status == http.StatusBadRequest:
			return false, nil // the mux's redirect to a clean path; an unsafe path refused by the middleware
		}
		return false, fmt.Errorf("no route in the table, yet the answer is not 401, 403, 404 or 405")
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	path := routes.OpenAPIPath(m.Path)
	item := doc.Paths.Find(path)
	if item == nil || item.GetOperation(method) == nil {
		return true, fmt.Errorf("route %s (%s %s) is not in the document", m.ID, m.Method, path)
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	if len(body) > 0 && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", "application/json") // the server reads a body without Content-Type as JSON
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true, IncludeResponseStatus: true}
	in := &openapi3filter.RequestValidationInput{
		Request:    req,
		PathParams: m.Values,
		Route:      &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: item.GetOperation(method)},
		Options:    opts,
	}
	reqErr := openapi3filter.ValidateRequest(context.Background(), in)
	if reqErr != nil && (rec.status < 400 || rec.status >= 500) {
		return true, fmt.Errorf("the document refuses the request (%v), the server answered %d", reqErr, rec.status)
	}
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: rec.status, Header: rec.Header(), Options: opts}
	out.SetBodyBytes(reply)
	if err := openapi3filter.ValidateResponse(context.Background(), out); err != nil {
		return true, fmt.Errorf("answer of %s: %w", m.ID, err)
	}
	return true, nil
}

// errorBody checks an answer against the Error schema.
func errorBody(doc *openapi3.T, reply []byte, method string) error {
	if method == http.MethodHead {
		return nil
	}
	var v any
	if err := json.Unmarshal(reply, &v); err != nil {
		return fmt.Errorf("error answer is not JSON: %w", err)
	}
	return doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020())
}

// recorder passes an answer through and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Target turns a pattern path into a request path: every wildcard gets a
// value (a document's {kind} one of its kinds), and a route's When flag
// (routes.Route.Patterns: "?effective") stays.
func Target(path string) string {
	path, query, hasQuery := strings.Cut(path, "?")
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case s == "{$}":
			segs[i] = ""
		case s == "{kind}":
			segs[i] = "values"
		case strings.HasSuffix(s, "...}"):
			segs[i] = "a/b"
		case strings.HasPrefix(s, "{"):
			segs[i] = "1"
		}
	}
	if hasQuery {
		return strings.Join(segs, "/") + "?" + query
	}
	return strings.Join(segs, "/")
}
