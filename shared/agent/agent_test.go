package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/graphsapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// clusterOne is environment 1, where the tests execute their graphs.
var clusterOne client.ID = "1"

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// cluster serves the whole application on an embedded store with
// environment 1 holding node 7 (n7.example.com) and graph "default" of
// tasks, and returns an administrator's client.
func cluster(t *testing.T, tasks string) *client.Client {
	t.Helper()
	url := apptest.Server(t, "admin", "secret-password")
	c, err := client.New(url, client.WithBasicAuth("admin", "secret-password"))
	must(t, err)
	ctx := context.Background()
	_, err = c.CreateComponent(ctx, client.NewComponent{Name: "fuel", ResourceDefinitions: []client.NewResourceDefinition{{Name: "astute"}}})
	must(t, err)
	_, err = c.CreateEnvironment(ctx, client.NewEnvironment{ID: 1, Components: []client.ID{"fuel"}, HierarchyLevels: []string{"nodes"}})
	must(t, err)
	_, err = c.CreateNode(ctx, client.NewNode{ID: "7", FQDN: "n7.example.com", EnvironmentID: "1", Roles: []string{"compute"}})
	must(t, err)
	_, err = c.CreateGraph(ctx, "clusters", "1", "default", json.RawMessage(`{"tasks": `+tasks+`}`), false)
	must(t, err)
	return c
}

// run executes graph "default" on environment 1 and runs node 7's agent with
// Once; it returns the agent's error and the transaction's status.
func run(t *testing.T, c *client.Client, opts Options) (error, *client.Transaction) {
	t.Helper()
	ctx := context.Background()
	tx, err := c.Execute(ctx, client.ExecuteRequest{Cluster: &clusterOne, Graphs: []client.GraphRun{{Type: "default"}}})
	must(t, err)
	opts.Node, opts.Once = "n7.example.com", true
	runErr := New(c, opts, slog.New(slog.DiscardHandler)).Run(ctx)
	top, err := c.Transaction(ctx, tx.UUID)
	must(t, err)
	return runErr, top
}

// Run with Once carries out the node's tasks in order, gives them the
// TUNINGBOX_ variables but not the agent's credentials, keeps their logs in
// the workdir, and says whether one failed.
func TestRunOnce(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "marker")
	c := cluster(t, fmt.Sprintf(`[
		{"id": "env", "type": "shell", "parameters": {"cmd": "test -z \"$TUNINGBOX_PASSWORD\" && echo node=$TUNINGBOX_NODE_ID task=$TUNINGBOX_TASK_ID > %[1]s"}},
		{"id": "after", "type": "shell", "requires": ["env"], "parameters": {"cmd": "cat %[1]s"}}
	]`, marker))
	t.Setenv("TUNINGBOX_PASSWORD", "not for tasks")
	err, top := run(t, c, Options{Workdir: dir})
	if err != nil || top.Status != "ready" {
		t.Fatalf("Run = %v; transaction %s: %s", err, top.Status, top.Message)
	}
	logged, err := os.ReadFile(filepath.Join(dir, "logs", top.UUID, "after.log"))
	if err != nil || string(logged) != "node=7 task=env\n" {
		t.Fatalf("log of the second task: %v %q", err, logged)
	}

	c = cluster(t, `[{"id": "fails", "type": "shell", "parameters": {"cmd": "echo broken; exit 3"}}]`)
	err, top = run(t, c, Options{Workdir: t.TempDir()})
	if !errors.Is(err, ErrTaskFailed) || top.Status != "error" || !strings.Contains(top.Message, "exit status 3: broken") {
		t.Fatalf("Run = %v; transaction %s: %s", err, top.Status, top.Message)
	}
}

