package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"mime"
	"net"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// maxRequestBytes is API Gateway's request payload limit (10 MB).
const maxRequestBytes = 10 << 20

// gateway serves an api: it matches the route, runs the route's authorizer
// (with its result cache) and the route's function, converting HTTP to the
// route's payload format and the function's answer back to HTTP.
type gateway struct {
	api       *api
	functions map[string]*function // by logical id
	logger    *log.Logger
	apiID     string

	mu        sync.Mutex
	exercised map[string]int  // route key -> requests that reached its function
	answered  map[string]bool // the functions' answers (answerLine)
	authCache map[string]authResult
	cacheHits int
}

// authResult is an authorizer's answer, cached per identity source value.
type authResult struct {
	allowed   bool
	context   map[string]any
	principal string
	expires   time.Time
}

// gatewayError answers like API Gateway itself: a JSON {"message"} body.
func gatewayError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("x-amzn-ErrorType", http.StatusText(status))
	w.WriteHeader(status)
	fmt.Fprintf(w, "{%q:%q}\n", "message", message)
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	requestID := fmt.Sprintf("%016x", time.Now().UnixNano())
	w.Header().Set("apigw-requestid", requestID)
	reqPath := r.URL.EscapedPath()
	if g.api.rest {
		rest, ok := strings.CutPrefix(reqPath, g.api.stage+"/")
		if !ok {
			gatewayError(w, http.StatusForbidden, "Missing Authentication Token")
			return
		}
		reqPath = "/" + rest
	}
	unescaped, err := url.PathUnescape(reqPath)
	if err != nil {
		gatewayError(w, http.StatusBadRequest, "Bad Request")
		return
	}
	rt, proxy := g.api.match(r.Method, unescaped)
	if rt == nil {
		if g.api.rest {
			gatewayError(w, http.StatusForbidden, "Missing Authentication Token")
		} else {
			gatewayError(w, http.StatusNotFound, "Not Found")
		}
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		gatewayError(w, http.StatusRequestEntityTooLarge, "Request Entity Too Large")
		return
	}
	req := &request{r: r, route: rt, path: unescaped, rawPath: reqPath, proxy: proxy, body: body, id: requestID, gw: g}
	var auth authResult
	if rt.authorizer != nil {
		var status int
		if auth, status = g.authorize(r.Context(), req); status != 0 {
			msg := map[int]string{401: "Unauthorized", 403: "Forbidden", 500: "Internal Server Error"}[status]
			if g.api.rest && status == 403 {
				msg = "User is not authorized to access this resource with an explicit deny"
			}
			gatewayError(w, status, msg)
			return
		}
	}
	event := req.event(auth)
	g.mu.Lock()
	g.exercised[rt.key]++
	g.mu.Unlock()
	out, err := g.functions[rt.function.logicalID].invoke(r.Context(), event)
	if err != nil {
		g.logger.Printf("gateway: %s %s -> %s: %v", r.Method, r.URL.Path, rt.function.name, err)
		if g.api.rest {
			gatewayError(w, http.StatusBadGateway, "Internal server error")
		} else {
			gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		}
		return
	}
	sw := &httpapi.StatusRecorder{ResponseWriter: w}
	err = req.respond(sw, out)
	if sw.Status != 0 {
		g.mu.Lock()
		target := reqPath
		if r.URL.RawQuery != "" {
			target += "?" + r.URL.RawQuery
		}
		g.answered[answerLine(sw.Status, r.Method, target)] = true
		g.mu.Unlock()
	}
	if err != nil {
		g.logger.Printf("gateway: %s %s -> %s: malformed Lambda proxy response: %v", r.Method, r.URL.Path, rt.function.name, err)
		if g.api.rest {
			gatewayError(w, http.StatusBadGateway, "Internal server error")
		} else {
			gatewayError(w, http.StatusInternalServerError, "Internal Server Error")
		}
	}
}

// request is one client request on its way through a route.
type request struct {
	gw      *gateway
	r       *http.Request
	route   *route
	path    string // unescaped, without the stage
	rawPath string
	proxy   string
	body    []byte
	id      string
}

