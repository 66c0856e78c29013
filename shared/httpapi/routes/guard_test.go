package routes_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// denyWrites is a guard that refuses every route whose access is not Read
// and every request no route takes, counting what it is asked.
type denyWrites struct {
	bound  map[string]int
	misses int
}

func (g *denyWrites) Route(route routes.Route, h http.HandlerFunc) http.HandlerFunc {
	g.bound[route.ID]++
	if route.Access == routes.Read {
		return h
	}
	return func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "denied "+route.ID+" "+r.PathValue("env"), http.StatusForbidden)
	}
}

func (g *denyWrites) Miss(*http.Request) error {
	g.misses++
	return errs.New(errs.Forbidden, "no route: denied")
}

// TestGuardAtDispatch: the policy is bound to each route once, at Mount, by
// what the table declares of it, and runs when a request takes the route,
// with its path values; a request no route takes asks Miss before the
// router's 404 or 405.
func TestGuardAtDispatch(t *testing.T) {
	g := &denyWrites{bound: map[string]int{}}
	router := routes.NewRouter(1 << 20)
	router.Use(g)
	served := 0
	handler := func(w http.ResponseWriter, r *http.Request) { served++ }
	router.Mount(routes.Handlers{"config.environments.get": handler, "config.environments.delete": handler})
	if len(g.bound) != 2 || g.bound["config.environments.get"] != 1 || g.bound["config.environments.delete"] != 1 {
		t.Fatalf("guard bound to %v, want each mounted route once", g.bound)
	}
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/api/v1/config/environments/7", http.StatusOK, ""},
		{"DELETE", "/api/v1/config/environments/7", http.StatusForbidden, "denied config.environments.delete 7\n"},
		{"GET", "/api/v1/config/nowhere", http.StatusForbidden, ""},
		{"POST", "/api/v1/config/environments/7", http.StatusForbidden, ""},
	} {
		w := httptest.NewRecorder()
		router.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status || tc.body != "" && w.Body.String() != tc.body {
			t.Errorf("%s %s = %d %q, want %d %q", tc.method, tc.path, w.Code, w.Body, tc.status, tc.body)
		}
	}
	if served != 1 || g.misses != 2 {
		t.Errorf("handlers ran %d times, Miss %d; want 1 and 2", served, g.misses)
	}
	if len(g.bound) != 2 || g.bound["config.environments.get"] != 1 {
		t.Errorf("guard bound again at dispatch: %v", g.bound)
	}
	defer func() {
		if recover() == nil {
			t.Error("Use after Mount did not panic")
		}
	}()
	router.Use(g)
}