// Run with Once fails when the node failed without a task of its own failing
// (it waited for a failed one), and when the run stopped before the node ran.
func TestRunOnceNodeOutcome(t *testing.T) {
	ctx := context.Background()
	setup := func(tasks string) (*client.Client, string) {
		c := cluster(t, tasks)
		for _, n := range []client.NewNode{{ID: "8", FQDN: "n8.example.com", Roles: []string{"ceph-osd"}}, {ID: "9", FQDN: "n9.example.com", Roles: []string{"controller"}}} {
			n.EnvironmentID = "1"
			_, err := c.CreateNode(ctx, n)
			must(t, err)
		}
		tx, err := c.Execute(ctx, client.ExecuteRequest{Cluster: &clusterOne, Graphs: []client.GraphRun{{Type: "default"}}})
		must(t, err)
		return c, tx.UUID
	}
	agent := func(c *client.Client) error {
		return New(c, Options{Node: "n7.example.com", Once: true, Workdir: t.TempDir()}, slog.New(slog.DiscardHandler)).Run(ctx)
	}
	claimAndReport := func(c *client.Client, tx, node, status string) {
		claim, err := c.Claim(ctx, tx, node)
		must(t, err)
		must(t, c.Report(ctx, tx, node, client.TaskReport{Task: claim.Task.ID(), Status: status}))
	}

	// Node 8 may fail (its group tolerates one node); node 7's task waits for
	// node 8's, so node 7 fails, and it is critical: the run ends.
	c, tx := setup(`[{"id": "osd", "type": "group", "role": ["ceph-osd"], "fault_tolerance": 1},
		{"id": "a", "type": "shell", "role": ["ceph-osd"], "parameters": {"cmd": "true"}},
		{"id": "b", "type": "shell", "role": ["compute"], "cross-depends": [{"name": "a", "role": ["ceph-osd"]}], "parameters": {"cmd": "true"}}]`)
	claimAndReport(c, tx, "8", "error")
	if err := agent(c); !errors.Is(err, ErrNodeFailed) {
		t.Fatalf("Run of a node waiting for a failed task = %v", err)
	}

	// Node 8 fails and is critical while node 9 runs a task: the run stops,
	// and node 7 never runs its task.
	c, tx = setup(`[{"id": "a", "type": "shell", "role": ["*"], "parameters": {"cmd": "true"}}]`)
	if claim, err := c.Claim(ctx, tx, "9"); err != nil || claim.Action != "task" {
		t.Fatalf("claim of node 9: %+v %v", claim, err)
	}
	claimAndReport(c, tx, "8", "error")
	if err := agent(c); !errors.Is(err, ErrNodeStopped) {
		t.Fatalf("Run of a node whose run stopped = %v", err)
	}

	// Node 7 runs a task, then waits for node 8, which fails: the run ends,
	// and the agent asks how its node did in the run it took part in.
	c, tx = setup(`[{"id": "a", "type": "shell", "role": ["compute"], "parameters": {"cmd": "true"}},
		{"id": "c", "type": "shell", "role": ["ceph-osd"], "parameters": {"cmd": "true"}},
		{"id": "b", "type": "shell", "role": ["compute"], "requires": ["a"], "cross-depends": [{"name": "c", "role": ["ceph-osd"]}], "parameters": {"cmd": "true"}}]`)
	done := make(chan error, 1)
	go func() { done <- agent(c) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		run, err := c.Transaction(ctx, tx)
		must(t, err)
		sub, err := c.Transaction(ctx, run.SubTransactions[0].UUID)
		must(t, err)
		if slices.ContainsFunc(sub.Nodes, func(p client.NodeProgress) bool { return p.Node == "7" && len(p.Results) == 1 }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("node 7 did not run task a")
		}
	}
	claimAndReport(c, tx, "8", "error")
	if err := <-done; !errors.Is(err, ErrNodeStopped) {
		t.Fatalf("Run of a node left waiting when its run stopped = %v", err)
	}
}

// What the agent does with each kind of claim that runs no process.
func TestTaskKinds(t *testing.T) {
	a := New(nil, Options{Workdir: t.TempDir()}, slog.New(slog.DiscardHandler))
	claim := func(typ, params string, dry, noop bool) *claimed {
		return &claimed{Claim: &client.Claim{Transaction: "tx", DryRun: dry || noop, NoopRun: noop}, Task: task{ID: "t", Type: typ, Parameters: json.RawMessage(params)}}
	}
	tests := []struct {
		name        string
		c           *claimed
		status, msg string
	}{
		{"dry run", claim("shell", `{"cmd":"exit 1"}`, true, false), "ready", "dry run: not run"},
		{"noop shell", claim("shell", `{"cmd":"exit 1"}`, false, true), "skipped", "noop run"},
		{"noop upload", claim("upload_file", `{"path":"/nonexistent/x","data":""}`, false, true), "skipped", "noop run"},
		{"shell without cmd", claim("shell", `{}`, false, false), "error", "parameters.cmd is required"},
		{"puppet without manifest", claim("puppet", `null`, false, false), "error", "parameters.puppet_manifest is required"},
		{"bad parameters", claim("shell", `{"cmd":1}`, false, false), "error", "parameters:"},
		{"bad permissions", claim("upload_file", `{"path":"/tmp/x","data":"","permissions":"rw"}`, false, false), "error", "expected an octal mode"},
		{"role", claim("role", ``, false, false), "skipped", "role tasks only group others"},
		{"erase_node", claim("erase_node", ``, false, false), "error", "task type erase_node is not run by the tuningbox agent"},
		{"reboot", claim("reboot", ``, false, false), "skipped", "without --allow-reboot"},
	}
	for _, tt := range tests {
		rep := a.execute(context.Background(), tt.c)
		if rep.Status != tt.status || !strings.Contains(rep.Message, tt.msg) {
			t.Errorf("%s: %+v, want %s %q", tt.name, rep, tt.status, tt.msg)
		}
	}
	tail := &tailBuffer{max: 8}
	fmt.Fprint(tail, "0123456789")
	fmt.Fprint(tail, "ab")
	if tail.String() != "456789ab" {
		t.Errorf("tail = %q", tail.String())
	}
}

