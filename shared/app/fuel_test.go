package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	api "github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/nailguntest"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// Fuel's real release graphs through the API, as an operator uses them: the
// three graphs of testdata/fuel uploaded unmodified, the release's role
// metadata, four nodes with their astute.yaml as ConfigDB documents, and the
// plans read back with serialized_tasks before a first run, after it with no
// change (only the unconditioned tasks run again), and after the glance
// settings changed. Every plan is compared with Nailgun's (testdata of the
// graphs package: an independent port of its serializer on python3-yaql).

// fuelDir is Fuel's own data, copied into the repository (testdata/fuel/README.md).
const fuelDir = "../../testdata/fuel"

// yamlJSON reads a YAML file as the CLI does (anchors resolved, a repeated
// key keeping its last value: fuel-library's tasks.yaml files have some) as JSON.
func yamlJSON(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := puppetyaml.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

type fuelCluster struct {
	Nodes []struct {
		UID   string          `json:"uid"`
		Roles []string        `json:"roles"`
		Data  json.RawMessage `json:"data"`
		Old   json.RawMessage `json:"old"`
		// Own is the node's own part of Data ($node): what the environment level's Common lacks.
		Own json.RawMessage `json:"own"`
	} `json:"nodes"`
	Common json.RawMessage `json:"common"`
}

// ownPart is what a node's document holds of its data: the top-level keys
// the cluster-wide part lacks or holds with another value (nailgun_cluster.py's own_part).
func ownPart(t *testing.T, data, common json.RawMessage) string {
	t.Helper()
	var d, c map[string]json.RawMessage
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(common, &c); err != nil {
		t.Fatal(err)
	}
	for k, v := range c {
		if bytes.Equal(d[k], v) {
			delete(d, k)
		}
	}
	return mustJSON(t, d)
}

// nailgunNode is what Nailgun's plan does on a node: the tasks it runs, and
// what the node's agent gets of each (parameters, fail_on_error).
type nailgunNode struct {
	Run    []string                   `json:"run"`
	Bodies map[string]json.RawMessage `json:"bodies"`
}

// nailgunRuns returns, per node, what Nailgun's plan runs for an old-data state.
func nailgunRuns(t *testing.T, state string, flags ...string) (fuelCluster, map[string]nailgunNode) {
	t.Helper()
	input := nailguntest.Python(t, nil, append([]string{filepath.Join(nailguntest.Testdata(), "nailgun_cluster.py"), "--old", state}, flags...)...)
	var cluster fuelCluster
	if err := json.Unmarshal(input, &cluster); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Nodes map[string]nailgunNode `json:"nodes"`
	}
	if err := json.Unmarshal(nailguntest.Python(t, input, filepath.Join(nailguntest.Testdata(), "nailgun_plan.py")), &plan); err != nil {
		t.Fatal(err)
	}
	runs := map[string]nailgunNode{}
	for _, n := range cluster.Nodes {
		runs[n.UID] = plan.Nodes[n.UID]
	}
	return cluster, runs
}

