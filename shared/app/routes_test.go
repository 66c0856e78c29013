package app_test

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestRoutesAgree checks, route by route, that the served router, the route
// table, the auth policy and the OpenAPI document agree (the stack's API
// Gateway routes are checked against the table in infra's
// TestEndpointGroupsServeTheRouteTable).
func TestRoutesAgree(t *testing.T) {
	b := mem.New()
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	router, err := app.Routes(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	served := router.Patterns()
	var declared []string
	for _, r := range routes.Table {
		declared = append(declared, r.Patterns()...)
	}
	slices.Sort(declared)
	for _, p := range served {
		if !slices.Contains(declared, p) {
			t.Errorf("the router serves %q, which the table does not declare", p)
		}
	}
	for _, p := range declared {
		if !slices.Contains(served, p) {
			t.Errorf("the table declares %q, which no handler serves", p)
		}
	}

	doc, err := routestest.Spec()
	if err != nil {
		t.Fatal(err)
	}
	observer := auth.Principal{User: "watcher", Role: auth.Observer}
	node := auth.Principal{User: "n1", Role: auth.Node, NodeNames: []string{"n1"}, NodeEnvironment: []string{"e1"}}
	operations, public := 0, 0
	for _, r := range routes.Table {
		// The document: one operation per route, under its id.
		item := doc.Paths.Find(routes.OpenAPIPath(r.Path))
		if item == nil || item.GetOperation(r.Method) == nil || item.GetOperation(r.Method).OperationID != r.ID {
			t.Errorf("%s %s: no operation %q in the document", r.Method, r.Path, r.ID)
		} else {
			operations++
		}
		// The policy: a request on the route is decided by the route's access rule.
		for _, p := range r.Patterns() {
			_, path, _ := strings.Cut(p, " ")
			req := httptest.NewRequest(r.Method, routestest.Target(path), nil)
			if m, ok := routes.Find(req); !ok || m.ID != r.ID {
				t.Errorf("%s %s takes route %q, not %q", r.Method, req.URL.Path, m.ID, r.ID)
				continue
			}
			safe := r.Method == http.MethodGet || r.Method == http.MethodHead
			if got := authapi.IsPublic(req); got != (r.Access == routes.Public) {
				t.Errorf("%s %s: public %v, access %s", r.Method, req.URL.Path, got, r.Access)
			}
			if got, want := authapi.IsWrite(req), r.Access == routes.Write || r.Access == routes.Admin && !safe; got != want {
				t.Errorf("%s %s: write %v, access %s", r.Method, req.URL.Path, got, r.Access)
			}
			if got := authapi.Authorize(observer, req) == nil; got != (r.Access == routes.Public || r.Access == routes.Read) {
				t.Errorf("%s %s: observer allowed %v, access %s", r.Method, req.URL.Path, got, r.Access)
			}
			// A node is refused every route that is neither public nor its own by the route's node rule.
			if r.Access != routes.Public && r.Node == routes.NodeNone && authapi.Authorize(node, req) == nil {
				t.Errorf("%s %s: a node is allowed a route without a node rule", r.Method, req.URL.Path)
			}
		}
		if r.Access == routes.Public {
			public++
		}
	}
	t.Logf("routes agree: %d table routes (%d patterns served, %d declared), %d OpenAPI operations on %d paths, %d public, groups %v",
		len(routes.Table), len(served), len(declared), operations, doc.Paths.Len(), public, routes.Groups())
}

// TestEachGroupMountsItsRoutes: each endpoint group, which one Lambda
// function serves alone, mounts a handler for every route of the table in
// its group and for none of another group's (Mount refuses a second handler
// for a route); the groups are those of the table. TestRoutesAgree checks
// the local server, which mounts them all.
func TestEachGroupMountsItsRoutes(t *testing.T) {
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := app.GroupNames(), slices.Sorted(slices.Values(routes.Groups())); !slices.Equal(got, want) {
		t.Fatalf("groups %v, the table's %v", got, want)
	}
	for _, g := range []app.Group{app.AuthRoutes, app.ConfigRoutes, app.GraphsRoutes, app.TemplatesRoutes} {
		router, err := app.Routes(mem.New(), cfg, g.Name)
		if err != nil {
			t.Fatal(err)
		}
		var want []string
		for _, r := range routes.Group(g.Name) {
			want = append(want, r.Patterns()...)
		}
		slices.Sort(want)
		if got := router.Patterns(); !slices.Equal(got, want) {
			t.Errorf("group %s serves %q, its routes in the table are %q", g.Name, got, want)
		}
	}
}