// authorize returns the authorizer's answer for the request, from the cache
// when the same identity was answered within the TTL, or an HTTP status to
// refuse with: 401 without the identity source, 403 when denied, 500 when the
// authorizer failed.
func (g *gateway) authorize(ctx context.Context, req *request) (authResult, int) {
	au := req.route.authorizer
	var identity []string
	for _, src := range au.sources {
		v := req.r.Header.Get(src.header)
		if src.sourceIP {
			v = req.sourceIP()
		}
		if v == "" {
			return authResult{}, http.StatusUnauthorized
		}
		identity = append(identity, v)
	}
	key := au.id + "\x00" + strings.Join(identity, "\x00")
	g.mu.Lock()
	cached, ok := g.authCache[key]
	if ok && time.Now().Before(cached.expires) {
		g.cacheHits++
		g.mu.Unlock()
		return cached, deniedStatus(cached)
	}
	g.mu.Unlock()
	out, err := g.functions[au.function.logicalID].invoke(ctx, req.authorizerEvent(identity))
	var res authResult
	if err != nil {
		var ie *invocationError
		if g.api.rest && errors.As(err, &ie) && strings.Contains(ie.Message, `"errorMessage":"Unauthorized"`) {
			return authResult{}, http.StatusUnauthorized
		}
		g.logger.Printf("gateway: authorizer: %v", err)
		return authResult{}, http.StatusInternalServerError
	}
	if res, err = req.authorizerAnswer(out); err != nil {
		g.logger.Printf("gateway: authorizer answer: %v", err)
		return authResult{}, http.StatusInternalServerError
	}
	if au.ttl > 0 {
		res.expires = time.Now().Add(au.ttl)
		g.mu.Lock()
		g.authCache[key] = res
		g.mu.Unlock()
	}
	return res, deniedStatus(res)
}

func deniedStatus(a authResult) int {
	if a.allowed {
		return 0
	}
	return http.StatusForbidden
}

