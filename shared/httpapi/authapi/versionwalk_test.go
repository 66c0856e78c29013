package authapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// entity is one seeded entity's two names.
type entity struct{ id, uuid string }

// walkIDs are the seeded entities the walk puts into paths, by the literal
// path segment before the wildcard.
type walkIDs map[string]entity

// path fills a pattern's wildcards: entity ids from ids (the integer id, or
// the UUID when byUUID), fixed values for the others. It reports whether an
// entity with an integer id (not one named by UUID only) is in the path.
func (ids walkIDs) path(pattern string, byUUID bool) (string, bool) {
	pattern, query, hasQuery := strings.Cut(pattern, "?") // a route's When flag (?effective)
	segs := strings.Split(pattern, "/")
	hasEntity := false
	for i, s := range segs {
		if !strings.HasPrefix(s, "{") {
			continue
		}
		switch {
		case s == "{$}":
			segs[i] = ""
			continue
		case s == "{resource...}":
			segs[i] = "astute" // a document's resource, by name
			continue
		case s == "{kind}":
			segs[i] = "values"
			continue
		case s == "{type}":
			segs[i] = "default"
			continue
		case s == "{level}":
			segs[i] = "nodes"
			continue
		case s == "{name}":
			segs[i] = adminUser
			continue
		}
		prev := segs[i-1]
		if s == "{node}" {
			prev = "nodes"
		}
		e, ok := ids[prev]
		if !ok {
			segs[i] = "1"
			continue
		}
		hasEntity = hasEntity || e.id != e.uuid
		segs[i] = e.id
		if byUUID {
			segs[i] = e.uuid
		}
	}
	if hasQuery {
		return strings.Join(segs, "/") + "?" + query, hasEntity
	}
	return strings.Join(segs, "/"), hasEntity
}

// idKey reports whether a JSON key names an entity (or a list of them). A
// request id names a request, not an entity: it has no UUID form.
func idKey(k string) bool {
	if k == "request_id" {
		return false
	}
	return k == "id" || k == "uuid" || k == "components" || k == "plugins" || k == "environment" ||
		strings.HasSuffix(k, "_id") || strings.HasSuffix(k, "_ids") || strings.HasSuffix(k, "_uuid")
}

// nonUUIDs lists the entity ids in v that are not UUIDs. Task lists are
// skipped: a task's "id" is its name.
func nonUUIDs(v any, path string) []string {
	var bad []string
	switch t := v.(type) {
	case map[string]any:
		for k, item := range t {
			if k == "tasks" || k == "node_tasks" {
				continue
			}
			if idKey(k) {
				bad = append(bad, badIDs(item, path+"."+k)...)
				continue
			}
			bad = append(bad, nonUUIDs(item, path+"."+k)...)
		}
	case []any:
		for i, item := range t {
			bad = append(bad, nonUUIDs(item, fmt.Sprintf("%s[%d]", path, i))...)
		}
	}
	return bad
}

func badIDs(v any, path string) []string {
	switch t := v.(type) {
	case nil:
		return nil
	case string:
		if ident.IsUUID(t) {
			return nil
		}
	case []any:
		var bad []string
		for i, item := range t {
			bad = append(bad, badIDs(item, fmt.Sprintf("%s[%d]", path, i))...)
		}
		return bad
	}
	return []string{fmt.Sprintf("%s=%v", path, v)}
}

// idFormError: an answer refusing an id for its form, not for what it names.
func idFormError(a answer) bool {
	return a.status == http.StatusBadRequest && (strings.Contains(a.body, "Invalid uuid") ||
		strings.Contains(a.body, "Invalid id") || strings.Contains(a.body, "expected a positive integer"))
}

// authRoutes name users, tokens and audit records, which spec 004 does not cover.
func authRoute(pattern string) bool {
	for _, p := range []string{"/api/v1/users", "/api/v1/tokens", "/api/v1/audit"} {
		if strings.Contains(pattern, p) {
			return true
		}
	}
	return false
}

