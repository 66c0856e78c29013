package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

func TestDiscoverFunctions(t *testing.T) {
	tests := []struct {
		name           string
		dirs           []string
		wantGroups     []string
		wantAuthorizer bool
		wantErr        string
	}{
		{name: "config only", dirs: []string{"config"}, wantGroups: []string{"config"}},
		{name: "all", dirs: []string{"authorizer", "gc", "templates", "auth", "config", "graphs", "claims", "watch"}, wantGroups: []string{"config", "watch", "graphs", "claims", "templates", "auth"}, wantAuthorizer: true},
		{name: "unknown function", dirs: []string{"config", "nodes"}, wantErr: "nodes has no endpoint group"},
		{name: "authorizer alone", dirs: []string{"authorizer"}, wantErr: "no endpoint group function"},
		{name: "empty", wantErr: "no endpoint group function"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			for _, d := range tt.dirs {
				if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// Files beside the function directories are not functions.
			if err := os.WriteFile(filepath.Join(root, "README.md"), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			got, err := discoverFunctions(root)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, g := range got.Groups {
				names = append(names, g.Name)
			}
			if !slices.Equal(names, tt.wantGroups) || got.Authorizer != tt.wantAuthorizer {
				t.Errorf("groups %v authorizer %v, want %v %v", names, got.Authorizer, tt.wantGroups, tt.wantAuthorizer)
			}
		})
	}
}

func TestParseAPIType(t *testing.T) {
	for in, want := range map[string]APIType{"": APIHTTP, "http": APIHTTP, "rest": APIREST} {
		if got, err := ParseAPIType(in); err != nil || got != want {
			t.Errorf("ParseAPIType(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := ParseAPIType("websocket"); err == nil {
		t.Error("ParseAPIType(websocket) accepted")
	}
}

// Every group path is distinct and under /api/v1 (but the console's own
// path), so each request reaches one function.
func TestEndpointGroupPathsAreDisjoint(t *testing.T) {
	seen := map[string]string{}
	for _, g := range endpointGroups {
		for _, p := range g.Paths {
			if !strings.HasPrefix(p, "/api/v1/") && p != routes.ConsolePrefix || strings.HasSuffix(p, "/") {
				t.Errorf("%s: path %q", g.Name, p)
			}
			if other, ok := seen[p]; ok {
				t.Errorf("%s and %s both serve %s", other, g.Name, p)
			}
			seen[p] = g.Name
		}
	}
}

// samconfig.toml points SAM at the template this app synthesizes.
func TestSamconfigNamesTheSynthesizedTemplate(t *testing.T) {
	data, err := os.ReadFile("../samconfig.toml")
	if err != nil {
		t.Fatal(err)
	}
	want := `"cdk.out/` + stackName + `.template.json"`
	n := 0
	for line := range strings.Lines(string(data)) {
		key, value, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(key) != "template_file" {
			continue
		}
		n++
		if got := strings.TrimSpace(value); got != want {
			t.Errorf("template_file = %s, want %s", got, want)
		}
	}
	if n == 0 {
		t.Error("samconfig.toml names no template_file")
	}
}

// Every route of the table reaches the function of its group, and the
// authorizer is skipped for exactly the table's public routes: the stack's
// routes agree with shared/httpapi/routes route by route.
func TestEndpointGroupsServeTheRouteTable(t *testing.T) {
	public := 0
	for _, r := range routes.Table {
		if r.Path == routes.MetricsPath {
			continue // not on Lambda: EMF (tableGroup)
		}
		// API Gateway prefers a route of its own to any {proxy+} route.
		var served []EndpointGroup
		for _, g := range endpointGroups {
			if slices.Contains(g.Routes, r.Method+" "+r.Path) {
				served = append(served, g)
			}
		}
		if len(served) == 0 {
			for _, g := range endpointGroups {
				for _, p := range g.Paths {
					if r.Path == p || strings.HasPrefix(r.Path, p+"/") {
						served = append(served, g)
					}
				}
			}
		}
		if len(served) != 1 || served[0].RouteGroup() != r.Group {
			t.Errorf("%s %s (group %s) reaches functions %v", r.Method, r.Path, r.Group, served)
		}
		if r.Access == routes.Public {
			public++
			if !isPublicRoute(r.Method + " " + routes.GatewayPath(r.Path)) {
				t.Errorf("public %s %s has no authorizer-free route", r.Method, r.Path)
			}
		}
	}
	n := 0
	for _, g := range endpointGroups {
		n += len(g.PublicGET)
	}
	if n != public {
		t.Errorf("%d authorizer-free routes, %d public routes in the table", n, public)
	}
	t.Logf("%d table routes over %d endpoint groups, %d public", len(routes.Table), len(endpointGroups), public)
}

// The long polls API Gateway can route apart have functions of their own,
// each in its own pool: the agents' claims, out of the graphs function's, and
// the config watchers' path, out of the config function's (Hiera's reads).
func TestLongPollsHaveTheirOwnFunction(t *testing.T) {
	own := map[Pool]EndpointGroup{}
	for _, g := range endpointGroups {
		if g.Pool == PoolGroups {
			continue
		}
		if other, dup := own[g.Pool]; dup {
			t.Fatalf("two functions in one long-poll pool: %s and %s", other.Name, g.Name)
		}
		own[g.Pool] = g
	}
	if len(own) != 2 {
		t.Errorf("%d long-poll pools, want 2 (claims, watches): %v", len(own), own)
	}
	claims := own[PoolLongPolls]
	if claims.Name != claimsName || claims.RouteGroup() != routes.GroupGraphs || !claims.LongPoll ||
		!slices.Equal(claims.Routes, []string{"POST /api/v1/clusters/{id}/nodes/{node}/claim"}) {
		t.Errorf("claims function %+v", claims)
	}
	watch := own[PoolWatches]
	if watch.Name != routes.GroupWatch || watch.RouteGroup() != routes.GroupWatch || !watch.LongPoll || len(watch.Routes) != 0 ||
		!slices.Equal(watch.RoutePaths(), []string{routes.WatchPrefix + "/{proxy+}"}) {
		t.Errorf("watch function %+v, gateway paths %v", watch, watch.RoutePaths())
	}
	// It serves exactly the table's watchers' route, which takes ?wait=.
	var served []string
	for _, r := range routes.Group(routes.GroupWatch) {
		served = append(served, r.ID)
		if !strings.HasPrefix(r.Path, routes.WatchPrefix+"/") || !slices.ContainsFunc(r.Query, func(p routes.Param) bool { return p.Name == "wait" }) {
			t.Errorf("watch route %s %s: not under %s with ?wait=", r.ID, r.Path, routes.WatchPrefix)
		}
	}
	if !slices.Equal(served, []string{"config.documents.watch"}) {
		t.Errorf("the watch group serves %v", served)
	}
}
