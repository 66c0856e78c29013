package graphsapi_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/graphsapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

type api struct {
	t *testing.T
	h http.Handler
	// version is the microversion requests ask for ("" = none: 1.0).
	version string
}

// newAPI serves the graphs routes over a fresh embedded store, with clusters
// 1 (nodes 1, 2) and 2 (node 3).
func newAPI(t *testing.T, opts ...graphs.Option) *api {
	t.Helper()
	b := mem.New()
	router := routes.NewRouter(1 << 20)
	graphsapi.Register(router, graphs.NewService(b.Index, b.Blobs, graphstest.EmptyData{Clusters: graphstest.Clusters{"1": graphstest.Nodes("1", "2"), "2": graphstest.Nodes("3")}}, opts...))
	return &api{t: t, h: routestest.Validating(t, httpapi.Wrap(router, httpapi.Options{}))}
}

type response struct {
	status int
	header http.Header
	body   string
}

func (a *api) do(method, path, body string) response {
	a.t.Helper()
	var req *http.Request
	if body == "" {
		req = httptest.NewRequest(method, path, nil)
	} else {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
	}
	if a.version != "" {
		req.Header.Set("OpenStack-API-Version", "config "+a.version)
	}
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	return response{status: rec.Code, header: rec.Header(), body: rec.Body.String()}
}

// expect sends a request and checks the status and, when want is set, that
// the body (of an error: its message) contains it.
func (a *api) expect(method, path, body string, status int, want string) response {
	a.t.Helper()
	r := a.do(method, path, body)
	if r.status != status {
		a.t.Fatalf("%s %s = %d %s, want %d", method, path, r.status, r.body, status)
	}
	text := r.body
	if status >= 400 {
		text = decode[httpapi.ErrorBody](a.t, r).Error.Message
	}
	if want != "" && !strings.Contains(text, want) {
		a.t.Fatalf("%s %s body %s\nwant it to contain %s", method, path, r.body, want)
	}
	return r
}

func decode[T any](t *testing.T, r response) T {
	t.Helper()
	var v T
	if err := json.Unmarshal([]byte(r.body), &v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	return v
}

func ids(t *testing.T, r response) []string {
	t.Helper()
	var tasks []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(r.body), &tasks); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
	out := make([]string, len(tasks))
	for i, task := range tasks {
		out[i] = task.ID
	}
	return out
}