// TestEveryRouteAtEachMicroversion walks every route of the router at 1.0 and at
// the latest microversion over one seeded data set (environment, component,
// resource definition, node, release, plugin, cluster settings, graph,
// transaction, deploy template). Every read answers 200 by integer id at 1.0
// and by UUID at latest, where every entity id in the answer is a UUID and an
// integer path id answers 400 "Invalid uuid". Every write is sent with ids
// that name nothing: by UUID at latest and by integer at 1.0 it must not be
// refused for the id's form, and by integer at latest it must be.
func TestEveryRouteAtEachMicroversion(t *testing.T) {
	s := newStack(t)
	s.seedConfig(t)
	ids := s.seedWalk(t)
	router, err := app.Routes(s.backend, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	walked := map[string]int{}
	for _, pattern := range router.Patterns() {
		method, p, _ := strings.Cut(pattern, " ")
		if strings.HasSuffix(p, "/{$}") || authRoute(pattern) {
			continue // the same route with a trailing slash; or not an entity route
		}
		for _, version := range []string{"1.0", "latest"} {
			latest := version == "latest"
			at := func(cred credential) credential {
				return func(r *http.Request) { cred(r); r.Header.Set("OpenStack-API-Version", "config "+version) }
			}
			if method != http.MethodGet {
				bogus := walkIDs{}
				for k, e := range ids {
					bogus[k] = entity{id: "999999", uuid: uuid.NewString()}
					if e.id == e.uuid {
						bogus[k] = entity{id: bogus[k].uuid, uuid: bogus[k].uuid}
					}
				}
				target, hasEntity := bogus.path(p, latest)
				if !strings.Contains(p, "{") {
					continue // a create: no id in the path
				}
				walked[version]++
				walked[version+" writes"]++
				if a := s.do(t, at(admin), method, target, "{}"); idFormError(a) || a.status >= 500 {
					t.Errorf("%s %s at %s: %d %s", method, target, version, a.status, a.body)
				}
				// Graph executions still name nodes by the registry's integer id
				// (claims, results, plans): a {node} is not checked for its form.
				if latest && hasEntity && !strings.Contains(p, "{node}") {
					target, _ := bogus.path(p, false)
					if a := s.do(t, at(admin), method, target, "{}"); a.status != http.StatusBadRequest || !strings.Contains(a.body, "Invalid uuid") {
						t.Errorf("%s %s at latest: %d %s, want 400 Invalid uuid", method, target, a.status, a.body)
					}
				}
				continue
			}
			target, hasEntity := ids.path(p, latest)
			if strings.HasSuffix(p, "/history") {
				target += "?key=nova" // a key's history: the key is required
			}
			walked[version]++
			a := s.do(t, at(admin), method, target, nil)
			if a.status != http.StatusOK {
				if !latest && strings.Contains(a.body, "at API version 1.0") {
					continue // a route from a later microversion (deploy templates: 1.1)
				}
				if s.backend.Backup == nil && a.status == http.StatusNotFound && strings.Contains(a.body, "this store has no backup route") {
					continue // the in-memory store, like AWS's, has no backup to stream: its documented answer
				}
				t.Errorf("GET %s at %s: %d %s", target, version, a.status, a.body)
				continue
			}
			// Task lists name tasks, the root document the API version, the OpenAPI document routes: no entity ids.
			if !latest || strings.Contains(p, "_tasks") || p == routes.VersionsPath || p == routes.DocumentPath || !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				continue
			}
			var body any
			if err := json.Unmarshal([]byte(a.body), &body); err != nil {
				t.Fatalf("GET %s: %v", target, err)
			}
			if bad := nonUUIDs(body, ""); len(bad) > 0 {
				slices.Sort(bad)
				t.Errorf("GET %s at latest: ids that are no UUIDs: %s", target, strings.Join(bad, ", "))
			}
			if hasEntity {
				intTarget, _ := ids.path(p, false)
				if a := s.do(t, at(admin), method, intTarget, nil); a.status != http.StatusBadRequest || !strings.Contains(a.body, "Invalid uuid") {
					t.Errorf("GET %s at latest: %d %s, want 400 Invalid uuid", intTarget, a.status, a.body)
				}
			}
		}
	}
	t.Logf("walked %d routes at 1.0 and %d at latest (each: %d reads, %d writes with ids in the path; creates without one are not walked)",
		walked["1.0"], walked["latest"], walked["latest"]-walked["latest writes"], walked["latest writes"])
}

