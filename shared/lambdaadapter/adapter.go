// Package lambdaadapter runs an http.Handler as an AWS Lambda function behind
// API Gateway, accepting both payload formats: REST API (v1) and HTTP API (v2).
// It builds on aws-lambda-go-api-proxy and corrects what the API needs beyond it:
// HTTP API stage prefixes are stripped, headers such as If-Match keep their commas,
// every response carries a status code, API Gateway's request id names the
// request (httpapi.WithUpstreamRequestID: the handler answers it in
// X-Openstack-Request-Id), and the context of API Gateway's request
// authorizer reaches the handler through httpapi.AuthorizerContext. The
// authorizer function itself is the subpackage authorizer.
package lambdaadapter

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// Adapter converts API Gateway events into requests for an http.Handler.
type Adapter struct {
	handler http.Handler
	logger  *slog.Logger
	v1      core.RequestAccessor
	v2      core.RequestAccessorV2
}

// New returns an adapter around h; logger receives its panics and the answers
// it had to replace (the function's JSON logger, as the handler's).
func New(h http.Handler, logger *slog.Logger) *Adapter {
	return &Adapter{handler: h, logger: logger}
}

// MaxResponseBytes is Lambda's limit on a synchronous invocation's response
// payload (6 MB): a larger one fails the invocation, which API Gateway answers
// with a bare 500 or 502.
const MaxResponseBytes = 6 * 1024 * 1024

// Invoke handles one event of either payload version and returns the matching
// response, encoded. It never fails the invocation: an event it cannot read is
// a JSON 400, a panic a logged JSON 500, and an answer over MaxResponseBytes is
// sent gzip-compressed when the client accepts gzip and that fits, else
// replaced by a JSON 406 (ask with Accept-Encoding: gzip) or 413 (too large
// even compressed).
func (a *Adapter) Invoke(ctx context.Context, payload json.RawMessage) (out any, err error) {
	defer func() {
		if p := recover(); p != nil {
			a.logger.ErrorContext(ctx, "panic handling an API Gateway event", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			out = events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError, Headers: jsonHeader, Body: internalBody}
		}
	}()
	var probe struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		// Both payload versions read statusCode, headers and body alike.
		return events.APIGatewayProxyResponse{StatusCode: http.StatusBadRequest, Headers: jsonHeader, Body: badEventBody}, nil
	}
	if probe.Version == "2.0" {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusBadRequest, Headers: jsonHeader, Body: badEventBody}, nil
		}
		resp := a.ServeV2(ctx, ev)
		return a.fit(&response{&resp.StatusCode, &resp.Headers, resp.MultiValueHeaders, &resp.Body, &resp.IsBase64Encoded}, ev.Headers, &resp)
	}
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusBadRequest, Headers: jsonHeader, Body: badEventBody}, nil
	}
	resp := a.ServeV1(ctx, ev)
	return a.fit(&response{&resp.StatusCode, &resp.Headers, resp.MultiValueHeaders, &resp.Body, &resp.IsBase64Encoded}, ev.Headers, &resp)
}

// response points into a v1 or v2 response, whose fields fit may rewrite.
type response struct {
	status  *int
	headers *map[string]string
	multi   map[string][]string
	body    *string
	base64  *bool
}

// fit encodes resp (which r points into) and keeps it within MaxResponseBytes.
func (a *Adapter) fit(r *response, reqHeaders map[string]string, resp any) (json.RawMessage, error) {
	raw, err := json.Marshal(resp)
	if err != nil || len(raw) <= MaxResponseBytes {
		return raw, err
	}
	body := []byte(*r.body)
	if *r.base64 {
		if body, err = base64.StdEncoding.DecodeString(*r.body); err != nil {
			return nil, err
		}
	}
	size := len(body)
	compressed := r.header("Content-Encoding") != ""
	var gz []byte
	if !compressed {
		gz = httpapi.Gzip(body)
	}
	accepts := httpapi.AcceptsGzip(http.Header{"Accept-Encoding": {headerValue(reqHeaders, "Accept-Encoding")}})
	if !compressed && accepts {
		r.setHeader("Content-Encoding", "gzip")
		r.setHeader("Vary", "Accept-Encoding")
		r.setHeader("Content-Length", strconv.Itoa(len(gz)))
		*r.body, *r.base64 = base64.StdEncoding.EncodeToString(gz), true
		if raw, err = json.Marshal(resp); err != nil || len(raw) <= MaxResponseBytes {
			return raw, err
		}
	}
	status, msg := http.StatusRequestEntityTooLarge, fmt.Sprintf("the answer is %d bytes, over the %d-byte limit of a Lambda response even compressed; read less at once (one key with ?key=)", size, MaxResponseBytes)
	if !compressed && !accepts && len(gz)*4/3+1024 <= MaxResponseBytes {
		status, msg = http.StatusNotAcceptable, fmt.Sprintf("the answer is %d bytes, over the %d-byte limit of a Lambda response; ask again with Accept-Encoding: gzip (%d bytes compressed)", size, MaxResponseBytes, len(gz))
	}
	a.logger.Warn("answer over the Lambda response limit", "status", *r.status, "bytes", size, "answered", status)
	*r.status = status
	*r.headers = errorHeaders(r.header(httpapi.RequestIDHeader))
	clear(r.multi)
	*r.base64 = false
	errBody, _ := json.Marshal(httpapi.ErrorBody{Error: httpapi.ErrorDetail{Code: status, Message: msg}})
	*r.body = string(errBody)
	return json.Marshal(resp)
}

