// Package routes is the API's one route table: every route is declared once
// (Table) with its method, path pattern, endpoint group, access rule, summary,
// query parameters and schemas. Everything else about routes is derived from it:
// the groups' handlers (Router.Mount, bound by route id, served with one match), the
// query parameters each route accepts (unknown ones answer 400), the auth
// policy's decisions (authapi reads Route.Access and Route.Node through Match),
// the API Gateway routes of each function (infra) and the OpenAPI document
// served at GET /api/v1/openapi.json (Document).
package routes

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"unsafe"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/levelpath"
)

// Access is what a principal needs to use a route.
type Access int

const (
	// Public routes are answered without credentials.
	Public Access = iota
	// Read routes change nothing: observers may use them (GET, and the POSTs
	// that compute an answer from their body).
	Read
	// Write routes change something: admins only, and a node where Route.Node allows it.
	Write
	// Admin routes are for admins only, whatever the method.
	Admin
)

var accessNames = map[Access]string{Public: "public", Read: "read", Write: "write", Admin: "admin"}

func (a Access) String() string { return accessNames[a] }

// NodeRule is what a node principal may do on a route beyond what its Access allows nobody else.
type NodeRule int

const (
	// NodeNone: nodes may not use the route.
	NodeNone NodeRule = iota
	// NodeOwnDocument: ConfigDB documents of the node's environment whose level path is its own placement.
	NodeOwnDocument
	// NodeOwnEntry: the node's own registry entry ({id} names the node).
	NodeOwnEntry
	// NodeHostnameSearch: the registry search by the node's own host name (?hostname= alone).
	NodeHostnameSearch
	// NodeOwnTask: the graph agent's claim and report calls for its own node ({node} names it).
	NodeOwnTask
	// NodeOwnSession: the console's login and logout, for the node user itself.
	NodeOwnSession
)

var nodeRuleNames = map[NodeRule]string{
	NodeNone: "", NodeOwnDocument: "own-document", NodeOwnEntry: "own-entry",
	NodeHostnameSearch: "own-hostname-search", NodeOwnTask: "own-task", NodeOwnSession: "own-session",
}

func (n NodeRule) String() string { return nodeRuleNames[n] }

// ParamType is the type of a query parameter's value: the one parser
// (Route.CheckQuery, QueryOf) reads every value by it.
type ParamType string

const (
	String ParamType = "string"
	// Integer is a positive integer (page sizes, version numbers).
	Integer ParamType = "integer"
	// Seconds is a finite number of seconds (a JSON Schema number).
	Seconds ParamType = "seconds"
	// Flag is a tuning-box style switch: present without a value means true
	// (?effective), a value says true or false (flagTrue, flagFalse).
	Flag ParamType = "flag"
	// DateTime is an RFC 3339 instant.
	DateTime ParamType = "date-time"
)

// Param is one query parameter a route accepts.
type Param struct {
	Name        string
	Type        ParamType
	Description string
	// Since is the first microversion that has the parameter (zero: all of
	// them); older requests that give it are refused.
	Since httpapi.Version
}

// Route is one method and path of the API.
type Route struct {
	// ID names the route: the key its handler is bound by, and its OpenAPI operationId.
	ID     string
	Method string
	// Path is the http.ServeMux path pattern ({name} one segment, {name...} the
	// rest); with Levels, the document's path at the global level, whose
	// {resource...} may span segments before the last ones (the level matcher
	// reads it: levels.go).
	Path string
	// Levels: a level path ({level}/{value} pairs, such as spec 000's
	// nodes/{node}) may come between {env} and resources/ in Path.
	Levels bool
	// When names a Flag parameter that takes a request to this route when set,
	// away from the route of the same path without it (?effective).
	When string
	// Slash: the route is also served with a trailing slash (spec 002 writes its paths with one).
	Slash bool
	// Group is the endpoint group, the Lambda function that serves the route.
	Group  string
	Access Access
	Node   NodeRule
	// Since is the first microversion that has the route (zero: all of them).
	Since   httpapi.Version
	Summary string
	Query   []Param
	// FirstOfRepeated: a repeated query parameter is read by its first value,
	// as tuning-box (Flask) reads it, instead of refused (spec 004's rule).
	FirstOfRepeated bool
	// Request and Response name the schemas (Schemas) of the request body and
	// of the success answer; "" for none.
	Request, Response string
	// RequestTypes are the media types of the request body besides
	// application/json (the server takes any "+json" type).
	RequestTypes []string
	// Status lists the success statuses (200 when empty); 204 has no body.
	Status []int
	// ContentType of the success answer ("application/json" when "").
	ContentType string
	// EmbeddedOnly: only the embedded store serves it; on AWS it is a 404
	// that says what does the job there (the store's backup).
	EmbeddedOnly bool
}

