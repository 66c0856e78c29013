package agenttest

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// placeholder is a {NAME} Nailgun formatted (awk's programs keep their braces).
var placeholder = regexp.MustCompile(`\{[A-Z_]+\}`)

// fuelData is the repository's copy of real Fuel data (testdata/fuel).
const fuelData = "../../testdata/fuel"

// stubbed are the commands fuel-library's tasks call (puppet apply, rsync
// for sync, and the programs of its shell tasks): in the sandbox each is a
// stub that records how it was called.
var stubbed = []string{"puppet", "rsync", "sh", "ruby", "ln", "timeout", "ntpdate", "awk", "nova-manage"}

// fuelNode is a node of the Fuel cluster: its astute.yaml, and its agent's login.
type fuelNode struct {
	node
	data map[string]any
}

// fuelCluster is the shared cluster (the three real nodes of testdata/fuel,
// plus a second controller copied from the primary, as nailgun_cluster.py
// builds it) and the Fuel master as a node with the role master.
func fuelCluster(t *testing.T) (nodes []fuelNode, master fuelNode, common map[string]any) {
	t.Helper()
	var datas []map[string]any
	for _, name := range []string{"neut_vlan.ceph-ceph-osd.yaml", "neut_vlan.ceph-compute.yaml", "neut_vlan.ceph-primary-controller.yaml"} {
		raw, err := os.ReadFile(filepath.Join(fuelData, "hiera", name))
		must(t, err)
		v, err := puppetyaml.Decode(raw)
		must(t, err)
		datas = append(datas, v.(map[string]any))
	}
	second := maps.Clone(datas[2])
	second["uid"], second["roles"] = "104", []any{"controller"}
	datas = append(datas, second)
	// The cluster-wide part: the top-level keys every node has alike (Nailgun's common attributes).
	common = map[string]any{}
	for k, v := range datas[0] {
		same := true
		for _, d := range datas[1:] {
			same = same && reflect.DeepEqual(d[k], v)
		}
		if same {
			common[k] = v
		}
	}
	for _, d := range datas {
		uid := d["uid"].(string)
		var roles []string
		for _, r := range d["roles"].([]any) {
			roles = append(roles, r.(string))
		}
		nodes = append(nodes, fuelNode{node{uid, "node-" + uid + ".fuel.test", strings.Join(roles, ","), "agent-" + uid, "node-" + uid + "-secret-pw"}, d})
	}
	master = fuelNode{node{"1", "fuel-master.fuel.test", "master", "agent-master", "master-secret-pw"}, nil}
	return nodes, master, common
}

// ownPart is what a node's own document holds: the keys common lacks or holds otherwise.
func ownPart(data, common map[string]any) map[string]any {
	own := map[string]any{}
	for k, v := range data {
		if c, ok := common[k]; !ok || !reflect.DeepEqual(c, v) {
			own[k] = v
		}
	}
	return own
}

