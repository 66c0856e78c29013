package routes

import (
	"net/http"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/levelpath"
)

// A ConfigDB document's path has a level path of any depth and a resource
// name that may contain "/" (spec 000):
//
//	/environments/{env}[/{level}/{value}...]/resources/{resource...}/{kind}[/versions | /keys/set | /keys/delete]
//
// which no ServeMux pattern reads ({name...} ends a pattern). The routes with
// Levels share one ServeMux pattern per method, the path up to {env} and the
// rest ("{env}/{rest...}"), and the level matcher picks the route among them
// by the segments their Path ends with.

// overridesAlias is spec 000's spelling of the overrides kind segment ("override").
const overridesAlias = "override"

// documentKinds are the values of a {kind} segment.
var documentKinds = []string{"values", "overrides", overridesAlias}

// levelRoute is a route behind a level path, read for matching.
type levelRoute struct {
	Route
	// depth is the number of segments up to and with {env}; prefix are those before {env}.
	depth  int
	prefix []string
	// tail are the segments Path has after {resource...}: literals, or
	// {kind}, one of documentKinds.
	tail []string
}

// matches reports whether the segments after "resources" name a resource
// and end with r's tail.
func (r levelRoute) matches(name []string) bool {
	n := len(name) - len(r.tail)
	if n < 1 {
		return false
	}
	for i, want := range r.tail {
		got := name[n+i]
		switch {
		case want == "{kind}":
			if !slices.Contains(documentKinds, got) {
				return false
			}
		case got != want && !(want == "overrides" && got == overridesAlias):
			return false
		}
	}
	return true
}

// levelMatcher picks the route of a request among the routes that share its
// ServeMux pattern (in table order), or records what the mux would answer
// when none matches: 405 with the methods of the routes that take the path,
// else 404.
type levelMatcher struct {
	routes []levelRoute
	// all are the level routes of every method, for the Allow of a 405.
	all *[]levelRoute
}

func (h levelMatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	mw := w.(*matchWriter)
	depth := h.routes[0].depth
	segs, err := httpapi.PathSegments(r.URL.EscapedPath())
	if err != nil || len(segs) <= depth {
		mw.WriteHeader(http.StatusNotFound)
		return
	}
	levels, name, err := levelpath.Split(segs[depth:])
	if err != nil {
		mw.WriteHeader(http.StatusNotFound)
		return
	}
	for _, route := range h.routes {
		if !route.matches(name) || route.When != "" && !queryFlag(r.URL.RawQuery, route.When) {
			continue
		}
		n := len(name) - len(route.tail)
		mw.match = &Match{Route: route.Route, Values: map[string]string{
			"env":      segs[depth-1],
			"resource": strings.Join(name[:n], "/"),
			"kind":     name[n],
		}, Levels: slices.Clip(levels)}
		return
	}
	status, allow := levelMiss(*h.all, depth, h.routes[0].Method, name)
	if allow != "" {
		mw.Header().Set("Allow", allow)
	}
	mw.WriteHeader(status)
}

// levelMiss is the answer to a request that no route of its method takes
// whose path is a document path (the segments after resources/ are name):
// 405 with the methods of the routes that take it, else 404.
func levelMiss(all []levelRoute, depth int, method string, name []string) (status int, allow string) {
	var methods []string
	for _, route := range all {
		if route.depth == depth && route.Method != method && route.matches(name) && !slices.Contains(methods, route.Method) {
			methods = append(methods, route.Method)
			if route.Method == http.MethodGet {
				methods = append(methods, http.MethodHead)
			}
		}
	}
	if len(methods) == 0 {
		return http.StatusNotFound, ""
	}
	slices.Sort(methods)
	return http.StatusMethodNotAllowed, strings.Join(methods, ", ")
}

// levelAllow corrects the mux's 405 to a request whose method has no level
// route, on a path under a level route's pattern: the mux allows every
// method that has one, whatever the rest of the path.
func levelAllow(r *http.Request) (status int, allow string, ok bool) {
	segs, err := httpapi.PathSegments(r.URL.EscapedPath())
	if err != nil {
		return 0, "", false
	}
	for _, route := range *allLevelRoutes {
		if len(segs) <= route.depth || !slices.Equal(segs[:route.depth-1], route.prefix) {
			continue
		}
		_, name, err := levelpath.Split(segs[route.depth:])
		if err != nil {
			return http.StatusNotFound, "", true
		}
		status, allow := levelMiss(*allLevelRoutes, route.depth, r.Method, name)
		return status, allow, true
	}
	return 0, "", false
}

// allLevelRoutes are the routes with Levels (levelMatchers), of every method.
var allLevelRoutes = new([]levelRoute)

// levelMatchers are the level matchers of the table, by their ServeMux pattern.
func levelMatchers() map[string]levelMatcher {
	all := allLevelRoutes
	out := map[string]levelMatcher{}
	for _, route := range Table {
		if !route.Levels {
			continue
		}
		prefix, after, ok := strings.Cut(route.Path, "/resources/")
		_, tail, _ := strings.Cut(after, "...}/")
		if !ok || !strings.HasSuffix(prefix, "/{env}") || tail == "" {
			panic("routes: " + route.ID + " has Levels but its path is not .../{env}/resources/{resource...}/...")
		}
		segs := strings.Split(strings.TrimPrefix(prefix, "/"), "/")
		lr := levelRoute{Route: route, depth: len(segs), prefix: segs[:len(segs)-1], tail: strings.Split(tail, "/")}
		*all = append(*all, lr)
		pattern := route.Method + " " + prefix + "/{rest...}"
		h := out[pattern]
		h.routes, h.all = append(h.routes, lr), all
		out[pattern] = h
	}
	return out
}

// queryFlag reports whether the raw query sets the Flag name, read by its
// first pair as the parser reads a repeated parameter, without parsing the
// rest of it: a route's When is read on every match.
func queryFlag(rawQuery, name string) bool {
	for pair := range strings.SplitSeq(rawQuery, "&") {
		if n, value, ok := readPair(pair); ok && n == name {
			return Param{Name: name, Type: Flag}.read(value).flag
		}
	}
	return false
}

// whenKeys are the When flags of the table, each with "?" before it.
var whenKeys = func() []string {
	var out []string
	for _, r := range Table {
		if r.When != "" && !slices.Contains(out, "?"+r.When) {
			out = append(out, "?"+r.When)
		}
	}
	return out
}()

// whenKey is what a request's query adds to the key of its match
// (Router.WithMatch): the When flags it sets ("?effective"; built without
// an allocation when it sets one, Hiera's read).
func whenKey(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return ""
	}
	key := ""
	for _, k := range whenKeys {
		if !queryFlag(r.URL.RawQuery, k[1:]) {
			continue
		}
		if key == "" {
			key = k
		} else {
			key += k
		}
	}
	return key
}
