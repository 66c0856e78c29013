// Package lambdaadapter runs an http.Handler as an AWS Lambda function behind
// API Gateway, accepting both payload formats: REST API (v1) and HTTP API (v2).
// It builds on aws-lambda-go-api-proxy and corrects what the API needs beyond it:
// HTTP API stage prefixes are stripped, headers such as If-Match keep their commas, and
// every response carries a status code.
package lambdaadapter

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
)

// Adapter converts API Gateway events into requests for an http.Handler.
type Adapter struct {
	handler http.Handler
	v1      core.RequestAccessor
	v2      core.RequestAccessorV2
}

// New returns an adapter around h.
func New(h http.Handler) *Adapter { return &Adapter{handler: h} }

// Invoke handles one event of either payload version and returns the matching response type.
func (a *Adapter) Invoke(ctx context.Context, payload json.RawMessage) (any, error) {
	var probe struct {
		Version string `json:"version"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return nil, fmt.Errorf("decode API Gateway event: %w", err)
	}
	if probe.Version == "2.0" {
		var ev events.APIGatewayV2HTTPRequest
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("decode API Gateway v2 event: %w", err)
		}
		return a.ServeV2(ctx, ev), nil
	}
	var ev events.APIGatewayProxyRequest
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, fmt.Errorf("decode API Gateway v1 event: %w", err)
	}
	return a.ServeV1(ctx, ev), nil
}

// ServeV2 handles an HTTP API (payload 2.0) event.
func (a *Adapter) ServeV2(ctx context.Context, ev events.APIGatewayV2HTTPRequest) events.APIGatewayV2HTTPResponse {
	if ev.RawPath == "" {
		ev.RawPath = ev.RequestContext.HTTP.Path
	}
	ev.RawPath = stripStage(ev.RawPath, ev.RequestContext.Stage)
	req, err := a.v2.EventToRequestWithContext(ctx, ev)
	if err != nil {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusBadRequest, Headers: jsonHeader, Body: badEventBody}
	}
	keepHeadersWhole(req, ev.Headers)
	w := core.NewProxyResponseWriterV2()
	a.serve(w, req)
	resp, err := w.GetProxyResponse()
	if err != nil {
		return events.APIGatewayV2HTTPResponse{StatusCode: http.StatusInternalServerError, Headers: jsonHeader, Body: internalBody}
	}
	return resp
}

// ServeV1 handles a REST API (payload 1.0) event.
func (a *Adapter) ServeV1(ctx context.Context, ev events.APIGatewayProxyRequest) events.APIGatewayProxyResponse {
	req, err := a.v1.EventToRequestWithContext(ctx, ev)
	if err != nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusBadRequest, Headers: jsonHeader, Body: badEventBody}
	}
	w := core.NewProxyResponseWriter()
	a.serve(w, req)
	resp, err := w.GetProxyResponse()
	if err != nil {
		return events.APIGatewayProxyResponse{StatusCode: http.StatusInternalServerError, Headers: jsonHeader, Body: internalBody}
	}
	return resp
}

var (
	jsonHeader   = map[string]string{"Content-Type": "application/json"}
	badEventBody = `{"error":{"code":400,"message":"malformed API Gateway event"}}`
	internalBody = `{"error":{"code":500,"message":"internal error"}}`
)

// serve runs the handler and makes sure a status code is set even when it wrote nothing.
func (a *Adapter) serve(w http.ResponseWriter, req *http.Request) {
	sw := &statusWriter{ResponseWriter: w}
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

// keepHeadersWhole undoes the proxy library's comma splitting of v2 headers:
// If-Match, If-None-Match and Authorization must reach the handler as sent.
func keepHeadersWhole(req *http.Request, headers map[string]string) {
	for k, v := range headers {
		req.Header.Set(k, v)
	}
}