// fuel-library's default graph, unmodified, run by real agents on the shared
// Fuel cluster and the Fuel master: every task type runs for real in a
// sandbox (files below each node's root; the programs tasks call are stubs
// on the PATH that record their arguments), each agent gets its tasks as
// Nailgun sent them, and the run ends ready with no placeholder left.
func TestFuelDefaultGraphRuns(t *testing.T) {
	if os.Getenv("TUNINGBOX_AGENT_TEST") != "1" {
		t.Skip("set TUNINGBOX_AGENT_TEST=1 (agent/test/run.sh) to run agents")
	}
	dir := t.TempDir()
	s := startServer(t)
	api := s.api(t)
	do := func(method, path string, body any) {
		t.Helper()
		if _, err := api.Do(t.Context(), client.Request{Method: method, Path: path, Body: body}); err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
	}
	metadata, err := os.ReadFile(filepath.Join(fuelData, "release", "release-metadata.yaml"))
	must(t, err)
	meta, err := puppetyaml.Decode(metadata)
	must(t, err)
	release := meta.(map[string]any)
	release["name"], release["version"] = "mitaka-9.0", "9.0"
	do("POST", "/api/v1/releases", release)
	s.cli(t, "graph", "upload", "-r", "1", "-t", "default", "-f", filepath.Join(fuelData, "release", "tasks-default.yaml"))
	s.cli(t, "comp", "create", "--name", "fuel", "--definition", "astute")
	s.cli(t, "env", "create", "--id", cluster, "--components", "fuel", "--levels", "nodes")
	s.cli(t, "env", "update", cluster, "--release", "1")

	nodes, master, common := fuelCluster(t)
	do("PUT", "/api/v1/config/environments/1/resources/astute/values", common)
	for _, n := range append(nodes, master) {
		do("POST", "/api/v1/nodes", map[string]any{"id": json.Number(n.id), "fqdn": n.fqdn, "environment_id": 1, "roles": strings.Split(n.role, ",")})
		if n.data != nil {
			do("PUT", "/api/v1/config/environments/1/nodes/"+n.id+"/resources/astute/values", ownPart(n.data, common))
		}
		if _, err := api.CreateUser(t.Context(), client.NewUser{Name: n.user, Password: n.password, Role: "node", Node: n.fqdn}); err != nil {
			t.Fatal(err)
		}
	}
	clusterID := common["cluster"].(map[string]any)["id"]

	// The sandbox: a root per node, the stubs, and on the master what
	// generate_keys (a stub here) would have written.
	stubs, calls := filepath.Join(dir, "stubs"), filepath.Join(dir, "calls.log")
	must(t, os.MkdirAll(stubs, 0o755))
	// A stub records its call, and fails it when STUB_FAIL names the node and a word of its arguments.
	stub := "#!/bin/sh\nprintf '%s %s %s\\n' \"$TUNINGBOX_NODE_ID\" \"${0##*/}\" \"$*\" >> \"$STUB_CALLS\"\n" +
		"case \"$TUNINGBOX_NODE_ID $*\" in \"${STUB_FAIL%% *} \"*\"${STUB_FAIL#* }\"*) echo injected failure >&2; exit 1;; esac\n"
	for _, name := range stubbed {
		must(t, os.WriteFile(filepath.Join(stubs, name), []byte(stub), 0o755))
	}
	root := func(n node) string { return filepath.Join(dir, "roots", n.id) }
	keys := filepath.Join(root(master.node), "var/lib/fuel/keys", toString(clusterID))
	for _, key := range []string{"nova/nova.pub", "nova/nova", "mysql/mysql.pub", "mysql/mysql", "mongodb/mongodb.key", "fernet-keys/0", "fernet-keys/1"} {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(keys, key)), 0o700))
		must(t, os.WriteFile(filepath.Join(keys, key), []byte(key+"\n"), 0o600))
	}

	// runAgents runs every node's agent once through the run tx, a stub failing as fail says.
	runAgents := func(tx, fail string) (transaction, time.Duration, []error) {
		start := time.Now()
		var agents []*agent
		for _, n := range append(nodes, master) {
			agents = append(agents, s.startAgentEnv(t, n.node, filepath.Join(dir, "work", n.id),
				[]string{"PATH=" + stubs, "STUB_CALLS=" + calls, "STUB_FAIL=" + fail},
				"--once", "--root", root(n.node), "--copy-from", root(master.node)))
		}
		end := awaitEnd(t, s, tx, 5*time.Minute)
		ran := time.Since(start)
		exits := make([]error, len(agents))
		for i, a := range agents {
			exits[i] = a.wait(t, time.Minute)
		}
		return end, ran, exits
	}
	end, ran, exits := runAgents(execute(t, s, "-t", "default"), "")
	for i, err := range exits {
		if err != nil {
			t.Errorf("agent %d: %v", i, err)
		}
	}
	if end.Status != "ready" {
		t.Fatalf("run %s: %s", end.Status, end.Message)
	}
	perNode := map[string]int{}
	for node, rs := range results(t, s, end) {
		for _, r := range rs {
			if r.Status != "ready" && r.Status != "skipped" {
				t.Errorf("node %s task %s: %s %s", node, r.Task, r.Status, r.Message)
			}
		}
		perNode[node] = len(rs)
	}
	t.Logf("fuel-library's default graph on %d nodes and the master: %v tasks run per node in %v", len(nodes), perNode, ran.Round(time.Millisecond))

	raw, err := os.ReadFile(calls)
	must(t, err)
	recorded := strings.Count(string(raw), "\n")
	for line := range strings.Lines(string(raw)) {
		if placeholder.MatchString(line) {
			t.Errorf("a placeholder reached a command: %s", line)
		}
	}
	if !strings.Contains(string(raw), "rsync -a --delete rsync://10.109.15.2:/puppet/newton-10.0/modules/ "+filepath.Join(root(nodes[0].node), "etc/puppet/modules")) {
		t.Errorf("rsync_core_puppet's call:\n%s", raw)
	}
	t.Logf("%d stub calls recorded, none with a placeholder", recorded)

	// What the file tasks wrote, below each node's root.
	id := toString(clusterID)
	for _, n := range nodes {
		nodeYAML, err := os.ReadFile(filepath.Join(root(n.node), "etc/fuel/cluster", id, "node.yaml"))
		must(t, err)
		own, err := puppetyaml.Decode(nodeYAML)
		must(t, err)
		if !reflect.DeepEqual(normalize(t, own), normalize(t, ownPart(n.data, common))) {
			t.Errorf("node %s: node.yaml is not its own data ($node.toYaml())", n.id)
		}
		for _, path := range []string{"etc/fuel/cluster/" + id + "/cluster.yaml", "var/lib/astute/nova/nova"} {
			if _, err := os.Stat(filepath.Join(root(n.node), path)); err != nil {
				t.Errorf("node %s: %v", n.id, err)
			}
		}
	}
	// The master's upload_cluster_configuration wrote $common.toYaml(): the environment's part.
	clusterYAML, err := os.ReadFile(filepath.Join(root(master.node), "var/lib/fuel/configs", id, "cluster.yaml"))
	must(t, err)
	written, err := puppetyaml.Decode(clusterYAML)
	must(t, err)
	if !reflect.DeepEqual(normalize(t, written), normalize(t, common)) {
		t.Errorf("the master's cluster.yaml is not the cluster-wide data ($common.toYaml())")
	}

	// An operator changes the glance settings of the primary controller: the
	// plan says which change makes which tasks run there, who wrote the new
	// value (the node's document, version 2) and where the deployed one came
	// from (the environment's, version 1), and why glance runs.
	controller := nodes[2]
	changed := ownPart(controller.data, common)
	changed["glance"] = map[string]any{"image_cache_max_size": "5368709120"}
	do("PUT", "/api/v1/config/environments/1/nodes/"+controller.id+"/resources/astute/values", changed)
	changes := s.cli(t, "graph", "plan", "-e", cluster, "--node", controller.id, "--changes")
	if !strings.Contains(changes, "  $.glance: {") || !regexp.MustCompile(`runs [^\n]*\bglance\b`).MatchString(changes) ||
		!regexp.MustCompile(`written at /nodes/`+controller.id+`/ version 2, [^\n]* by admin \(admin, request req-[^)]+\); deployed: / version 1`).MatchString(changes) {
		t.Errorf("graph plan --changes:\n%s", changes)
	}
	why := s.cli(t, "graph", "plan", "-e", cluster, "--node", controller.id, "--explain", "--task", "glance")
	for _, want := range []string{"run  glance", `placed: tags "primary-controller" matches tag "primary-controller"`, "runs: its condition is true",
		"data: $%old is the data of the node's last successful run", "$.glance {"} {
		if !strings.Contains(why, want) {
			t.Errorf("graph plan --explain --task glance lacks %q:\n%s", want, why)
		}
	}
	t.Logf("after the glance change, graph plan --changes:\n%s", changes)

	// The whole run again, forced, with the second controller's updatedb
	// failing: the controllers' group tolerates one failed node, so the run
	// ends ready, naming the node and the task; only its agent exits 1.
	forced, took, exits := runAgents(execute(t, s, "-t", "default", "--force"), "104 updatedb.pp")
	if forced.Status != "ready" || !slices.Equal(forced.FailedNodes, []string{"104"}) || len(forced.FailedTasks) != 1 || forced.FailedTasks[0].Task != "updatedb" {
		t.Fatalf("forced run with a failure on 104: %s %q, failed nodes %v, tasks %v", forced.Status, forced.Message, forced.FailedNodes, forced.FailedTasks)
	}
	for i, n := range append(nodes, master) {
		if failed := exits[i] != nil; failed != (n.id == "104") {
			t.Errorf("agent of node %s: exit %v", n.id, exits[i])
		}
	}
	t.Logf("forced run with updatedb failing on node 104 (tolerated): %s in %v, failed %v", forced.Status, took.Round(time.Millisecond), forced.FailedTasks)
}

// toString is a JSON number or string as text.
func toString(v any) string {
	b, _ := json.Marshal(v)
	return strings.Trim(string(b), `"`)
}

// normalize is v as JSON decodes it, so that YAML's and Go's numbers compare alike.
func normalize(t *testing.T, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	must(t, err)
	var out any
	must(t, json.Unmarshal(b, &out))
	return out
}