func TestGraphLifecycle(t *testing.T) {
	a := newAPI(t)
	const g = "/api/v1/clusters/1/deployment_graphs/fixes"
	created := a.expect("POST", g, `{"name":"Fixes","tasks":[{"id":"a","type":"shell","role":"*","x-note":"kept"}]}`, 201,
		`"relations":[{"type":"fixes","model":"cluster","model_id":1}]`)
	if loc := created.header.Get("Location"); loc != "/api/v1/graphs/1" {
		t.Fatalf("Location = %q", loc)
	}
	a.expect("GET", "/api/v1/graphs/1", "", 200, `"x-note":"kept"`)
	a.expect("GET", g, "", 200, `"role":["*"]`)
	a.expect("POST", g, `{}`, 409, `Deployment graph with type "fixes" already exist.`)
	a.expect("GET", "/api/v1/clusters/1/deployment_graphs/other", "", 404, "Graph with type: other is not defined")
	a.expect("GET", "/api/v1/clusters/7/deployment_graphs/fixes", "", 404, "Cluster 7 not found")
	a.expect("POST", "/api/v1/releases/7/deployment_graphs/fixes", `{}`, 404, "Release 7 not found")
	a.expect("GET", "/api/v1/graphs/99", "", 404, "Graph 99 not found")
	a.expect("GET", "/api/v1/graphs/x", "", 400, `Invalid id x: expected an integer id or a UUID`)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/bad.type", `{}`, 400, "must match")

	a.expect("PATCH", g, `{"name":"Renamed"}`, 200, `"tasks":[{"id":"a"`)
	a.expect("PUT", "/api/v1/graphs/1", `{"tasks":[{"id":"b","type":"sync"}]}`, 200, `"name":"Renamed"`)
	a.expect("PUT", g, `{"tasks":[{"id":"b","type":"sync"},{"id":"c","type":"shell"},{"id":"b","type":"shell"}]}`, 400,
		"Tasks duplication found: b")
	a.expect("PUT", g, `{"tasks":[{"id":"b","type":"sync","version":"1"}]}`, 400, `tasks[0].version (task "b")`)
	a.expect("PUT", g, `{"tasks":[{"id":"b","type":"ansible"}]}`, 400, `tasks[0].type (task "b")`)
	a.expect("PUT", g, `{"tasks":[{"type":"shell"}]}`, 400, `tasks[0].id: is required`)
	a.expect("PUT", g, `{"relations":[]}`, 400, `unknown field "relations"`)
	a.expect("PUT", g, `{"on_success":{"node_attributes":{"status":"ready"},"x":1}}`, 400, `unknown field "x"`)
	a.expect("PUT", g, `{"name":5}`, 400, `field "name"`)
	a.expect("GET", "/api/v1/clusters/1/deployment_graphs", "", 200, `"name":"Renamed"`)
	a.expect("GET", "/api/v1/graphs?clusters_ids=1&graph_types=fixes", "", 200, `"id":1`)
	a.expect("GET", "/api/v1/graphs?cluster_ids=1", "", 400, `unknown query parameter "cluster_ids"`)
	a.expect("GET", "/api/v1/graphs?clusters_ids=x", "", 400, `Invalid id x`)

	a.expect("DELETE", g, "", 204, "")
	a.expect("DELETE", g, "", 404, "Graph with type: fixes is not defined")
	a.expect("DELETE", "/api/v1/graphs/1", "", 404, "Graph 1 not found")
}