func TestFuelGraphsPlanAsNailgun(t *testing.T) {
	t.Parallel()
	// The stack's functions, each confined to its grants: planning reads the ConfigDB from the graphs function.
	url := apptest.LambdaServer(t, "admin", "fuel-test-password")
	c := &client{t: t, url: url, api: login(t, url, "admin", "fuel-test-password")}
	release := fmt.Sprintf(`{"name":"mitaka-9.0","version":"9.0",%s`, yamlJSON(t, filepath.Join(fuelDir, "release", "release-metadata.yaml"))[1:])
	c.do("POST", "/api/v1/releases", release, 201, `"roles_metadata"`)
	for _, graphType := range []string{"default", "provision", "deletion"} {
		tasks := yamlJSON(t, filepath.Join(fuelDir, "release", "tasks-"+graphType+".yaml"))
		c.do("POST", "/api/v1/releases/1/deployment_graphs/"+graphType, `{"tasks":`+string(tasks)+`}`, 201, `"relations"`)
	}
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("PUT", "/api/v1/clusters/1", `{"release_id":1,"plugins":[]}`, 200, "")

	first, want := nailgunRuns(t, "first")
	// The data as Nailgun split it: the cluster-wide part at the environment level, each node's own below.
	c.do("PUT", "/api/v1/config/environments/1/resources/astute/values", string(first.Common), 204, "")
	for _, n := range first.Nodes {
		body, _ := json.Marshal(map[string]any{"id": json.Number(n.UID), "fqdn": "node-" + n.UID + ".test.domain.local", "environment_id": 1, "roles": n.Roles})
		c.do("POST", "/api/v1/nodes", string(body), 201, "")
		c.do("PUT", "/api/v1/config/environments/1/nodes/"+n.UID+"/resources/astute/values", string(n.Own), 204, "")
	}
	c.checkRuns("before the first run", want)

	// The first run, every node's agent reporting every task done.
	var tx api.Transaction
	if err := json.Unmarshal([]byte(c.do("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 202, "")), &tx); err != nil {
		t.Fatal(err)
	}
	ran := c.drive(tx.UUID, first)
	t.Logf("first run: %v tasks run per node", ran)

	_, want = nailgunRuns(t, "same")
	c.checkRuns("after a run, nothing changed", want)

	glance, want := nailgunRuns(t, "glance")
	for i, n := range glance.Nodes {
		// The operator changes the glance settings: the side of the reference's change that is not what ran.
		for _, side := range []json.RawMessage{n.Data, n.Old} {
			if side != nil && !bytes.Equal(side, first.Nodes[i].Data) {
				c.do("PUT", "/api/v1/config/environments/1/nodes/"+n.UID+"/resources/astute/values", ownPart(t, side, first.Common), 204, "")
			}
		}
	}
	c.checkRuns("after the glance settings changed", want)
	c.checkExplained()

	// force ignores the old data: every node's plan is a first run's, on the changed data.
	_, want = nailgunRuns(t, "glance", "--force")
	c.checkRunsQuery("with force", "&force", want)
}

func (c *client) checkRuns(when string, want map[string]nailgunNode) {
	c.t.Helper()
	c.checkRunsQuery(when, "", want)
}

// checkRunsQuery compares serialized_tasks with Nailgun's plan: the tasks
// each node runs, and every task's parameters and fail_on_error as its
// agent gets them (placeholders formatted, yaql evaluated, defaults set).
func (c *client) checkRunsQuery(when, query string, want map[string]nailgunNode) {
	c.t.Helper()
	var got graphs.ClusterTasks
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/clusters/1/serialized_tasks?graph_type=default"+query, "", 200, "")), &got); err != nil {
		c.t.Fatal(err)
	}
	compared := 0
	for _, n := range got.Nodes {
		var run []string
		for _, task := range n.Tasks {
			id := task.Task.ID()
			run = append(run, id)
			var body, nailgun map[string]any
			if err := json.Unmarshal(task.Task, &body); err != nil {
				c.t.Fatal(err)
			}
			if err := json.Unmarshal(want[n.Node].Bodies[id], &nailgun); err != nil {
				c.t.Errorf("%s: node %s: nailgun does not run %s", when, n.Node, id)
				continue
			}
			for _, field := range []string{"parameters", "fail_on_error"} {
				compared++
				if g, w := mustJSON(c.t, yamlParsed(body[field])), mustJSON(c.t, yamlParsed(nailgun[field])); g != w {
					c.t.Errorf("%s: node %s task %s %s:\n got %s\nwant %s", when, n.Node, id, field, g, w)
				}
			}
		}
		slices.Sort(run)
		c.t.Logf("%s: node %s runs %d, skips %d (nailgun runs %d)", when, n.Node, len(run), len(n.Skipped), len(want[n.Node].Run))
		if !slices.Equal(run, want[n.Node].Run) {
			c.t.Errorf("%s: node %s runs %v\nnailgun runs %v", when, n.Node, run, want[n.Node].Run)
		}
	}
	c.t.Logf("%s: %d task fields compared with nailgun's", when, compared)
	if len(got.Nodes) != len(want) {
		c.t.Errorf("%s: nodes %d, want %d", when, len(got.Nodes), len(want))
	}
}

// drive plays each node's agent until the transaction ends, reporting every
// task it gets as done, and returns how many tasks each node ran.
func (c *client) drive(tx string, cluster fuelCluster) map[string]int {
	c.t.Helper()
	ran := map[string]int{}
	done := map[string]bool{}
	for round := 0; len(done) < len(cluster.Nodes); round++ {
		if round > 10000 {
			c.t.Fatalf("the run does not end: %v done", slices.Sorted(maps.Keys(done)))
		}
		for _, n := range cluster.Nodes {
			if done[n.UID] {
				continue
			}
			var claim graphs.Claim
			_, body := c.send(c.api, "POST", "/api/v1/transactions/"+tx+"/nodes/"+n.UID+"/claim", "")
			if err := json.Unmarshal([]byte(body), &claim); err != nil {
				c.t.Fatalf("claim: %s", body)
			}
			switch claim.Action {
			case graphs.ActionDone:
				done[n.UID] = true
			case graphs.ActionTask:
				report, _ := json.Marshal(graphs.TaskReport{Task: claim.Task.ID(), Status: graphs.StatusReady})
				c.do("POST", "/api/v1/transactions/"+tx+"/nodes/"+n.UID+"/result", string(report), 200, "")
				ran[n.UID]++
			}
		}
	}
	if status := c.do("GET", "/api/v1/transactions/"+tx, "", 200, ""); !strings.Contains(status, `"status":"ready"`) {
		c.t.Fatalf("transaction: %s", status)
	}
	return ran
}

// yamlParsed replaces the YAML documents of parameters (upload_file's data,
// from toYaml()) by the data they hold: tuningbox's YAML must parse to what
// PyYAML's does, not quote alike.
func yamlParsed(v any) any {
	params, ok := v.(map[string]any)
	if !ok {
		return v
	}
	out := maps.Clone(params)
	if doc, ok := params["data"].(string); ok {
		if parsed, err := puppetyaml.Decode([]byte(doc)); err == nil {
			out["data"] = parsed
		}
	}
	return out
}

// mustJSON is v as canonical JSON (sorted keys), for comparing decoded documents.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkExplained reads the plan after the glance change with ?explain: the
// glance task re-runs on the primary controller because changedAny saw
// $.glance change (old and new quoted), what placed it is the node's
// primary-controller tag, and a skipped task says its condition is false.
func (c *client) checkExplained() {
	c.t.Helper()
	var got api.ClusterTasks
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/clusters/1/serialized_tasks?graph_type=default&nodes=103&explain", "", 200, "")), &got); err != nil {
		c.t.Fatal(err)
	}
	var glance, skipped *api.Why
	for _, task := range got.Nodes[0].Tasks {
		if task.Task.ID() == "glance" {
			glance = task.Why
		}
	}
	for _, task := range got.Nodes[0].Skipped {
		if task.Task == "heat-db" {
			skipped = task.Why
		}
	}
	if glance == nil || skipped == nil {
		c.t.Fatalf("no explanation of glance or heat-db: %+v", got.Nodes[0])
	}
	if glance.Decision != "runs: its condition is true" || !strings.Contains(glance.Placed, `tags "primary-controller" matches tag "primary-controller"`) ||
		!strings.HasPrefix(glance.Data, "$%old is the data of the node's last successful run") {
		c.t.Errorf("glance on 103: %+v", glance)
	}
	found := false
	for _, call := range glance.Condition.Calls {
		if call.Arg == "$.glance" && call.Result == true && call.Old != nil && call.New != nil && *call.Old != *call.New {
			found = true
			// The key's value was written by the node's document version 2 (the change), and by version 1 when it was deployed.
			w, d := call.Written, call.Deployed
			if w == nil || d == nil || w.Key != "glance" || w.Version != 2 || d.Version != 1 || w.WrittenBy == nil || w.WrittenBy.Principal != "admin" ||
				!strings.Contains(w.Level, "103") {
				c.t.Errorf("who wrote $.glance: now %+v, deployed %+v", w, d)
			} else {
				c.t.Logf("$.glance written by %s at %s version %d (deployed: version %d)", w.WrittenBy.Principal, w.Level, w.Version, d.Version)
			}
		}
	}
	if !found {
		c.t.Errorf("glance's changedAny($.glance) is not explained: %+v", glance.Condition)
	}
	if skipped.Decision != "skipped: its condition is false" || skipped.Condition == nil || len(skipped.Condition.Calls) == 0 {
		c.t.Errorf("heat-db on 103: %+v", skipped)
	}
	c.t.Logf("glance on 103: %s; %s; %d data-diff calls", glance.Placed, glance.Decision, len(glance.Condition.Calls))
}