// EmbeddedOnlyExtension marks, in the OpenAPI document, an operation only the embedded store serves.
const EmbeddedOnlyExtension = "x-tuningbox-embedded-only"

// Patterns are the ServeMux patterns of r: its path, and with Slash the same
// path with a trailing slash. A route behind a level path has its Path (the
// ServeMux cannot read it: the level matcher does), with ?When when it has one.
func (r Route) Patterns() []string {
	p := []string{r.Method + " " + r.Path}
	if r.When != "" {
		p[0] += "?" + r.When
	}
	if r.Slash {
		p = append(p, r.Method+" "+r.Path+"/{$}")
	}
	return p
}

func (r Route) successStatuses() []int {
	if len(r.Status) == 0 {
		return []int{http.StatusOK}
	}
	return r.Status
}

func (r Route) queryNames() []string {
	names := make([]string, len(r.Query))
	for i, p := range r.Query {
		names[i] = p.Name
	}
	return names
}

// Group returns the routes of the named endpoint group, in table order.
func Group(name string) []Route {
	var out []Route
	for _, r := range Table {
		if r.Group == name {
			out = append(out, r)
		}
	}
	return out
}

// Groups lists the endpoint groups in the order they first appear in the table.
func Groups() []string {
	var out []string
	for _, r := range Table {
		if !slices.Contains(out, r.Group) {
			out = append(out, r.Group)
		}
	}
	return out
}

// Handlers binds handlers to route ids.
type Handlers map[string]http.HandlerFunc

// byID indexes the table.
var byID = func() map[string]Route {
	m := make(map[string]Route, len(Table))
	for _, r := range Table {
		if _, dup := m[r.ID]; dup {
			panic("routes: two routes have the id " + r.ID)
		}
		if len(r.Query) > maxParams {
			panic(fmt.Sprintf("routes: %s declares %d query parameters, more than a Query holds (maxParams %d)", r.ID, len(r.Query), maxParams))
		}
		m[r.ID] = r
	}
	return m
}()

// Router serves the routes whose handlers are mounted on it. A request is
// routed once, by the table's matcher (Find): the match is recorded on the
// request (Router.WithMatch, or WithMatch in the auth policy) and the Router
// serves it from there.
type Router struct {
	// served holds each mounted route's handler behind the table's query
	// parser and microversion gate, by route id.
	served map[string]http.HandlerFunc
	// matches keeps the routes requests took, by method and escaped path:
	// matching a path with http.ServeMux semantics was the largest part of
	// routing a cached read.
	matches *cache.LRU[string, *recordedMatch]
	// guard is the auth policy applied at dispatch (Use); nil: none.
	guard Guard
}

// NewRouter returns a Router with no routes that keeps matches of at most
// matchBytes in all.
func NewRouter(matchBytes int64) *Router {
	return &Router{
		served:  make(map[string]http.HandlerFunc),
		matches: cache.New[string](matchBytes, (*recordedMatch).cost),
	}
}

// WithMatch is WithMatch from the matches the router keeps.
func (rt *Router) WithMatch(r *http.Request) *http.Request {
	return requestWith(r, rt.MatchContext(r.Context(), r))
}