func TestRegistriesAndClusters(t *testing.T) {
	a := newAPI(t)
	rel := a.expect("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 201, `"id":1`)
	if rel.header.Get("Location") != "/api/v1/releases/1" {
		t.Fatalf("Location = %q", rel.header.Get("Location"))
	}
	a.expect("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 409, "already exists")
	a.expect("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0","id":4}`, 400, `unknown field "id"`)
	a.expect("POST", "/api/v1/plugins", `{"name":"ldap","version":"3.0.0"}`, 201, `"name":"ldap"`)
	a.expect("GET", "/api/v1/plugins", "", 200, `[{"id":1,"uuid":"`)
	a.expect("GET", "/api/v1/plugins", "", 200, `"name":"ldap","version":"3.0.0"}]`)
	a.expect("GET", "/api/v1/plugins/2", "", 404, "Plugin 2 not found")
	a.expect("GET", "/api/v1/clusters/1", "", 200, `{"id":1,"release_id":null,"plugins":[]}`)
	a.expect("PUT", "/api/v1/clusters/1", `{"release_id":1,"plugins":[1]}`, 200, `{"id":1,"release_id":1,"plugins":[1]}`)
	a.expect("PUT", "/api/v1/clusters/1", `{"release_id":2}`, 404, "Release 2 not found")
	a.expect("PUT", "/api/v1/clusters/9", `{}`, 404, "Cluster 9 not found")
	a.expect("DELETE", "/api/v1/plugins/1", "", 409, "Plugin 1 is used by clusters 1")
	a.expect("POST", "/api/v1/releases/1/deployment_graphs/default", `{"tasks":[{"id":"r","type":"shell"}]}`, 201, "")
	a.expect("GET", "/api/v1/graphs?clusters_ids=1&fetch_related=1", "", 200, `"model":"release"`)
	a.expect("PUT", "/api/v1/clusters/1", `{}`, 200, "")
	a.expect("DELETE", "/api/v1/releases/1", "", 204, "")
	a.expect("GET", "/api/v1/graphs", "", 200, `[]`)
}

// setupMerge: release 1 with three tasks, plugins 1 (ldap) and 2 (contrail)
// enabled on cluster 1, and a cluster graph replacing "netconfig".
func setupMerge(a *api) {
	a.t.Helper()
	a.expect("POST", "/api/v1/releases", `{"name":"r","version":"1"}`, 201, "")
	a.expect("POST", "/api/v1/plugins", `{"name":"ldap","version":"3.0.0"}`, 201, "")
	a.expect("POST", "/api/v1/plugins", `{"name":"contrail","version":"5.0.0"}`, 201, "")
	a.expect("PUT", "/api/v1/clusters/1", `{"release_id":1,"plugins":[2,1]}`, 200, "")
	a.expect("POST", "/api/v1/releases/1/deployment_graphs/default", `{"tasks":[
		{"id":"hiera","type":"puppet","parameters":{"puppet_manifest":"hiera.pp"}},
		{"id":"netconfig","type":"puppet","requires":["hiera"],"parameters":{"puppet_manifest":"netconfig.pp"}},
		{"id":"ntp","type":"shell","requires":["hiera"]}]}`, 201, "")
	a.expect("POST", "/api/v1/plugins/1/deployment_graphs/default", `{"tasks":[
		{"id":"ldap","type":"puppet","requires":["netconfig"]},{"id":"ntp","type":"puppet","requires":["hiera"]}]}`, 201, "")
	a.expect("POST", "/api/v1/plugins/2/deployment_graphs/default", `{"tasks":[{"id":"contrail","type":"puppet","requires":["hiera"]}]}`, 201, "")
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[{"id":"netconfig","type":"shell","requires":["hiera"]}]}`, 201, "")
}

func TestMergedTasks(t *testing.T) {
	a := newAPI(t)
	setupMerge(a)
	tests := []struct {
		path string
		want string
	}{
		{"/api/v1/clusters/1/deployment_tasks", "netconfig ldap ntp contrail hiera"},
		{"/api/v1/clusters/1/deployment_tasks?graph_type=default", "netconfig ldap ntp contrail hiera"},
		{"/api/v1/clusters/1/deployment_tasks/own", "netconfig"},
		{"/api/v1/clusters/1/deployment_tasks/plugins", "ldap ntp contrail"},
		{"/api/v1/clusters/1/deployment_tasks/release", "hiera netconfig ntp"},
		{"/api/v1/clusters/1/deployment_tasks/own?graph_type=other", ""},
	}
	for _, tt := range tests {
		r := a.expect("GET", tt.path, "", 200, "")
		if got := strings.Join(ids(t, r), " "); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.path, got, tt.want)
		}
	}
	// Whole-task replacement: the cluster's netconfig has no parameters left from the release's.
	merged := decode[[]map[string]any](t, a.expect("GET", "/api/v1/clusters/1/deployment_tasks", "", 200, ""))
	if merged[0]["type"] != "shell" || merged[0]["parameters"] != nil {
		t.Fatalf("merged netconfig = %v", merged[0])
	}
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks?graph_type=other", "", 404, "Graph with type: other is not defined")
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks?type=default", "", 400, "unknown query parameter")
	a.expect("GET", "/api/v1/clusters/5/deployment_tasks", "", 404, "Cluster 5 not found")

	// Plugin overlap: contrail now also defines ldap.
	a.expect("PUT", "/api/v1/plugins/2/deployment_graphs/default", `{"tasks":[{"id":"ldap","type":"shell"}]}`, 200, "")
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks", "", 400,
		"Plugin contrail-5.0.0 is overlapping with plugin ldap-3.0.0 by introducing the same deployment task with id ldap")
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks/plugins", "", 400, "overlapping")
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks/release", "", 200, "")
}

func TestOrderingErrors(t *testing.T) {
	a := newAPI(t)
	setupMerge(a)
	const g = "/api/v1/clusters/1/deployment_graphs/default"
	// ?validate checks the merged result; without it, the graph is stored and the merged view reports.
	a.expect("PUT", g+"?validate", `{"tasks":[{"id":"hiera","type":"shell","requires":["ntp"]}]}`, 400,
		`Tasks form a cycle: "hiera" -> "ntp" -> "hiera"`)
	a.expect("PUT", g+"?validate=true", `{"tasks":[{"id":"fix","type":"shell","requires":["gone"],"required_for":["missing"]}]}`, 400,
		`Tasks depend on tasks that are not in the graph: "fix" is required for "missing"; "fix" requires "gone"`)
	a.expect("PUT", g+"?validate=maybe", `{}`, 400, `validate="maybe": expected a boolean`)
	a.expect("PUT", g+"?validate", `{"tasks":[{"id":"fix","type":"shell","requires":["ldap","contrail"]}]}`, 200, "")
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/extra?validate", `{"tasks":[{"id":"x","type":"shell","requires":["y"]}]}`, 400,
		`"x" requires "y"`)
	a.expect("PUT", g, `{"tasks":[{"id":"a","type":"shell","requires":["b"]},{"id":"b","type":"shell","requires":["a"]}]}`, 200, "")
	a.expect("GET", "/api/v1/clusters/1/deployment_tasks", "", 400, `Tasks form a cycle: "a" -> "b" -> "a"`)
	a.expect("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 400, "cycle")
	// A release graph is validated in the clusters built from it.
	a.expect("PUT", "/api/v1/releases/1/deployment_graphs/default?validate", `{"tasks":[]}`, 400, "in cluster 1:")
}

func TestGraphviz(t *testing.T) {
	a := newAPI(t)
	setupMerge(a)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/gv", `{"tasks":[
		{"id":"start","type":"stage"},{"id":"ctrl","type":"group","requires":["start"]},
		{"id":"one","type":"puppet","groups":["/ctrl/"],"requires":["start"]},{"id":"two","type":"shell","requires":["one"]},
		{"id":"old","type":"skipped","requires":["start"]}]}`, 201, "")
	const gv = "/api/v1/clusters/1/deploy_tasks/graph.gv?graph_type=gv"
	tests := []struct {
		query string
		want  []string
		not   []string
	}{
		{"", []string{`digraph "gv" {`, `"start" -> "ctrl";`, `"one" -> "ctrl";`, `"one" -> "two";`, `"old" [fillcolor=gray95`}, nil},
		{"&tasks=two", []string{`"one" [fillcolor=gray95`, "  \"two\";\n"}, nil},
		{"&parents_for=two", []string{`"start" -> "one";`, `"one" -> "two";`}, []string{`"ctrl"`, `"old"`}},
		{"&remove=stage,skipped", []string{`"one" -> "ctrl";`}, []string{`"start"`, `"old"`}},
		{"&tasks=one&remove=skipped", []string{`"one" -> "ctrl";`}, []string{`"two"`, `"old"`}},
	}
	for _, tt := range tests {
		r := a.expect("GET", gv+tt.query, "", 200, "")
		if ct := r.header.Get("Content-Type"); ct != "text/vnd.graphviz" {
			t.Fatalf("Content-Type = %q", ct)
		}
		for _, w := range tt.want {
			if !strings.Contains(r.body, w) {
				t.Errorf("%s: missing %s in\n%s", tt.query, w, r.body)
			}
		}
		for _, n := range tt.not {
			if strings.Contains(r.body, n) {
				t.Errorf("%s: unexpected %s in\n%s", tt.query, n, r.body)
			}
		}
	}
	a.expect("GET", gv+"&tasks=nope,one", "", 400, "Tasks nope are not present in deployment graph")
	a.expect("GET", gv+"&parents_for=nope", "", 400, "Task nope is not present in graph")
	a.expect("GET", gv+"&remove=puppet", "", 400, "Task types puppet do not exist")
	a.expect("GET", gv+"&colour=red", "", 400, "unknown query parameter")
	a.expect("GET", "/api/v1/clusters/1/deploy_tasks/graph.gv", "", 200, `"ldap"`)
	a.expect("GET", "/api/v1/clusters/1/deploy_tasks/graph.gv?graph_type=nope", "", 404, "Graph with type: nope is not defined")
}

type claim struct {
	Action string `json:"action"`
	Task   *struct {
		ID   string `json:"id"`
		Type string `json:"type"`
	} `json:"task"`
	DryRun bool `json:"dry_run"`
}

type transaction struct {
	UUID            string        `json:"uuid"`
	Name            string        `json:"name"`
	Status          string        `json:"status"`
	Message         string        `json:"message"`
	DryRun          bool          `json:"dry_run"`
	GraphType       string        `json:"graph_type"`
	SubTransactions []transaction `json:"sub_transactions"`
}

func (a *api) claim(tx, node string) claim {
	a.t.Helper()
	return decode[claim](a.t, a.expect("POST", "/api/v1/transactions/"+tx+"/nodes/"+node+"/claim", "", 200, ""))
}

func TestExecute(t *testing.T) {
	a := newAPI(t)
	setupMerge(a)
	const exec = "/api/v1/graphs/execute"
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/upgrade", `{"tasks":[{"id":"u","type":"shell"}]}`, 201, "")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default"}],"colour":"red"}`, 400, `unknown field "colour"`)
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default","roles":["x"]}]}`, 400, `unknown field "roles"`)
	a.expect("POST", exec, `{"cluster":1,"graphs":[]}`, 400, "at least one graph")
	a.expect("POST", exec, `{"cluster":1}`, 400, "at least one graph")
	a.expect("POST", exec, `{"graphs":[{"type":"default"}]}`, 400, "cluster: is required")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default","nodes":[1,7]}]}`, 400, "Nodes 7 are not members of cluster 1")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default","nodes":[true]}]}`, 400, "must be a string or an integer")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default","tasks":["zz"]}]}`, 400, "Tasks zz are not present")
	a.expect("POST", exec, `{"cluster":5,"graphs":[{"type":"default"}]}`, 404, "Cluster 5 not found")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"nope"}]}`, 404, "Graph with type: nope is not defined")
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default"}],"claim_timeout":"10m"}`, 400, "claim_timeout")

	// A dry run plans, stores the plans and ends at once: no agent, no lock.
	dry := decode[transaction](t, a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default"},{"type":"upgrade"}],"dry_run":true}`, 202, ""))
	if dry.Status != "ready" || !dry.DryRun || dry.SubTransactions[0].Status != "ready" || dry.SubTransactions[1].Status != "ready" {
		t.Fatalf("dry run = %+v", dry)
	}
	a.expect("GET", "/api/v1/transactions/"+dry.SubTransactions[0].UUID+"/plan", "", 200, `"ntp"`)
	if c := a.claim(dry.UUID, "2"); c.Action != "done" {
		t.Fatalf("a dry run hands out nothing: %+v", c)
	}

	r := a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"default","nodes":["2"],"tasks":["ntp"]},{"type":"upgrade"}],"noop_run":true}`, 202, "")
	tx := decode[transaction](t, r)
	if r.header.Get("Location") != "/api/v1/transactions/"+tx.UUID {
		t.Fatalf("Location = %q", r.header.Get("Location"))
	}
	if tx.Name != "deploy" || tx.Status != "running" || !tx.DryRun || len(tx.SubTransactions) != 2 ||
		tx.SubTransactions[0].Status != "running" || tx.SubTransactions[0].Name != "deployment" || tx.SubTransactions[1].Status != "pending" {
		t.Fatalf("transaction = %+v", tx)
	}
	a.expect("POST", exec, `{"cluster":1,"graphs":[{"type":"upgrade"}]}`, 409, "Cluster 1 already runs transaction "+tx.UUID)
	// Another cluster is not blocked.
	a.expect("POST", "/api/v1/clusters/2/deployment_graphs/default", `{"tasks":[{"id":"x","type":"shell"}]}`, 201, "")
	other := decode[transaction](t, a.expect("POST", exec, `{"cluster":2,"graphs":[{"type":"default"}]}`, 202, ""))

	plan := decode[graphs.Plan](t, a.expect("GET", "/api/v1/transactions/"+tx.SubTransactions[0].UUID+"/plan", "", 200, ""))
	types := map[string]string{}
	for _, task := range plan.Tasks {
		types[task.ID] = task.Type
	}
	if types["ntp"] != "puppet" || types["hiera"] != "skipped" || types["ldap"] != "skipped" || strings.Join(plan.Nodes, ",") != "2" {
		t.Fatalf("plan = %+v", plan)
	}
	// Node 1 takes no part in "default" but runs "upgrade": it waits.
	if c := a.claim(tx.UUID, "1"); c.Action != "wait" {
		t.Fatalf("node 1 claim = %+v", c)
	}
	c := a.claim(tx.UUID, "2")
	if c.Action != "task" || c.Task.ID != "ntp" || !c.DryRun {
		t.Fatalf("node 2 claim = %+v", c)
	}
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/2/result", `{"task":"hiera","status":"ready"}`, 409, "Task hiera is not running on node 2")
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/2/result", `{"task":"ntp","status":"fine"}`, 400, "is not one of ready, skipped, error")
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/2/result", `{"task":"ntp","status":"ready"}`, 200, `"status":"ready"`)
	if c := a.claim(tx.UUID, "1"); c.Action != "task" || c.Task.ID != "u" {
		t.Fatalf("node 1 claim after default = %+v", c)
	}
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/1/result", `{"task":"u","status":"ready"}`, 200, "")
	if c := a.claim(tx.UUID, "1"); c.Action != "done" {
		t.Fatalf("node 1 claim after its last task = %+v", c)
	}
	if got := decode[transaction](t, a.expect("GET", "/api/v1/transactions/"+tx.UUID, "", 200, "")); got.SubTransactions[1].Status != "running" {
		t.Fatalf("upgrade must wait for node 2: %+v", got)
	}
	if c := a.claim(tx.UUID, "2"); c.Action != "task" || c.Task.ID != "u" {
		t.Fatalf("node 2 claim for upgrade = %+v", c)
	}
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/2/result", `{"task":"u","status":"ready"}`, 200, "")
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/9/claim", "", 404, "Node 9 is not part of transaction")
	a.expect("POST", "/api/v1/transactions/not-a-uuid/nodes/1/claim", "", 400, "Invalid uuid not-a-uuid")
	a.expect("GET", "/api/v1/transactions/0190c4c2-7a6e-7c8e-9a51-8a1f6f1c2d3e", "", 404, "not found")

	if got := decode[transaction](t, a.expect("GET", "/api/v1/transactions/"+tx.UUID, "", 200, "")); got.Status != "ready" {
		t.Fatalf("transaction = %+v", got)
	}
	a.expect("GET", "/api/v1/transactions/"+tx.SubTransactions[0].UUID, "", 200, `"nodes":[{"node":"2","status":"ready"`)
	history := decode[[]transaction](t, a.expect("GET", "/api/v1/transactions?cluster_id=1", "", 200, ""))
	if len(history) != 2 || history[0].UUID != tx.UUID || history[1].UUID != dry.UUID || history[1].Message != graphs.DryRunMessage {
		t.Fatalf("history (newest first: the run, the dry run) = %+v", history)
	}
	running := decode[[]transaction](t, a.expect("GET", "/api/v1/transactions?status=running", "", 200, ""))
	if len(running) != 1 || running[0].UUID != other.UUID {
		t.Fatalf("running = %+v", running)
	}
	a.expect("GET", "/api/v1/transactions?status=done", "", 400, "is not one of")
	a.expect("POST", "/api/v1/transactions/"+other.UUID+"/stop", "", 200, `"message":"Stopped"`)
	a.expect("POST", "/api/v1/transactions/"+other.UUID+"/stop", "", 409, "is not running")
}

func TestAbortChain(t *testing.T) {
	a := newAPI(t)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/first", `{"tasks":[{"id":"a","type":"shell"},{"id":"b","type":"shell","requires":["a"]}]}`, 201, "")
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/second", `{"tasks":[{"id":"c","type":"shell"}]}`, 201, "")
	tx := decode[transaction](t, a.expect("POST", "/api/v1/graphs/execute",
		`{"cluster":1,"graphs":[{"type":"first"},{"type":"second"},{"type":"first"}]}`, 202, ""))
	if c := a.claim(tx.UUID, "1"); c.Task.ID != "a" {
		t.Fatalf("claim = %+v", c)
	}
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/1/result", `{"task":"a","status":"error","message":"exit 2"}`, 200, `"status":"error"`)
	got := decode[transaction](t, a.expect("GET", "/api/v1/transactions/"+tx.UUID, "", 200, ""))
	const failed = "Task a failed on node 1: exit 2 (node 1 is in no fault-tolerance group: it is critical)"
	if got.Status != "error" || got.Message != failed {
		t.Fatalf("parent = %+v", got)
	}
	want := []struct{ status, message string }{{"error", failed}, {"error", "Aborted"}, {"error", "Aborted"}}
	for i, w := range want {
		if s := got.SubTransactions[i]; s.Status != w.status || s.Message != w.message {
			t.Fatalf("sub %d = %+v, want %+v", i, s, w)
		}
	}
	if c := a.claim(tx.UUID, "2"); c.Action != "done" {
		t.Fatalf("claim after abort = %+v", c)
	}
	a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/2/result", `{"task":"a","status":"ready"}`, 409, "is not running (status: error)")
	a.expect("GET", "/api/v1/transactions/"+tx.UUID, "", 200, `"failed_nodes":["1"],"failed_tasks":[{"node":"1","task":"a"}]`)
	// Running again what failed or did not run: the cluster is free for it.
	again := decode[transaction](t, a.expect("POST", "/api/v1/transactions/"+tx.UUID+"/retry", `{"failed":true}`, 202, ""))
	if len(again.SubTransactions) != 3 || again.Status != "running" {
		t.Fatalf("retry = %+v", again)
	}
	a.expect("POST", "/api/v1/transactions/"+again.UUID+"/retry", `{}`, 409, "is still running")
}

// TestConcurrentExecuteHTTP: of simultaneous executions on one cluster exactly one gets 202.
func TestConcurrentExecuteHTTP(t *testing.T) {
	a := newAPI(t)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[{"id":"a","type":"shell"}]}`, 201, "")
	const n = 10
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req := httptest.NewRequest("POST", "/api/v1/graphs/execute", strings.NewReader(`{"cluster":1,"graphs":[{"type":"default"}]}`))
			rec := httptest.NewRecorder()
			a.h.ServeHTTP(rec, req)
			statuses[i] = rec.Code
		}()
	}
	wg.Wait()
	count := map[int]int{}
	for _, s := range statuses {
		count[s]++
	}
	if count[202] != 1 || count[409] != n-1 {
		t.Fatalf("statuses = %v", count)
	}
}