// authorizerAnswer reads a simple response (HTTP API) or an IAM policy (REST API).
func (req *request) authorizerAnswer(out []byte) (authResult, error) {
	if !req.gw.api.rest {
		var simple struct {
			IsAuthorized *bool          `json:"isAuthorized"`
			Context      map[string]any `json:"context"`
		}
		if err := json.Unmarshal(out, &simple); err != nil || simple.IsAuthorized == nil {
			return authResult{}, fmt.Errorf("not a simple response: %.200s", out)
		}
		return authResult{allowed: *simple.IsAuthorized, context: simple.Context}, nil
	}
	var policy struct {
		PrincipalID    string `json:"principalId"`
		PolicyDocument struct {
			Statement []struct {
				Action   any    `json:"Action"`
				Effect   string `json:"Effect"`
				Resource any    `json:"Resource"`
			} `json:"Statement"`
		} `json:"policyDocument"`
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(out, &policy); err != nil {
		return authResult{}, fmt.Errorf("not a policy: %.200s", out)
	}
	res := authResult{principal: policy.PrincipalID, context: policy.Context}
	arn := req.methodARN()
	for _, st := range policy.PolicyDocument.Statement {
		if !anyMatches(st.Resource, arn) {
			continue
		}
		if st.Effect == "Deny" {
			return authResult{}, nil
		}
		if st.Effect == "Allow" {
			res.allowed = true
		}
	}
	return res, nil
}

// anyMatches reports whether a policy Resource (a string or a list) matches
// arn, where "*" in a pattern matches any run of characters.
func anyMatches(resource any, arn string) bool {
	var patterns []string
	switch v := resource.(type) {
	case string:
		patterns = []string{v}
	case []any:
		for _, p := range v {
			patterns = append(patterns, fmt.Sprint(p))
		}
	}
	for _, p := range patterns {
		if ok, _ := path.Match(strings.ReplaceAll(p, "/", "\x00"), strings.ReplaceAll(arn, "/", "\x00")); ok {
			return true
		}
		if prefix, ok := strings.CutSuffix(p, "*"); ok && strings.HasPrefix(arn, prefix) {
			return true
		}
	}
	return false
}

func (req *request) methodARN() string {
	return fmt.Sprintf("arn:aws:execute-api:us-east-1:123456789012:%s%s/%s%s", req.gw.apiID, req.gw.api.stage, req.r.Method, req.path)
}

func (req *request) sourceIP() string {
	host, _, err := net.SplitHostPort(req.r.RemoteAddr)
	if err != nil {
		return req.r.RemoteAddr
	}
	return host
}

// headers returns the request's headers as API Gateway passes them: v2 with
// lower-case names and repeated values joined by commas; v1 the last value and
// every value.
func (req *request) headers() (single map[string]string, multi map[string][]string) {
	single, multi = map[string]string{}, map[string][]string{}
	for k, vs := range req.r.Header {
		if !req.route.payloadV2 || req.gw.api.rest {
			single[k] = vs[len(vs)-1]
			multi[k] = vs
			continue
		}
		lk := strings.ToLower(k)
		if lk == "cookie" {
			continue
		}
		single[lk] = strings.Join(vs, ",")
	}
	if req.r.Host != "" {
		single["host"] = req.r.Host
		if req.gw.api.rest {
			delete(single, "host")
			single["Host"] = req.r.Host
			multi["Host"] = []string{req.r.Host}
		}
	}
	return single, multi
}

func (req *request) query() (single map[string]string, multi map[string][]string) {
	q := req.r.URL.Query()
	if len(q) == 0 {
		return nil, nil
	}
	single, multi = map[string]string{}, map[string][]string{}
	for k, vs := range q {
		if req.route.payloadV2 {
			single[k] = strings.Join(vs, ",")
		} else {
			single[k] = vs[len(vs)-1]
		}
		multi[k] = vs
	}
	return single, multi
}

func (req *request) pathParameters() map[string]string {
	if req.route.greedy {
		return map[string]string{"proxy": req.proxy}
	}
	var params map[string]string
	got := strings.Split(strings.TrimSuffix(req.path, "/"), "/")
	for i, seg := range strings.Split(req.route.path, "/") {
		if name, ok := strings.CutPrefix(seg, "{"); ok && i < len(got) {
			if params == nil {
				params = map[string]string{}
			}
			params[strings.TrimSuffix(name, "}")] = got[i]
		}
	}
	return params
}

// encodedBody is the body as the event carries it: text as is, anything else
// (or, on a REST API, a binary media type) base64.
func (req *request) encodedBody() (string, bool) {
	if len(req.body) == 0 {
		return "", false
	}
	binary := !utf8.Valid(req.body)
	if req.gw.api.rest {
		binary = req.gw.api.isBinary(req.r.Header.Get("Content-Type"))
	}
	if binary {
		return base64.StdEncoding.EncodeToString(req.body), true
	}
	return string(req.body), false
}

func (a *api) isBinary(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	for _, b := range a.binaryMediaTypes {
		if b == "*/*" || b == mt || (strings.HasSuffix(b, "/*") && strings.HasPrefix(mt, strings.TrimSuffix(b, "*"))) {
			return true
		}
	}
	return false
}

func (req *request) requestTime() (string, int64) {
	now := time.Now().UTC()
	return now.Format("02/Jan/2006:15:04:05 -0700"), now.UnixMilli()
}

// event is the integration event of the route's payload format.
func (req *request) event(auth authResult) []byte {
	if req.route.payloadV2 {
		return req.eventV2(auth)
	}
	return req.eventV1(auth)
}

func (req *request) httpContext() map[string]any {
	return map[string]any{
		"method":    req.r.Method,
		"path":      req.path,
		"protocol":  req.r.Proto,
		"sourceIp":  req.sourceIP(),
		"userAgent": req.r.UserAgent(),
	}
}

func (req *request) requestContextV2() map[string]any {
	t, epoch := req.requestTime()
	return map[string]any{
		"accountId":    "123456789012",
		"apiId":        req.gw.apiID,
		"domainName":   req.r.Host,
		"domainPrefix": strings.Split(req.r.Host, ".")[0],
		"http":         req.httpContext(),
		"requestId":    req.id,
		"routeKey":     req.route.key,
		"stage":        "$default",
		"time":         t,
		"timeEpoch":    epoch,
	}
}

func (req *request) cookies() []string {
	var c []string
	for _, v := range req.r.Header.Values("Cookie") {
		for part := range strings.SplitSeq(v, ";") {
			if part = strings.TrimSpace(part); part != "" {
				c = append(c, part)
			}
		}
	}
	return c
}

func (req *request) eventV2(auth authResult) []byte {
	headers, _ := req.headers()
	query, _ := req.query()
	body, b64 := req.encodedBody()
	rc := req.requestContextV2()
	if req.route.authorizer != nil {
		rc["authorizer"] = map[string]any{"lambda": auth.context}
	}
	ev := map[string]any{
		"version":               "2.0",
		"routeKey":              req.route.key,
		"rawPath":               req.rawPath,
		"rawQueryString":        req.r.URL.RawQuery,
		"headers":               headers,
		"queryStringParameters": query,
		"pathParameters":        req.pathParameters(),
		"requestContext":        rc,
		"isBase64Encoded":       b64,
	}
	if c := req.cookies(); c != nil {
		ev["cookies"] = c
	}
	if len(req.body) > 0 {
		ev["body"] = body
	}
	return mustJSON(ev)
}

func (req *request) requestContextV1() map[string]any {
	t, epoch := req.requestTime()
	return map[string]any{
		"accountId":        "123456789012",
		"apiId":            req.gw.apiID,
		"resourcePath":     req.route.key[strings.IndexByte(req.route.key, ' ')+1:],
		"httpMethod":       req.r.Method,
		"path":             req.gw.api.stage + req.rawPath,
		"protocol":         req.r.Proto,
		"stage":            strings.TrimPrefix(req.gw.api.stage, "/"),
		"requestId":        req.id,
		"requestTime":      t,
		"requestTimeEpoch": epoch,
		"domainName":       req.r.Host,
		"identity":         map[string]any{"sourceIp": req.sourceIP(), "userAgent": req.r.UserAgent()},
	}
}

func (req *request) eventV1(auth authResult) []byte {
	headers, multiHeaders := req.headers()
	query, multiQuery := req.query()
	body, b64 := req.encodedBody()
	rc := req.requestContextV1()
	if req.route.authorizer != nil {
		a := map[string]any{"principalId": auth.principal}
		for k, v := range auth.context {
			a[k] = v
		}
		rc["authorizer"] = a
	}
	ev := map[string]any{
		"resource":                        rc["resourcePath"],
		"path":                            req.rawPath,
		"httpMethod":                      req.r.Method,
		"headers":                         headers,
		"multiValueHeaders":               multiHeaders,
		"queryStringParameters":           query,
		"multiValueQueryStringParameters": multiQuery,
		"pathParameters":                  req.pathParameters(),
		"stageVariables":                  nil,
		"requestContext":                  rc,
		"body":                            nil,
		"isBase64Encoded":                 b64,
	}
	if len(req.body) > 0 {
		ev["body"] = body
	}
	return mustJSON(ev)
}

// authorizerEvent is the REQUEST authorizer's event for the request.
func (req *request) authorizerEvent(identity []string) []byte {
	if !req.gw.api.rest {
		headers, _ := req.headers()
		query, _ := req.query()
		return mustJSON(map[string]any{
			"version":               "2.0",
			"type":                  "REQUEST",
			"routeArn":              fmt.Sprintf("arn:aws:execute-api:us-east-1:123456789012:%s/$default/%s%s", req.gw.apiID, req.r.Method, req.path),
			"identitySource":        identity,
			"routeKey":              req.route.key,
			"rawPath":               req.rawPath,
			"rawQueryString":        req.r.URL.RawQuery,
			"cookies":               req.cookies(),
			"headers":               headers,
			"queryStringParameters": query,
			"requestContext":        req.requestContextV2(),
			"pathParameters":        req.pathParameters(),
		})
	}
	headers, multiHeaders := req.headers()
	query, multiQuery := req.query()
	rc := req.requestContextV1()
	return mustJSON(map[string]any{
		"type":                            "REQUEST",
		"methodArn":                       req.methodARN(),
		"resource":                        rc["resourcePath"],
		"path":                            req.rawPath,
		"httpMethod":                      req.r.Method,
		"headers":                         headers,
		"multiValueHeaders":               multiHeaders,
		"queryStringParameters":           query,
		"multiValueQueryStringParameters": multiQuery,
		"pathParameters":                  req.pathParameters(),
		"stageVariables":                  map[string]string{},
		"requestContext":                  rc,
	})
}

// respond writes the function's answer: a proxy response object, or (HTTP
// API only) any other JSON value as a 200 application/json body.
func (req *request) respond(w http.ResponseWriter, out []byte) error {
	var resp struct {
		StatusCode        *int                `json:"statusCode"`
		Headers           map[string]string   `json:"headers"`
		MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
		Cookies           []string            `json:"cookies"`
		Body              string              `json:"body"`
		IsBase64Encoded   bool                `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(out, &resp); err != nil || resp.StatusCode == nil {
		if req.route.payloadV2 && json.Valid(out) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Length", strconv.Itoa(len(out)))
			w.Write(out)
			return nil
		}
		return fmt.Errorf("no statusCode in %.200s", out)
	}
	if *resp.StatusCode < 100 || *resp.StatusCode > 599 {
		return fmt.Errorf("statusCode %d", *resp.StatusCode)
	}
	h := w.Header()
	for k, vs := range resp.MultiValueHeaders {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	for k, v := range resp.Headers {
		h.Set(k, v)
	}
	for _, c := range resp.Cookies {
		h.Add("Set-Cookie", c)
	}
	body := []byte(resp.Body)
	if resp.IsBase64Encoded && (req.route.payloadV2 || req.gw.api.isBinary(firstMediaType(req.r.Header.Get("Accept"))) || req.gw.api.isBinary(h.Get("Content-Type"))) {
		var err error
		if body, err = base64.StdEncoding.DecodeString(resp.Body); err != nil {
			return fmt.Errorf("isBase64Encoded body: %w", err)
		}
	}
	// API Gateway sends the length of the body it received, whatever the function said.
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(*resp.StatusCode)
	if req.r.Method != http.MethodHead {
		_, _ = io.Copy(w, bytes.NewReader(body))
	}
	return nil
}

func firstMediaType(accept string) string {
	first, _, _ := strings.Cut(accept, ",")
	return strings.TrimSpace(first)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // maps of strings always encode
	}
	return b
}
