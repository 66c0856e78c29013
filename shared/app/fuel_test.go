package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	api "github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// Fuel's real release graphs through the API, as an operator uses them: the
// three graphs of testdata/fuel uploaded unmodified, the release's role
// metadata, four nodes with their astute.yaml as ConfigDB documents, and the
// plans read back with serialized_tasks before a first run, after it with no
// change (only the unconditioned tasks run again), and after the glance
// settings changed. Every plan is compared with Nailgun's (testdata of the
// graphs package: an independent port of its serializer on python3-yaql).

const graphsTestdata = "../graphs/testdata"

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

func runPython(t *testing.T, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %v: %v\n%s\n(needs Debian's python3-yaql)", args, err, stderr.Bytes())
	}
	return out
}

type fuelCluster struct {
	Nodes []struct {
		UID   string          `json:"uid"`
		Roles []string        `json:"roles"`
		Data  json.RawMessage `json:"data"`
		Old   json.RawMessage `json:"old"`
	} `json:"nodes"`
}

// nailgunRuns returns, per node, the tasks Nailgun's plan runs for an old-data state.
func nailgunRuns(t *testing.T, state string) (fuelCluster, map[string][]string) {
	t.Helper()
	input := runPython(t, nil, graphsTestdata+"/nailgun_cluster.py", "--old", state)
	var cluster fuelCluster
	if err := json.Unmarshal(input, &cluster); err != nil {
		t.Fatal(err)
	}
	var plan struct {
		Nodes map[string]struct {
			Run []string `json:"run"`
		} `json:"nodes"`
	}
	if err := json.Unmarshal(runPython(t, input, graphsTestdata+"/nailgun_plan.py"), &plan); err != nil {
		t.Fatal(err)
	}
	runs := map[string][]string{}
	for _, n := range cluster.Nodes {
		runs[n.UID] = plan.Nodes[n.UID].Run
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
	for _, n := range first.Nodes {
		body, _ := json.Marshal(map[string]any{"id": json.Number(n.UID), "fqdn": "node-" + n.UID + ".test.domain.local", "environment_id": 1, "roles": n.Roles})
		c.do("POST", "/api/v1/nodes", string(body), 201, "")
		c.do("PUT", "/api/v1/config/environments/1/nodes/"+n.UID+"/resources/astute/values", string(n.Data), 204, "")
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
				c.do("PUT", "/api/v1/config/environments/1/nodes/"+n.UID+"/resources/astute/values", string(side), 204, "")
			}
		}
	}
	c.checkRuns("after the glance settings changed", want)

	// force ignores the old data: the plan is the first run's again.
	_, want = nailgunRuns(t, "first")
	c.checkRunsQuery("with force", "&force", want)
}

func (c *client) checkRuns(when string, want map[string][]string) {
	c.t.Helper()
	c.checkRunsQuery(when, "", want)
}

func (c *client) checkRunsQuery(when, query string, want map[string][]string) {
	c.t.Helper()
	var got graphs.ClusterTasks
	if err := json.Unmarshal([]byte(c.do("GET", "/api/v1/clusters/1/serialized_tasks?graph_type=default"+query, "", 200, "")), &got); err != nil {
		c.t.Fatal(err)
	}
	for _, n := range got.Nodes {
		var run []string
		for _, task := range n.Tasks {
			run = append(run, task.Task.ID)
		}
		slices.Sort(run)
		c.t.Logf("%s: node %s runs %d, skips %d (nailgun runs %d)", when, n.Node, len(run), len(n.Skipped), len(want[n.Node]))
		if !slices.Equal(run, want[n.Node]) {
			c.t.Errorf("%s: node %s runs %v\nnailgun runs %v", when, n.Node, run, want[n.Node])
		}
	}
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
				report, _ := json.Marshal(graphs.TaskReport{Task: claim.Task.ID, Status: graphs.StatusReady})
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