// With --root, the files tasks write land below it and copy_files reads its
// sources below --copy-from (the master's tree), never the machine's own.
func TestSandboxRoot(t *testing.T) {
	root, master := t.TempDir(), t.TempDir()
	must(t, os.MkdirAll(filepath.Join(master, "var/lib/fuel/keys/7"), 0o700))
	must(t, os.WriteFile(filepath.Join(master, "var/lib/fuel/keys/7/nova"), []byte("key"), 0o600))
	a := New(nil, Options{Workdir: t.TempDir(), Root: root, CopyFrom: master}, slog.New(slog.DiscardHandler))
	a.node = &client.Node{ID: "1"}
	claim := func(typ, params string) *claimed {
		return &claimed{Claim: &client.Claim{Transaction: "tx"}, Task: task{ID: "t", Type: typ, Parameters: json.RawMessage(params)}}
	}
	for _, c := range []*claimed{
		claim("upload_file", `{"path":"/etc/fuel/cluster/7/node.yaml","data":"uid: 1\n"}`),
		claim("copy_files", `{"files":[{"src":"/var/lib/fuel/keys/7/nova","dst":"/var/lib/astute/nova/nova"}],"permissions":"0600"}`),
		claim("shell", `{"cmd":"pwd > here","cwd":"/"}`),
	} {
		if rep := a.execute(context.Background(), c); rep.Status != "ready" {
			t.Fatalf("%s: %+v", c.Task.Type, rep)
		}
	}
	for path, want := range map[string]string{"etc/fuel/cluster/7/node.yaml": "uid: 1\n", "var/lib/astute/nova/nova": "key", "here": root + "\n"} {
		if got, err := os.ReadFile(filepath.Join(root, path)); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", path, got, err, want)
		}
	}
}

// An agent running a task claims it again every heartbeat; when the run is
// stopped meanwhile, the next heartbeat ends the task.
func TestHeartbeatStopsTaskOfEndedRun(t *testing.T) {
	b := mem.New()
	router := routes.NewRouter(1 << 20)
	graphsapi.Register(router, graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": graphstest.Nodes("1")}, graphs.WithHeartbeat(100*time.Millisecond)))
	srv := httptest.NewServer(httpapi.Wrap(router, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	must(t, err)
	ctx := context.Background()
	_, err = c.CreateGraph(ctx, "clusters", "1", "default", json.RawMessage(`{"tasks": [{"id": "slow", "type": "shell", "parameters": {"cmd": "sleep 30", "timeout": 60}}]}`), false)
	must(t, err)
	tx, err := c.Execute(ctx, client.ExecuteRequest{Cluster: &clusterOne, Graphs: []client.GraphRun{{Type: "default"}}})
	must(t, err)
	claim, err := c.Claim(ctx, tx.UUID, "1")
	must(t, err)
	var logs bytes.Buffer
	a := New(c, Options{Workdir: t.TempDir(), StopGrace: time.Second}, slog.New(slog.NewTextHandler(&logs, nil)))
	a.node = &client.Node{ID: "1"}

	stopped := make(chan error, 1)
	go func() {
		// Heartbeats move the node's last sign of life on; then the operator stops the run.
		time.Sleep(400 * time.Millisecond)
		top, err := c.Transaction(ctx, tx.UUID)
		if err == nil {
			var sub *client.Transaction
			if sub, err = c.Transaction(ctx, top.SubTransactions[0].UUID); err == nil {
				if p := sub.Nodes[0]; p.LastSeen == nil || !p.LastSeen.After(*p.CurrentStart) {
					t.Errorf("no heartbeat recorded: %+v", p)
				}
			}
		}
		if err == nil {
			_, err = c.StopTransaction(ctx, tx.UUID)
		}
		stopped <- err
	}()
	start := time.Now()
	ok, err := a.runAndReport(ctx, claim)
	must(t, <-stopped)
	if err != nil || ok || time.Since(start) > 5*time.Second {
		t.Fatalf("runAndReport = %v, %v after %v", ok, err, time.Since(start))
	}
	if !strings.Contains(logs.String(), "task stopped: the transaction ended while the task ran") || !strings.Contains(logs.String(), "report refused") {
		t.Fatalf("agent log:\n%s", logs.String())
	}
}
