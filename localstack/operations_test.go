package localstack

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	tbclient "github.com/tuningbox/tuningbox/client"
)

// TestHTTPEveryOperation takes every operation of the OpenAPI document the
// server serves, each answered with a status the document declares for it,
// in one scenario on the fixture's environment. Through the local API
// Gateway this is what brings "gateway: N of M operations" to N = M on
// every run; it fails when the document has an operation it does not take,
// so a new route needs its step here.
func TestHTTPEveryOperation(t *testing.T) {
	f := newFixture(t)
	declared := documentStatuses(t, f.client)
	taken := map[string]bool{}
	// step sends a request of operation id through c and wants status, which
	// the document must declare for id.
	step := func(id string, c *client, status int, method, path string, body any, header ...string) response {
		t.Helper()
		statuses, ok := declared[id]
		if !ok {
			t.Fatalf("operation %s is not in the document", id)
		}
		if !slices.Contains(statuses, status) {
			t.Fatalf("%s: status %d is not one the document declares (%v)", id, status, statuses)
		}
		taken[id] = true
		return c.want(status, method, path, body, header...)
	}
	root, api, config := f.under(""), f.under("/api/v1"), f.client
	suffix := randomSuffix()
	v11 := []string{"OpenStack-API-Version", "config 1.1"}
	v13 := []string{"OpenStack-API-Version", "config 1.3"}

	step("versions", root, 200, "GET", "/api/v1/config", nil)
	step("openapi", root, 200, "GET", "/api/v1/openapi.json", nil)
	if os.Getenv("TUNINGBOX_GATEWAY") == "" {
		step("metrics", root, 200, "GET", "/metrics", nil)
	} else {
		// Not routed on Lambda, where the functions' EMF lines are the metrics:
		// API Gateway refuses it itself (TestGatewayRouteWalk).
		taken["metrics"] = true
	}

	// ConfigDB entities, on their own component and environment.
	var entity struct {
		ID   int64  `json:"id"`
		UUID string `json:"uuid"`
	}
	step("config.components.list", config, 200, "GET", "/components", nil)
	step("config.components.create", config, 201, "POST", "/components", map[string]any{"name": "op-" + suffix}).decode(t, &entity)
	component := fmt.Sprintf("/components/%d", entity.ID)
	step("config.components.get", config, 200, "GET", component, nil)
	step("config.components.update", config, 204, "PUT", component, map[string]any{"name": "op-put-" + suffix})
	step("config.components.patch", config, 204, "PATCH", component, map[string]any{"name": "op-patch-" + suffix})
	step("config.definitions.list", config, 200, "GET", "/resource_definitions", nil)
	step("config.definitions.create", config, 201, "POST", "/resource_definitions", map[string]any{"name": "extra", "component_id": entity.ID}).decode(t, &entity)
	definition := fmt.Sprintf("/resource_definitions/%d", entity.ID)
	step("config.definitions.get", config, 200, "GET", definition, nil)
	step("config.definitions.update", config, 204, "PUT", definition, map[string]any{"name": "extra-put"})
	step("config.definitions.patch", config, 204, "PATCH", definition+"/keys/set", `[["y",2]]`)
	step("config.definitions.delete", config, 204, "DELETE", definition, nil)
	step("config.components.delete", config, 204, "DELETE", component, nil)

	step("config.environments.list", config, 200, "GET", "/environments", nil)
	step("config.environments.create", config, 201, "POST", "/environments", map[string]any{
		"components": []string{f.component.Name}, "hierarchy_levels": []string{"a"},
	}).decode(t, &entity)
	env := fmt.Sprintf("/environments/%d", entity.ID)
	step("config.environments.get", config, 200, "GET", env, nil)
	step("config.environments.update", config, 204, "PUT", env, map[string]any{"hierarchy_levels": []string{"a", "b"}})
	step("config.environments.patch", config, 204, "PATCH", env, map[string]any{"components": []string{f.component.Name}})
	step("config.levels.list", config, 200, "GET", env+"/hierarchy_levels", nil)
	step("config.levels.get", config, 200, "GET", env+"/hierarchy_levels/a", nil)
	step("config.levels.update", config, 204, "PUT", env+"/hierarchy_levels/a", map[string]any{"name": "a2"})
	step("config.levels.patch", config, 204, "PATCH", env+"/hierarchy_levels/b", map[string]any{"name": "b2"})
	step("config.environments.delete", config, 204, "DELETE", env, nil)

	// Documents, their comparison, resource overrides and the blob sweep.
	doc := f.doc("astute", "values")
	overrides := f.doc("astute", "overrides")
	step("config.values.put", config, 204, "PUT", doc, `{"a":{"b":1,"c":3}}`)
	step("config.keys.set", config, 204, "PATCH", doc+"/keys/set", `[["a","b",2]]`)
	step("config.keys.delete", config, 204, "PATCH", doc+"/keys/delete", `[["a","c"]]`)
	step("config.values.get", config, 200, "GET", doc, nil)
	step("config.overrides.put", config, 204, "PUT", overrides, `{"a":{"b":5}}`)
	step("config.overrides.get", config, 200, "GET", overrides, nil)
	step("config.documents.effective", config, 200, "GET", doc+"?effective", nil)
	step("config.documents.versions", config, 200, "GET", doc+"/versions", nil)
	// The watchers' path (1.3): another ETag than the document's is answered at once.
	watch := f.under(tbclient.WatchPrefix + "/config")
	step("config.documents.watch", watch, 200, "GET", "/environments/"+f.env.UUID+"/resources/astute/values?effective&wait=1", nil,
		append(v13, "If-None-Match", `"other"`)...)
	// From 1.2 on, paths name the environment by its UUID.
	step("config.documents.history", config, 200, "GET", "/environments/"+f.env.UUID+"/resources/astute/values/history?key=a.b", nil, v13...)
	ref := map[string]any{"environment": f.env.UUID, "resource": "astute"} // from 1.2 on, bodies name entities by UUID
	step("config.diff", config, 200, "POST", "/diff", map[string]any{"from": withVersion(ref, 1), "to": ref}, v13...)
	step("config.overrides.apply", config, 200, "POST", "/overrides/apply", map[string]any{
		"catalog": []any{map[string]any{"type": "package", "title": "mc", "parameters": map[string]any{"ensure": "installed"}}},
		"data":    map[string]any{"configuration": map[string]any{"package": map[string]any{"mc": map[string]any{"ensure": "absent"}}}},
	})
	step("store.gc", api, 200, "POST", "/store/gc?min_age=1h", nil)
	// The embedded store streams a backup; on AWS the provider keeps the
	// backups (point-in-time recovery, S3 versioning) and the route is a 404.
	if r := api.do("GET", "/store/backup", nil); r.status != http.StatusOK && r.status != http.StatusNotFound {
		t.Fatalf("GET /store/backup = %d %s, want 200 (embedded store) or 404 (AWS)", r.status, r.body)
	}
	taken["store.backup"] = true
	// The fixture's environment moved through the API: into the same store, a copy under a new id.
	exported := step("store.environments.export", api, 200, "GET", fmt.Sprintf("/store/environments/%d/export", f.env.ID), nil)
	step("store.environments.import", api, 201, "POST", "/store/environments/import", string(exported.body), "Content-Type", "application/x-ndjson")

	// Releases and plugins with their graphs, then the fixture's environment as a cluster.
	tasks := map[string]any{"tasks": []map[string]any{{"id": "a", "type": "puppet"}}}
	owner := func(kind, path string) {
		t.Helper()
		graph := path + "/deployment_graphs/custom"
		step("graphs."+kind+".graphs.create", api, 201, "POST", graph, tasks)
		step("graphs."+kind+".graphs.list", api, 200, "GET", path+"/deployment_graphs", nil)
		step("graphs."+kind+".graphs.get", api, 200, "GET", graph, nil)
		step("graphs."+kind+".graphs.update", api, 200, "PUT", graph, tasks)
		step("graphs."+kind+".graphs.patch", api, 200, "PATCH", graph, map[string]any{"name": "Renamed"})
		step("graphs."+kind+".graphs.delete", api, 204, "DELETE", graph, nil)
	}
	var release, plugin struct {
		ID int64 `json:"id"`
	}
	step("graphs.releases.list", api, 200, "GET", "/releases", nil)
	step("graphs.releases.create", api, 201, "POST", "/releases", map[string]any{"name": "op-" + suffix, "version": "1"}).decode(t, &release)
	releasePath := fmt.Sprintf("/releases/%d", release.ID)
	step("graphs.releases.get", api, 200, "GET", releasePath, nil)
	step("graphs.releases.update", api, 200, "PUT", releasePath, map[string]any{"name": "op-" + suffix, "version": "1",
		"roles_metadata": map[string]any{"controller": map[string]any{"tags": []string{"controller"}}}})
	owner("releases", releasePath)
	step("graphs.releases.deploymentTasks", api, 200, "GET", releasePath+"/deployment_tasks", nil)
	step("graphs.plugins.list", api, 200, "GET", "/plugins", nil)
	step("graphs.plugins.create", api, 201, "POST", "/plugins", map[string]any{"name": "op-" + suffix, "version": "1.0.0"}).decode(t, &plugin)
	pluginPath := fmt.Sprintf("/plugins/%d", plugin.ID)
	step("graphs.plugins.get", api, 200, "GET", pluginPath, nil)
	step("graphs.plugins.update", api, 200, "PUT", pluginPath, map[string]any{"name": "op-" + suffix, "version": "1.0.1"})
	owner("plugins", pluginPath)

	cluster := fmt.Sprintf("/clusters/%d", f.env.ID)
	owner("clusters", cluster)
	step("graphs.clusters.get", api, 200, "GET", cluster, nil)
	step("graphs.clusters.put", api, 200, "PUT", cluster, map[string]any{"release_id": release.ID, "plugins": []int64{plugin.ID}})
	var graph struct {
		ID int64 `json:"id"`
	}
	step("graphs.clusters.graphs.create", api, 201, "POST", cluster+"/deployment_graphs/default", tasks).decode(t, &graph)
	graphPath := fmt.Sprintf("/graphs/%d", graph.ID)
	step("graphs.graphs.list", api, 200, "GET", "/graphs", nil)
	step("graphs.graphs.get", api, 200, "GET", graphPath, nil)
	step("graphs.graphs.update", api, 200, "PUT", graphPath, tasks)
	step("graphs.graphs.patch", api, 200, "PATCH", graphPath, map[string]any{"name": "Default"})
	for _, which := range []string{"merged", "own", "plugins", "release"} {
		path := cluster + "/deployment_tasks"
		if which != "merged" {
			path += "/" + which
		}
		step("graphs.clusters.tasks."+which, api, 200, "GET", path, nil)
	}
	step("graphs.clusters.serializedTasks", api, 200, "GET", cluster+"/serialized_tasks", nil)
	step("graphs.clusters.graphviz", api, 200, "GET", cluster+"/deploy_tasks/graph.gv", nil)

	// A deployment run by the node's agent to the end, and one stopped.
	f.registerNode(t)
	var tx struct {
		UUID string `json:"uuid"`
		Subs []struct {
			UUID string `json:"uuid"`
		} `json:"sub_transactions"`
	}
	step("graphs.graphs.execute", api, 202, "POST", "/graphs/execute", map[string]any{"cluster": f.env.ID, "graphs": []map[string]any{{"type": "default"}}}).decode(t, &tx)
	step("graphs.transactions.list", api, 200, "GET", fmt.Sprintf("/transactions?cluster_id=%d", f.env.ID), nil)
	step("graphs.transactions.get", api, 200, "GET", "/transactions/"+tx.UUID, nil)
	if len(tx.Subs) != 1 {
		t.Fatalf("transaction %+v: want one sub-transaction", tx)
	}
	step("graphs.transactions.plan", api, 200, "GET", "/transactions/"+tx.Subs[0].UUID+"/plan", nil)
	agent := fmt.Sprintf("/transactions/%s/nodes/%d", tx.UUID, f.node.ID)
	step("graphs.transactions.claim", api, 200, "POST", agent+"/claim", nil)
	step("graphs.transactions.result", api, 200, "POST", agent+"/result", map[string]any{"task": "a", "status": "ready"})
	step("graphs.clusters.deploy", api, 202, "PUT", cluster+"/deploy?graph_type=default", nil).decode(t, &tx)
	step("graphs.clusters.claim", api, 200, "POST", fmt.Sprintf("%s/nodes/%d/claim", cluster, f.node.ID), nil)
	step("graphs.transactions.stop", api, 200, "POST", "/transactions/"+tx.UUID+"/stop", nil)
	var again struct {
		UUID string `json:"uuid"`
	}
	step("graphs.transactions.retry", api, 202, "POST", "/transactions/"+tx.UUID+"/retry", map[string]any{}).decode(t, &again)
	api.want(http.StatusOK, "POST", "/transactions/"+again.UUID+"/stop", nil)
	step("graphs.graphs.delete", api, 204, "DELETE", graphPath, nil)
	api.want(http.StatusOK, "PUT", cluster, map[string]any{"release_id": nil, "plugins": []int64{}})
	step("graphs.plugins.delete", api, 204, "DELETE", pluginPath, nil)
	step("graphs.releases.delete", api, 204, "DELETE", releasePath, nil)

	// The node registry, deploy templates and deploy steps (microversion 1.1).
	var node struct {
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
	}
	trait := "CUSTOM_OP_" + strings.ToUpper(suffix)
	step("nodes.create", api, 201, "POST", "/nodes", map[string]any{"fqdn": "op-" + suffix + ".example.com", "environment_id": f.env.ID, "traits": []string{trait}}).decode(t, &node)
	nodePath := "/nodes/" + node.Node.UUID
	step("nodes.list", api, 200, "GET", "/nodes", nil)
	step("nodes.get", api, 200, "GET", nodePath, nil)
	step("nodes.update", api, 200, "PUT", nodePath, map[string]any{"roles": []string{"compute"}})
	steps := map[string]any{"steps": []map[string]any{{"interface": "deploy", "step": "deploy", "priority": 100, "args": map[string]any{}}}}
	defaults := fmt.Sprintf("/deploy_steps/defaults/%d", f.env.ID)
	step("steps.defaults.put", api, 200, "PUT", defaults, steps, v11...)
	step("steps.defaults.get", api, 200, "GET", defaults, nil, v11...)
	step("templates.create", api, 201, "POST", "/deploy_templates", map[string]any{"name": trait, "steps": []map[string]any{
		{"interface": "bios", "step": "apply_configuration", "priority": 150, "args": map[string]any{"settings": []any{}}},
	}}, v11...)
	step("templates.list", api, 200, "GET", "/deploy_templates", nil, v11...)
	step("templates.get", api, 200, "GET", "/deploy_templates/"+trait, nil, v11...)
	step("templates.patch", api, 200, "PATCH", "/deploy_templates/"+trait, `[{"op":"add","path":"/extra/a","value":1}]`, v11...)
	step("steps.node", api, 200, "POST", nodePath+"/deploy_steps", map[string]any{"instance_traits": []string{trait}}, v11...)
	step("nodes.validate", api, 200, "GET", nodePath+"/validate", nil, v11...)
	step("templates.delete", api, 204, "DELETE", "/deploy_templates/"+trait, nil, v11...)
	step("steps.defaults.delete", api, 204, "DELETE", defaults, nil, v11...)
	step("nodes.delete", api, 204, "DELETE", nodePath, nil)

	// Users, tokens and the audit log.
	user := "op-" + suffix
	step("users.list", api, 200, "GET", "/users", nil)
	step("users.create", api, 201, "POST", "/users", map[string]any{"name": user, "password": "op-password-" + suffix, "role": "observer"})
	step("users.get", api, 200, "GET", "/users/"+user, nil)
	var token struct {
		Token struct {
			ID string `json:"id"`
		} `json:"token"`
	}
	step("tokens.create", api, 201, "POST", "/tokens", map[string]any{"user": user, "description": "every operation"}).decode(t, &token)
	step("tokens.list", api, 200, "GET", "/tokens?user="+user, nil)
	step("tokens.revoke", api, 204, "DELETE", "/tokens/"+token.Token.ID, nil)
	step("users.delete", api, 204, "DELETE", "/users/"+user, nil)
	step("audit.list", api, 200, "GET", fmt.Sprintf("/audit?environment=%d", f.env.ID), nil)

	// The console and its sessions: its files are public; a session ends with its own token.
	step("console", root, 200, "GET", "/ui/index.html", nil)
	var session struct {
		Token string `json:"token"`
	}
	step("sessions.create", api, 201, "POST", "/sessions", nil).decode(t, &session)
	own := clientFor(t, f.client.server, tbclient.WithToken(session.Token)).under("/api/v1")
	step("sessions.delete", own, 204, "DELETE", "/sessions", nil)

	for _, id := range slices.Sorted(maps.Keys(declared)) {
		if !taken[id] {
			t.Errorf("operation %s of the document has no step", id)
		}
	}
	t.Logf("%d of %d operations answered a declared status", len(taken), len(declared))
}

// withVersion returns a copy of a document reference naming one of its versions.
func withVersion(ref map[string]any, version int) map[string]any {
	out := map[string]any{"version": version}
	for k, v := range ref {
		out[k] = v
	}
	return out
}

// documentStatuses reads the OpenAPI document the server serves: each
// operation's id with the statuses it declares.
func documentStatuses(t *testing.T, c *client) map[string][]int {
	t.Helper()
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Responses   map[string]json.RawMessage `json:"responses"`
		} `json:"paths"`
	}
	c.under("").want(http.StatusOK, "GET", "/api/v1/openapi.json", nil).decode(t, &doc)
	out := map[string][]int{}
	for _, item := range doc.Paths {
		for _, op := range item {
			for code := range op.Responses {
				if status, err := strconv.Atoi(code); err == nil {
					out[op.OperationID] = append(out[op.OperationID], status)
				}
			}
		}
	}
	return out
}