// Spec 002's endpoints: deploy, the release's deployment_tasks,
// serialized_tasks, trailing slashes; and the agent's claim by cluster.
func TestSpec002Endpoints(t *testing.T) {
	a := newAPI(t)
	a.expect("POST", "/api/v1/releases/", `{"name":"r","version":"1"}`, 201, "")
	a.expect("POST", "/api/v1/releases/1/deployment_graphs/default/", `{"tasks":[{"id":"b","type":"shell","requires":["a"]},{"id":"a","type":"shell"}]}`, 201, "")
	// As stored: a release graph alone need not order (it may require plugin tasks).
	if got := ids(t, a.expect("GET", "/api/v1/releases/1/deployment_tasks/?graph_type=default", "", 200, "")); strings.Join(got, ",") != "b,a" {
		t.Fatalf("release tasks = %v", got)
	}
	a.expect("GET", "/api/v1/releases/1/deployment_tasks?graph_type=other", "", 200, "[]")
	a.expect("GET", "/api/v1/releases/9/deployment_tasks", "", 404, "Release 9 not found")
	a.expect("PUT", "/api/v1/clusters/1", `{"release_id":1}`, 200, "")

	a.expect("GET", "/api/v1/clusters/1/serialized_tasks/?nodes=2", "", 200, `"nodes":[{"node":"2","roles":[],"tasks":[{"task":{"fail_on_error":true,"id":"a","parameters":{"cwd":"/"},"type":"shell"`)
	a.expect("GET", "/api/v1/clusters/1/serialized_tasks?graph_type=x", "", 404, "Graph with type: x is not defined")

	// Idle: no transaction runs on the cluster.
	a.expect("POST", "/api/v1/clusters/1/nodes/1/claim?wait=0", "", 200, `"action":"idle"`)
	a.expect("POST", "/api/v1/clusters/1/nodes/1/claim?wait=x", "", 400, "expected a number of seconds")
	a.expect("PUT", "/api/v1/clusters/1/deploy?graph_type=nope", "", 404, "Graph with type: nope is not defined")
	a.expect("PUT", "/api/v1/clusters/1/deploy?nodes=1,9", "", 400, "Nodes 9 are not members of cluster 1")
	a.expect("PUT", "/api/v1/clusters/1/deploy?claim_timeout=soon", "", 400, `claim_timeout="soon": expected a number of seconds`)
	a.expect("PUT", "/api/v1/clusters/1/deploy?claim_timeout=-1", "", 400, "claim_timeout: must be a number of seconds above 0")
	r := a.expect("PUT", "/api/v1/clusters/1/deploy/?nodes=1&noop_run&claim_timeout=90", "", 202, `"claim_timeout":90`)
	tx := decode[transaction](t, r)
	if !tx.DryRun || tx.SubTransactions[0].GraphType != "default" || r.header.Get("Location") != "/api/v1/transactions/"+tx.UUID {
		t.Fatalf("deploy = %+v", tx)
	}
	c := decode[claim](t, a.expect("POST", "/api/v1/clusters/1/nodes/1/claim", "", 200, ""))
	if c.Action != "task" || c.Task.ID != "a" {
		t.Fatalf("claim = %+v", c)
	}
	// Node 2 takes no part in this transaction.
	a.expect("POST", "/api/v1/clusters/1/nodes/2/claim", "", 200, `"action":"done","transaction":"`+tx.UUID)
}