// seedWalk adds to seedConfig's data a release, a plugin, cluster 1's
// settings, a graph of each, a transaction, a deploy template and default
// deploy steps, and returns every entity's integer id and UUID
// (transactions and templates have only a UUID).
func (s *stack) seedWalk(t *testing.T) walkIDs {
	t.Helper()
	uuidOf := func(target string) string {
		var v struct {
			UUID string `json:"uuid"`
			Node struct {
				UUID string `json:"uuid"`
			} `json:"node"`
		}
		if err := json.Unmarshal([]byte(s.must(t, admin, "GET", target, nil, http.StatusOK).body), &v); err != nil {
			t.Fatalf("GET %s: %v", target, err)
		}
		for _, u := range []string{v.UUID, v.Node.UUID} {
			if ident.IsUUID(u) {
				return u
			}
		}
		t.Fatalf("GET %s: no uuid", target)
		return ""
	}
	s.must(t, admin, "POST", "/api/v1/releases", map[string]any{"name": "mitaka", "version": "9.0"}, http.StatusCreated)
	s.must(t, admin, "POST", "/api/v1/plugins", map[string]any{"name": "ldap", "version": "3.0.0"}, http.StatusCreated)
	s.must(t, admin, "PUT", "/api/v1/clusters/1", map[string]any{"release_id": 1, "plugins": []int{1}}, http.StatusOK)
	for _, owner := range []string{"clusters", "releases", "plugins"} {
		s.must(t, admin, "POST", "/api/v1/"+owner+"/1/deployment_graphs/default",
			map[string]any{"tasks": []any{map[string]any{"id": owner, "type": "shell", "role": "*", "parameters": map[string]any{"cmd": "true"}}}}, http.StatusCreated)
	}
	tx := s.must(t, admin, "PUT", "/api/v1/clusters/1/deploy", nil, http.StatusAccepted)
	var txBody struct {
		SubTransactions []struct {
			UUID string `json:"uuid"`
		} `json:"sub_transactions"`
	}
	if err := json.Unmarshal([]byte(tx.body), &txBody); err != nil || len(txBody.SubTransactions) != 1 {
		t.Fatalf("deploy: %v %s", err, tx.body)
	}
	sub := txBody.SubTransactions[0].UUID // a sub-transaction has a plan too
	tmpl := s.do(t, func(r *http.Request) { admin(r); r.Header.Set("OpenStack-API-Version", "config latest") }, "POST", "/api/v1/deploy_templates",
		map[string]any{"name": "CUSTOM_WALK", "steps": []any{map[string]any{"interface": "bios", "step": "apply", "args": map[string]any{}, "priority": 10}}})
	var tmplBody struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(tmpl.body), &tmplBody); err != nil || tmpl.status != http.StatusCreated {
		t.Fatalf("deploy template: %d %s", tmpl.status, tmpl.body)
	}
	env := uuidOf("/api/v1/config/environments/1")
	s.must(t, func(r *http.Request) { admin(r); r.Header.Set("OpenStack-API-Version", "config latest") }, "PUT", "/api/v1/deploy_steps/defaults/"+env,
		map[string]any{"steps": []any{map[string]any{"interface": "deploy", "step": "deploy_start", "args": map[string]any{}, "priority": 50}}}, http.StatusOK)
	return walkIDs{
		"components":           {"1", uuidOf("/api/v1/config/components/1")},
		"resource_definitions": {"1", uuidOf("/api/v1/config/resource_definitions/1")},
		"environments":         {"1", env},
		"defaults":             {"1", env},
		"clusters":             {"1", env},
		"nodes":                {"7", uuidOf("/api/v1/nodes/7")},
		"releases":             {"1", uuidOf("/api/v1/releases/1")},
		"plugins":              {"1", uuidOf("/api/v1/plugins/1")},
		"graphs":               {"1", uuidOf("/api/v1/graphs/1")},
		"transactions":         {sub, sub},
		"deploy_templates":     {tmplBody.UUID, tmplBody.UUID},
	}
}