// MatchContext is MatchContext from the matches the router keeps. Only
// routes found are kept: the mux's other answers (a redirect keeps the
// query) are not.
func (rt *Router) MatchContext(ctx context.Context, r *http.Request) context.Context {
	return withMatch(ctx, r, func(r *http.Request) *recordedMatch {
		// Looked up through a view of a stack buffer: a hit, the usual case,
		// makes no string (LRU.Get keeps no key); a miss makes the kept one.
		var buf [256]byte
		k := append(append(append(append(buf[:0], r.Method...), ' '), r.URL.EscapedPath()...), whenKey(r)...)
		rec, ok := rt.matches.Get(unsafe.String(unsafe.SliceData(k), len(k)))
		if !ok {
			m, found := Find(r)
			rec = &recordedMatch{match: m, ok: found, key: string(k)}
			if found {
				rt.matches.Add(rec.key, rec)
			}
		}
		return rec
	})
}

// Stats returns the lookups of the matches the router keeps that found one and that did not.
func (rt *Router) Stats() (hits, misses uint64) { return rt.matches.Stats() }

// Mount binds each handler to the route of its id. A handler whose id has no
// route, or whose route is mounted already, is a programming error (Mount
// panics); a route without a handler is answered 404, which the agreement
// test (TestRoutesAgree in shared/app) reports.
func (rt *Router) Mount(handlers Handlers) {
	for id, h := range handlers {
		route, ok := byID[id]
		if !ok {
			panic(fmt.Sprintf("routes: handler %q has no route in the table", id))
		}
		if _, dup := rt.served[id]; dup {
			panic(fmt.Sprintf("routes: route %q is mounted twice", id))
		}
		rt.served[id] = route.serve(h)
		if rt.guard != nil {
			rt.served[id] = rt.guard.Route(route, rt.served[id])
		}
	}
}

// Patterns lists the ServeMux patterns of the mounted routes, sorted.
func (rt *Router) Patterns() []string {
	var out []string
	for id := range rt.served {
		out = append(out, byID[id].Patterns()...)
	}
	slices.Sort(out)
	return out
}