func (r *response) header(name string) string {
	if v := headerValue(*r.headers, name); v != "" {
		return v
	}
	for k, vs := range r.multi {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0]
		}
	}
	return ""
}

func (r *response) setHeader(name, value string) {
	for k := range *r.headers {
		if strings.EqualFold(k, name) {
			delete(*r.headers, k)
		}
	}
	for k := range r.multi {
		if strings.EqualFold(k, name) {
			delete(r.multi, k)
		}
	}
	if *r.headers == nil {
		*r.headers = map[string]string{}
	}
	(*r.headers)[name] = value
}

// headerValue finds a header of an event or response map, whatever its case.
func headerValue(headers map[string]string, name string) string {
	for k, v := range headers {
		if strings.EqualFold(k, name) {
			return v
		}
	}
	return ""
}

// ServeV2 handles an HTTP API (payload 2.0) event.
func (a *Adapter) ServeV2(ctx context.Context, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	if ev.RawPath == "" {
		ev.RawPath = ev.RequestContext.HTTP.Path
	}
	ev.RawPath = stripStage(ev.RawPath, ev.RequestContext.Stage)
	id := ev.RequestContext.RequestID
	req, err := a.v2.EventToRequestWithContext(httpapi.WithUpstreamRequestID(ctx, id), ev)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusBadRequest, Headers: errorHeaders(id), Body: badEventBody}
	}
	keepHeadersWhole(req, ev.Headers)
	if ev.RequestContext.Authorizer != nil {
		req = withAuthorizer(req, ev.RequestContext.Authorizer.Lambda)
	}
	w := core.NewProxyResponseWriterV2()
	a.serve(w, req)
	resp, err := w.GetProxyResponse()
	if err != nil {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusInternalServerError, Headers: errorHeaders(id), Body: internalBody}
	}
	return resp
}

// ServeV1 handles a REST API (payload 1.0) event.
func (a *Adapter) ServeV1(ctx context.Context, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	id := ev.RequestContext.RequestID
	req, err := a.v1.EventToRequestWithContext(httpapi.WithUpstreamRequestID(ctx, id), ev)
	if err != nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusBadRequest, Headers: errorHeaders(id), Body: badEventBody}
	}
	req = withAuthorizer(req, ev.RequestContext.Authorizer)
	w := core.NewProxyResponseWriter()
	a.serve(w, req)
	resp, err := w.GetProxyResponse()
	if err != nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError, Headers: errorHeaders(id), Body: internalBody}
	}
	return resp
}

// errorHeaders are the headers of an error the adapter answers itself for
// the request API Gateway named id: as every answer of the handler, it names
// the request (httpapi.RequestIDHeader).
func errorHeaders(id string) map[string]string {
	h := map[string]string{"Content-Type": "application/json"}
	if id != "" {
		h[httpapi.RequestIDHeader] = id
	}
	return h
}

var (
	jsonHeader   = map[string]string{"Content-Type": "application/json"}
	badEventBody = `{"error":{"code":400,"message":"malformed API Gateway event"}}`
	internalBody = `{"error":{"code":500,"message":"internal error"}}`
)

// serve runs the handler and makes sure a status code is set even when it
// wrote nothing, and a JSON 500 when it panicked before writing.
func (a *Adapter) serve(w http.ResponseWriter, req *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
	defer func() {
		if p := recover(); p != nil {
			a.logger.ErrorContext(req.Context(), "panic serving a request", "method", req.Method, "path", req.URL.Path, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			if !sw.wrote {
				httpapi.RawJSON(sw, http.StatusInternalServerError, []byte(internalBody))
			}
		}
	}()
	a.handler.ServeHTTP(sw, req)
	if !sw.wrote {
		sw.WriteHeader(http.StatusOK)
	}
}

type statusWriter struct {
	http.ResponseWriter
	wrote bool
}

func (s *statusWriter) WriteHeader(code int) {
	s.wrote = true
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wrote = true
	return s.ResponseWriter.Write(b)
}

// stripStage removes the "/{stage}" prefix that an HTTP API leaves in rawPath for
// a named (non-$default) stage, so routes match the same paths as the local server.
// REST API (v1) events carry the path without the stage and need no stripping.
func stripStage(path, stage string) string {
	if stage == "" || stage == "$default" {
		return path
	}
	prefix := "/" + stage
	if path == prefix {
		return "/"
	}
	if rest, ok := strings.CutPrefix(path, prefix+"/"); ok {
		return "/" + rest
	}
	return path
}

// withAuthorizer hands the handler the context the request authorizer
// answered (HTTP API: requestContext.authorizer.lambda, REST API:
// requestContext.authorizer), which API Gateway put into the event.
func withAuthorizer(req *http.Request, c map[string]any) *http.Request {
	if len(c) == 0 {
		return req
	}
	return req.WithContext(httpapi.WithAuthorizerContext(req.Context(), c))
}

// keepHeadersWhole undoes the proxy library's comma splitting of v2 headers:
// If-Match, If-None-Match and Authorization must reach the handler as sent.
func keepHeadersWhole(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		req.Header.Set(k, v)
	}
}
