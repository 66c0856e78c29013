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
	// LongPoll: the group holds requests (the ConfigDB's ?wait= reads up to
	// configdb.MaxWait, the agents' claims up to graphs.MaxClaimWait: 25 s,
	// both capped lower by the stack parameter LongPollMaxWait), so its
	// function may run up to longPollTimeout.
	LongPoll bool
}

// endpointGroups lists every group the API serves, in routing order. Its
// paths and public routes come from the route table (shared/httpapi/routes),
// what each function may touch from shared/app/keyspace.
var endpointGroups = []EndpointGroup{
	// The ConfigDB, the public microversion and OpenAPI documents, resource
	// overrides and the blob sweep (POST /api/v1/store/gc, admins only).
	tableGroup(routes.GroupConfig, true),
	tableGroup(routes.GroupGraphs, true), // agents' claims wait
	tableGroup(routes.GroupTemplates, false),
	tableGroup(routes.GroupAuth, false),
}

// tableGroup is the endpoint group of the table's group name.
func tableGroup(name string, longPoll bool) EndpointGroup {
	return EndpointGroup{Name: name, Paths: routes.Prefixes(name), PublicGET: routes.PublicPaths(name), LongPoll: longPoll}
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
