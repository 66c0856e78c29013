package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/tuningbox/tuningbox/shared/app/keyspace"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// EndpointGroup is one Lambda function and the API paths routed to it.
type EndpointGroup struct {
	// Name is the function's directory under functions/ and its bootstrap's under bin/.
	Name string
	// Paths are the path prefixes the group serves: each prefix and everything below it.
	Paths []string
	// PublicGET are paths whose GET is answered without credentials, so their
	// GET route skips the authorizer (which refuses a request without an
	// Authorization header before the function could answer it).
	PublicGET []string
	// Routes are single routes ("POST /api/v1/clusters/{id}/nodes/{node}/claim")
	// the group serves besides Paths; API Gateway prefers them to a {proxy+}
	// route of another group.
	Routes []string
	// Serves is the route group whose handler the function mounts
	// (shared/httpapi/routes) and whose grants it has, when it is not Name.
	Serves string
	// LongPoll: the group holds requests (the ConfigDB's ?wait= reads up to
	// configdb.MaxWait, the agents' claims up to graphs.MaxClaimWait: 25 s,
	// both capped lower by the stack parameter LongPollMaxWait), so its
	// function may run up to longPollTimeout.
	LongPoll bool
	// Pool is the concurrency the function reserves: the groups' (PoolGroups),
	// or, for a function that holds only long polls, a pool of its own
	// (PoolLongPolls for the agents' claims, PoolWatches for the config
	// watchers), so that waiting requests never take the executions of
	// other routes.
	Pool Pool
	// MemoryMB is the function's memory (functionMemoryMB when 0).
	MemoryMB int
}

// RouteGroup is the route group the function serves.
func (g EndpointGroup) RouteGroup() string {
	if g.Serves != "" {
		return g.Serves
	}
	return g.Name
}

// endpointGroups lists every group the API serves, in routing order. Its
// paths and public routes come from the route table (shared/httpapi/routes),
// what each function may touch from shared/app/keyspace.
var endpointGroups = []EndpointGroup{
	// The ConfigDB, the public microversion and OpenAPI documents, resource
	// overrides and the blob sweep (POST /api/v1/store/gc, admins only).
	// A ?wait= on a document's own path still waits here (the level path in
	// its middle has any length: API Gateway cannot route it apart from the
	// reads of the same document); the client and CLI watch on the watch
	// group's path instead.
	tableGroup(routes.GroupConfig, true),
	// The config watchers: the document read on /api/v1/watch/..., in a
	// pool of its own.
	ownPool(tableGroup(routes.GroupWatch, true), PoolWatches),
	// A claim that reaches graphs' own routes (a trailing slash) may wait too.
	withMemory(tableGroup(routes.GroupGraphs, true), graphsMemoryMB),
	longPollGroup(claimsName, routes.GroupGraphs), // the agents' claims
	tableGroup(routes.GroupTemplates, false),
	tableGroup(routes.GroupAuth, false),
}

// claimsName is the function directory of the agents' claims.
const claimsName = "claims"

// graphsMemoryMB is the graphs function's memory, measured planning and
// deploying fuel-library's default graph on 1,000 nodes (.ci/bench_bootstraps.sh,
// docs/aws.md): at 256 MB it peaked at 374 MB resident and its slowest
// serialized_tasks page took 15.6 s; at 512 MB, 472-549 MB and 7.3 s; at
// 1,024 MB (0.58 vCPU), 604-624 MB and 3.6 s, within the 28 s timeout.
const graphsMemoryMB = 1024

func ownPool(g EndpointGroup, pool Pool) EndpointGroup {
	g.Pool = pool
	return g
}

func withMemory(g EndpointGroup, mb int) EndpointGroup {
	g.MemoryMB = mb
	return g
}

// tableGroup is the endpoint group of the table's group name, without
// GET /metrics: on Lambda it would read the counters of whichever instance
// answered, and the functions' EMF lines are the metrics there (CloudWatch
// sums them over every instance).
func tableGroup(name string, longPoll bool) EndpointGroup {
	paths := slices.DeleteFunc(routes.Prefixes(name), func(p string) bool { return p == routes.MetricsPath })
	return EndpointGroup{Name: name, Paths: paths, PublicGET: routes.PublicPaths(name), LongPoll: longPoll}
}

// longPollGroup is the function, named name, of the routes of group that
// take ?wait= and that API Gateway can route by method and path alone.
func longPollGroup(name, group string) EndpointGroup {
	var keys []string
	for _, r := range routes.Group(group) {
		if !r.Levels && slices.ContainsFunc(r.Query, func(p routes.Param) bool { return p.Name == "wait" }) {
			keys = append(keys, r.Method+" "+r.Path)
		}
	}
	return EndpointGroup{Name: name, Routes: keys, Serves: group, LongPoll: true, Pool: PoolLongPolls}
}

// RoutePaths are the group's API Gateway route paths (each takes ANY method):
// its prefixes and, below each, {proxy+}, where they reach routes of the table.
func (g EndpointGroup) RoutePaths() []string {
	var out []string
	for _, p := range g.Paths {
		out = append(out, routes.GatewayPaths(p)...)
	}
	return out
}

// authorizerName is the function directory of the Lambda request authorizer.
const authorizerName = keyspace.Authorizer

// gcName is the function directory of the scheduled blob garbage collector.
const gcName = keyspace.GC

// Functions is the set of functions a deployment contains.
type Functions struct {
	Groups []EndpointGroup
	// Authorizer puts the request authorizer in front of every route.
	Authorizer bool
	// GC runs the blob garbage collector on a schedule.
	GC bool
}

// Names lists the function names, the authorizer and the collector last.
func (f Functions) Names() []string {
	names := make([]string, 0, len(f.Groups)+2)
	for _, g := range f.Groups {
		names = append(names, g.Name)
	}
	if f.Authorizer {
		names = append(names, authorizerName)
	}
	if f.GC {
		names = append(names, gcName)
	}
	return names
}

// discoverFunctions returns the functions that exist as directories under
// functionsDir, so the stack deploys what the tree builds. A directory that no
// endpoint group claims is an error: it would otherwise never be deployed.
func discoverFunctions(functionsDir string) (Functions, error) {
	entries, err := os.ReadDir(functionsDir)
	if err != nil {
		return Functions{}, fmt.Errorf("list functions: %w", err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	var f Functions
	for _, g := range endpointGroups {
		if slices.Contains(dirs, g.Name) {
			f.Groups = append(f.Groups, g)
		}
	}
	f.Authorizer = slices.Contains(dirs, authorizerName)
	f.GC = slices.Contains(dirs, gcName)
	var unknown []error
	for _, d := range dirs {
		if d != authorizerName && d != gcName && !slices.ContainsFunc(endpointGroups, func(g EndpointGroup) bool { return g.Name == d }) {
			unknown = append(unknown, fmt.Errorf("%s has no endpoint group in infra/groups.go", filepath.Join(functionsDir, d)))
		}
	}
	if len(f.Groups) == 0 {
		unknown = append(unknown, fmt.Errorf("no endpoint group function under %s", functionsDir))
	}
	return f, errors.Join(unknown...)
}