// Every request that plans answers a budget it ran out of with the budget's
// name: 400 for one expression's, 503 for the request's time (never a 400
// quoting the context's error).
func TestPlanBudgetsAnswered(t *testing.T) {
	doubling := `['a']` + strings.Repeat(".select($+$)", 33) + ".len() > 0"
	a := newAPI(t)
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[{"id":"t","type":"shell","condition":{"yaql_exp":"`+doubling+`"}}]}`, 201, "")
	a.expect("GET", "/api/v1/clusters/1/serialized_tasks", "", 400, "exceeded its byte budget")
	a.expect("PUT", "/api/v1/clusters/1/deploy", "", 400, "exceeded its byte budget")
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/other?validate", `{"tasks":[{"id":"t","type":"shell","condition":{"yaql_exp":"unknown(1)"}}]}`, 400, `unknown function "unknown"`)

	a = newAPI(t, graphs.WithPlanLimits(graphs.PlanLimits{Budget: yaql.BudgetLimits{Time: time.Nanosecond}}))
	a.expect("POST", "/api/v1/clusters/1/deployment_graphs/default", `{"tasks":[{"id":"t","type":"shell","condition":{"yaql_exp":"true"}}]}`, 201, "")
	a.expect("GET", "/api/v1/clusters/1/serialized_tasks", "", 503, "time budget (1ns")
	a.expect("PUT", "/api/v1/clusters/1/deploy", "", 503, "time budget (1ns")
	a.expect("PUT", "/api/v1/clusters/1/deployment_graphs/default?validate", `{"tasks":[{"id":"t","type":"shell","condition":{"yaql_exp":"true"}}]}`, 503, "time budget (1ns")
}