// ServeHTTP serves the route r takes with its path values (r.PathValue),
// behind its guard (Use), or, when the guard lets it, answers with a JSON
// error what http.ServeMux would: 404 for a path no
// mounted route matches, 405 (with its Allow header) for a method no route of
// the path takes, and its redirects to the canonical path as they are.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = rt.WithMatch(r)
	m, ok := MatchOf(r)
	h := rt.served[m.ID]
	if ok && h != nil {
		for name, v := range m.Values {
			r.SetPathValue(name, v)
		}
		h(w, r)
		return
	}
	if rt.guard != nil {
		if err := rt.guard.Miss(r); err != nil {
			httpapi.Error(w, r, err)
			return
		}
	}
	switch {
	case m.miss == http.StatusMethodNotAllowed:
		w.Header().Set("Allow", m.allow)
		httpapi.Error(w, r, errs.New(errs.MethodNotAllowed, "method %s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, m.allow))
	case m.location != "":
		w.Header().Set("Location", m.location)
		w.WriteHeader(m.miss)
	default:
		httpapi.Error(w, r, errs.NotFoundf("no route for %s", r.URL.Path))
	}
}

// serve is h behind the route's checks of the request: its query
// parameters, the nesting of its JSON body (httpapi.LimitBodyDepth) and its
// microversion. The guard (Use) runs before them: the policy answers first.
func (r Route) serve(h http.HandlerFunc) http.HandlerFunc {
	checked := func(w http.ResponseWriter, req *http.Request) {
		if err := r.CheckQuery(req); err != nil {
			httpapi.Error(w, req, err)
			return
		}
		if err := httpapi.LimitBodyDepth(req); err != nil {
			httpapi.Error(w, req, err)
			return
		}
		h(w, req)
	}
	if r.Since != (httpapi.Version{}) {
		return httpapi.Since(r.Since, checked)
	}
	return checked
}

// Match is the route a request takes, with its path values.
type Match struct {
	Route
	// Values are the path wildcards' values by name, unescaped as r.PathValue
	// gives them. A route behind a level path has env, resource and kind (its
	// kind segment as given, "values" on the route that spells it out too).
	Values map[string]string
	// Levels is the level path of a route behind one (Route.Levels), as
	// levelpath.Split reads it from the escaped path (an escaped "/" stays
	// inside its value). Shared by every request that takes the match: read
	// it, never change it (appending copies it).
	Levels []levelpath.Level
	// miss, when no route matches, is the status http.ServeMux answers (404,
	// 405, or a redirect to location); allow is its Allow header.
	miss            int
	allow, location string
}

// matcher routes requests with http.ServeMux's own pattern semantics: the
// table's patterns, each answered by a matchHandler.
var matcher = func() *http.ServeMux {
	m := http.NewServeMux()
	for pattern, h := range levelMatchers() {
		m.Handle(pattern, h)
	}
	for _, route := range Table {
		if route.Levels {
			continue
		}
		h := matchHandler{route: route, params: route.pathParams()}
		for _, p := range route.Patterns() {
			m.Handle(p, h)
		}
	}
	return m
}()

type matchHandler struct {
	route  Route
	params []string // the path's wildcard names
}

// ServeHTTP records the route and its path values into the matchWriter Find passes.
func (h matchHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mw := w.(*matchWriter)
	mw.match = &Match{Route: h.route, Values: make(map[string]string, len(h.params))}
	for _, name := range h.params {
		mw.match.Values[name] = r.PathValue(name)
	}
}

// matchWriter carries Find's result out of the matcher: the match, or the
// status and headers of the mux's own answer (its body goes nowhere).
type matchWriter struct {
	header http.Header
	status int
	match  *Match
}

func (w *matchWriter) Header() http.Header {
	if w.header == nil {
		w.header = http.Header{}
	}
	return w.header
}
func (w *matchWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *matchWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Find returns the route r takes, false when none does (the router answers 404, 405 or a redirect).
func Find(r *http.Request) (Match, bool) {
	w := &matchWriter{}
	shallow := *r // the mux records its match on the request it serves: not on the caller's
	matcher.ServeHTTP(w, &shallow)
	if w.match == nil {
		miss := Match{miss: w.status, allow: w.header.Get("Allow"), location: w.header.Get("Location")}
		if miss.miss == http.StatusMethodNotAllowed {
			if status, allow, ok := levelAllow(r); ok {
				miss.miss, miss.allow = status, allow
			}
		}
		return miss, false
	}
	return *w.match, true
}

// matchKey marks the match recorded on a request (WithMatch).
type matchKey struct{}

// recordedMatch is a match, shared by every request that takes it: nobody
// changes it (nor its Values).
type recordedMatch struct {
	match Match
	ok    bool
	key   string // method and escaped path (Router.WithMatch)
}

func (rec *recordedMatch) cost() int64 {
	n := len(rec.key) + 256 // the entry, the match and its map
	for k, v := range rec.match.Values {
		n += len(k) + len(v) + 32
	}
	for _, lv := range rec.match.Levels {
		n += len(lv.Name) + len(lv.Value) + 32
	}
	return int64(n)
}

// WithMatch records on r the route it takes, so that everything after (the
// auth policy, the audit, the Router) routes it no more: routing is a fair
// part of a cached read. A request that has its match already is returned as
// it is.
func WithMatch(r *http.Request) *http.Request {
	return requestWith(r, MatchContext(r.Context(), r))
}

// MatchContext returns ctx, the context r goes on with, with the route r
// takes recorded (WithMatch), unless ctx has one: the middleware records it
// while it builds the request's context, without a request of its own.
func MatchContext(ctx context.Context, r *http.Request) context.Context {
	return withMatch(ctx, r, func(r *http.Request) *recordedMatch {
		m, ok := Find(r)
		return &recordedMatch{match: m, ok: ok}
	})
}

// withMatch records in ctx the match find gives for r, unless ctx has one.
func withMatch(ctx context.Context, r *http.Request, find func(*http.Request) *recordedMatch) context.Context {
	if _, recorded := ctx.Value(matchKey{}).(*recordedMatch); recorded {
		return ctx
	}
	return context.WithValue(ctx, matchKey{}, find(r))
}

// requestWith is r on ctx: r itself when ctx is its context already.
func requestWith(r *http.Request, ctx context.Context) *http.Request {
	if ctx == r.Context() {
		return r
	}
	return r.WithContext(ctx)
}

// RecordedMatch returns the match recorded on r (WithMatch), without
// routing a request that has none: false then, or when no route matched.
func RecordedMatch(r *http.Request) (Match, bool) {
	rec, ok := r.Context().Value(matchKey{}).(*recordedMatch)
	if !ok {
		return Match{}, false
	}
	return rec.match, rec.ok
}

// MatchOf returns the route r takes: the match recorded by WithMatch, or Find's.
func MatchOf(r *http.Request) (Match, bool) { return MatchIn(r.Context(), r) }

// MatchIn returns the route r takes: the match recorded in ctx (MatchContext),
// or Find's.
func MatchIn(ctx context.Context, r *http.Request) (Match, bool) {
	if rec, ok := ctx.Value(matchKey{}).(*recordedMatch); ok {
		return rec.match, rec.ok
	}
	return Find(r)
}

// pathParams lists the wildcard names of the route's path, in order.
func (r Route) pathParams() []string {
	var names []string
	for seg := range strings.SplitSeq(r.Path, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			names = append(names, strings.TrimSuffix(strings.Trim(seg, "{}"), "..."))
		}
	}
	return names
}

// Prefixes lists the top-level paths ("/api/v1/<name>", "/ui") under which the
// routes of group lie, in table order: what API Gateway sends to the group's
// function (each prefix and everything below it). A prefix ends before a
// path's first wildcard.
func Prefixes(group string) []string {
	var out []string
	for _, r := range Group(group) {
		segs := strings.SplitN(strings.TrimPrefix(r.Path, "/"), "/", 4)
		segs = segs[:min(3, len(segs))]
		if wild := slices.IndexFunc(segs, func(s string) bool { return strings.HasPrefix(s, "{") }); wild >= 0 {
			segs = segs[:wild]
		}
		prefix := "/" + strings.Join(segs, "/")
		if !slices.Contains(out, prefix) {
			out = append(out, prefix)
		}
	}
	return out
}

// GatewayPaths lists the API Gateway route paths under a prefix (Prefixes)
// that reach routes of the table, so the API has no route that serves
// nothing: the prefix itself when a route other than a public GET has that
// path (a public GET has its own route, PublicPaths), and prefix/{proxy+}
// when such a route lies below it.
func GatewayPaths(prefix string) []string {
	var exact, below bool
	for _, r := range Table {
		exact = exact || r.Path == prefix && (r.Access != Public || r.Method != "GET")
		below = below || strings.HasPrefix(r.Path, prefix+"/") && (r.Access != Public || r.Method != "GET")
	}
	var out []string
	if exact {
		out = append(out, prefix)
	}
	if below {
		out = append(out, prefix+"/{proxy+}")
	}
	return out
}

// PublicPaths lists the paths of group's public routes, whose GET API
// Gateway answers without its authorizer, in API Gateway's spelling: a
// trailing {name...} is its greedy {proxy+}.
func PublicPaths(group string) []string {
	var out []string
	for _, r := range Group(group) {
		if r.Access == Public {
			out = append(out, GatewayPath(r.Path))
		}
	}
	return out
}

// GatewayPath is an http.ServeMux path as an API Gateway route path: a
// trailing {name...} is {proxy+}.
func GatewayPath(path string) string {
	if at := strings.LastIndex(path, "/{"); at >= 0 && strings.HasSuffix(path, "...}") {
		return path[:at] + "/{proxy+}"
	}
	return path
}
