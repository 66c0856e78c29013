// Package agenttest runs deployment graphs end to end: a real `tuningbox
// serve` on 127.0.0.1, three registered nodes with different roles and a real
// `tuningbox agent` process for each, logged in as the node's own user,
// running real shell tasks and a real `puppet apply`. It needs Puppet on the
// PATH and runs only with TUNINGBOX_AGENT_TEST=1 (run.sh sets it after
// installing puppet-agent).
package agenttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/wire"
)

const (
	adminUser     = "admin"
	adminPassword = "admin-e2e-secret"
	cluster       = "1"
)

// node is a registered node, its role and its agent's login.
type node struct {
	id, fqdn, role, user, password string
}

var nodes = []node{
	{"1", "ctrl-1.e2e.test", "controller", "agent-ctrl-1", "ctrl-1-secret-pw"},
	{"2", "comp-1.e2e.test", "compute", "agent-comp-1", "comp-1-secret-pw"},
	{"3", "osd-1.e2e.test", "ceph-osd", "agent-osd-1", "osd-1-secret-pw"},
}

// server is a running `tuningbox serve`.
type server struct{ url, bin string }

// startServer builds tuningbox and starts `serve` (apptest.StartServe).
func startServer(t *testing.T) *server {
	t.Helper()
	s := &server{bin: apptest.Build(t)}
	s.url = apptest.StartServe(t, s.bin, apptest.ServeOptions{Admin: adminUser, Password: adminPassword}).URL
	return s
}

// api is the API client of the administrator.
func (s *server) api(t *testing.T) *client.Client {
	t.Helper()
	c, err := client.New(s.url, client.WithBasicAuth(adminUser, adminPassword))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cli runs the tuningbox client as the administrator.
func (s *server) cli(t *testing.T, args ...string) string {
	t.Helper()
	out, code := s.cliStatus(t, args...)
	if code != 0 {
		t.Fatalf("tuningbox %s: exit status %d\n%s", strings.Join(args, " "), code, out)
	}
	return out
}

// cliStatus runs the tuningbox client as the administrator and returns its output and exit status.
func (s *server) cliStatus(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(s.bin, append([]string{"--url", s.url, "--user", adminUser}, args...)...)
	cmd.Env = append(os.Environ(), "TUNINGBOX_PASSWORD="+adminPassword)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("tuningbox %s: %v", strings.Join(args, " "), err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// agent is a running `tuningbox agent` process.
type agent struct {
	cmd  *exec.Cmd
	log  lockedBuffer
	done chan struct{}
	err  error
}

// lockedBuffer is a process's output, readable while the process writes it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startAgent starts the agent of n, logged in as n's own node user, and
// stops it by its PID when the test ends.
func (s *server) startAgent(t *testing.T, n node, workdir string, flags ...string) *agent {
	t.Helper()
	return s.startAgentEnv(t, n, workdir, nil, flags...)
}

// startAgentEnv is startAgent with env added to the agent's environment (a later entry wins).
func (s *server) startAgentEnv(t *testing.T, n node, workdir string, env []string, flags ...string) *agent {
	t.Helper()
	args := append([]string{"--url", s.url, "agent", "--node", n.fqdn, "--workdir", workdir}, flags...)
	a := &agent{cmd: exec.Command(s.bin, args...), done: make(chan struct{})}
	a.cmd.Env = append(append(os.Environ(), "TUNINGBOX_USER="+n.user, "TUNINGBOX_PASSWORD="+n.password), env...)
	a.cmd.Stdout, a.cmd.Stderr = &a.log, &a.log
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { a.err = a.cmd.Wait(); close(a.done) }()
	t.Cleanup(func() {
		select {
		case <-a.done:
			return
		default:
		}
		_ = a.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-a.done:
		case <-time.After(15 * time.Second):
			_ = a.cmd.Process.Kill()
			<-a.done
		}
	})
	return a
}

// stop sends SIGTERM and waits for the agent to exit.
func (a *agent) stop(t *testing.T, within time.Duration) error {
	t.Helper()
	_ = a.cmd.Process.Signal(syscall.SIGTERM)
	return a.wait(t, within)
}

func (a *agent) wait(t *testing.T, within time.Duration) error {
	t.Helper()
	select {
	case <-a.done:
		return a.err
	case <-time.After(within):
		t.Fatalf("agent did not exit within %v; its log:\n%s", within, a.log.String())
		return nil
	}
}

// task is one task of a test graph.
type task struct {
	ID              string           `json:"id"`
	Type            string           `json:"type"`
	Roles           []string         `json:"roles,omitempty"`
	Requires        []string         `json:"requires,omitempty"`
	CrossDepends    []map[string]any `json:"cross-depends,omitempty"`
	CrossDependedBy []map[string]any `json:"cross-depended-by,omitempty"`
	Parameters      map[string]any   `json:"parameters,omitempty"`
}

// events is the file the shell tasks append their start and end to.
type events struct {
	path     string
	recorder string
}

func newEvents(t *testing.T, dir string) events {
	e := events{path: filepath.Join(dir, "events.log"), recorder: filepath.Join(dir, "record.sh")}
	script := "#!/bin/sh\n# record.sh PHASE: one line per call, appended (a short write: atomic with O_APPEND)\n" +
		`printf '%s %s %s %s %s %s\n' "$1" "$TUNINGBOX_NODE_ID" "$TUNINGBOX_NODE_FQDN" "$TUNINGBOX_TASK_ID" "$TUNINGBOX_TRANSACTION_ID" "$(date +%s%N)" >> "$EVENTS"` + "\n"
	if err := os.WriteFile(e.recorder, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return e
}

// shell is a shell task that records its start and end around cmd.
func (e events) shell(id string, roles []string, requires []string, cmd string) task {
	body := fmt.Sprintf("%s start && %s && %s end", e.recorder, cmd, e.recorder)
	return task{ID: id, Type: "shell", Roles: roles, Requires: requires,
		Parameters: map[string]any{"cmd": body, "timeout": 120, "env": map[string]string{"EVENTS": e.path}}}
}

// event is one line of the events file.
type event struct {
	phase, node, fqdn, task, tx string
	at                          int64
}

func (e events) read(t *testing.T) []event {
	t.Helper()
	raw, err := os.ReadFile(e.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []event
	for line := range strings.Lines(string(raw)) {
		f := strings.Fields(line)
		if len(f) != 6 {
			t.Fatalf("event line %q", line)
		}
		at, _ := strconv.ParseInt(f[5], 10, 64)
		out = append(out, event{f[0], f[1], f[2], f[3], f[4], at})
	}
	return out
}

func upload(t *testing.T, s *server, dir, graphType string, tasks []task) {
	t.Helper()
	raw, err := json.Marshal(tasks)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, graphType+".json")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	s.cli(t, "graph", "upload", "-e", cluster, "-t", graphType, "-f", file, "--validate")
}

// transaction is the API's view of a transaction; result one task's outcome on one node.
type (
	transaction = client.Transaction
	result      = wire.TaskResult
)

// execute starts a graph type through the CLI and returns the transaction's uuid.
func execute(t *testing.T, s *server, args ...string) string {
	t.Helper()
	out := s.cli(t, append([]string{"graph", "execute", "-e", cluster, "--format", "json"}, args...)...)
	var tx transaction
	if err := json.Unmarshal([]byte(out), &tx); err != nil || tx.UUID == "" {
		t.Fatalf("execute: %v %s", err, out)
	}
	return tx.UUID
}

// awaitEnd polls the transaction until it is no longer running.
func awaitEnd(t *testing.T, s *server, uuid string, within time.Duration) transaction {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		tx, err := s.api(t).Transaction(t.Context(), uuid)
		if err != nil {
			t.Fatal(err)
		}
		if tx.Status != "running" {
			return *tx
		}
		if time.Now().After(deadline) {
			sub, _ := s.api(t).Transaction(t.Context(), tx.SubTransactions[0].UUID)
			dbg, _ := json.Marshal(sub)
			t.Fatalf("transaction %s still running after %v: %s", uuid, within, dbg)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// results returns each node's results in the transaction's (only) sub-transaction.
func results(t *testing.T, s *server, tx transaction) map[string][]result {
	t.Helper()
	sub, err := s.api(t).Transaction(t.Context(), tx.SubTransactions[0].UUID)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]result{}
	for _, n := range sub.Nodes {
		out[n.Node] = n.Results
	}
	return out
}

func resultIDs(rs []result) []string {
	ids := make([]string, len(rs))
	for i, r := range rs {
		ids[i] = r.Task
	}
	return ids
}

func findResult(rs []result, id string) (result, bool) {
	i := slices.IndexFunc(rs, func(r result) bool { return r.Task == id })
	if i < 0 {
		return result{}, false
	}
	return rs[i], true
}

func TestAgentsRunGraphs(t *testing.T) {
	if os.Getenv("TUNINGBOX_AGENT_TEST") != "1" {
		t.Skip("set TUNINGBOX_AGENT_TEST=1 (agent/test/run.sh) to run agents with real shell and puppet tasks")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Fatal("puppet is not on the PATH: run agent/test/run.sh")
	}
	dir := t.TempDir()
	s := startServer(t)
	s.cli(t, "comp", "create", "--name", "e2e", "--definition", "globals")
	s.cli(t, "env", "create", "--id", cluster, "--components", "e2e", "--levels", "role,nodes")
	for _, n := range nodes {
		s.cli(t, "node", "create", "--id", n.id, "--fqdn", n.fqdn, "--env", cluster, "--role", n.role)
		if _, err := s.api(t).CreateUser(t.Context(), client.NewUser{Name: n.user, Password: n.password, Role: "node", Node: n.fqdn}); err != nil {
			t.Fatal(err)
		}
	}
	ev := newEvents(t, dir)

	// The default graph: 23 tasks, 21 that do work. Controllers run the API
	// services and a real puppet apply, compute waits for the controllers'
	// nova-api and keystone (cross-depends), the controllers' glance waits for
	// the storage node's ceph-pool (cross-depended-by).
	motd := filepath.Join(dir, "motd")
	manifest := filepath.Join(dir, "motd.pp")
	must(t, os.WriteFile(manifest, []byte(fmt.Sprintf("file { %q:\n  ensure  => file,\n  content => \"configured by tuningbox\\n\",\n}\n", motd)), 0o644))
	modules := filepath.Join(dir, "modules")
	must(t, os.MkdirAll(modules, 0o755))
	uploaded := filepath.Join(dir, "uploaded", "compute.txt")
	all, ctrl, comp, osd := []string{"*"}, []string{"controller"}, []string{"compute"}, []string{"ceph-osd"}
	quick := "sleep 0.02"
	graph := []task{
		ev.shell("hiera", all, nil, quick),
		ev.shell("globals", all, []string{"hiera"}, quick),
		ev.shell("netconfig", all, []string{"globals"}, quick),
		ev.shell("firewall", []string{"controller", "compute"}, []string{"netconfig"}, quick),
		ev.shell("database", ctrl, []string{"firewall"}, "sleep 0.2"),
		ev.shell("keystone", ctrl, []string{"database"}, "sleep 0.2"),
		ev.shell("nova-api", ctrl, []string{"keystone"}, "sleep 0.2"),
		ev.shell("glance", ctrl, []string{"keystone"}, quick),
		ev.shell("horizon", ctrl, []string{"nova-api"}, quick),
		{ID: "motd", Type: "puppet", Roles: ctrl, Requires: []string{"netconfig"},
			Parameters: map[string]any{"puppet_manifest": manifest, "puppet_modules": modules, "timeout": 300}},
		ev.shell("nova-compute", comp, []string{"firewall"}, quick),
		ev.shell("neutron-agent", comp, []string{"nova-compute"}, quick),
		ev.shell("compute-check", comp, []string{"neutron-agent"}, quick),
		{ID: "upload-motd", Type: "upload_file", Roles: comp, Requires: []string{"netconfig"},
			Parameters: map[string]any{"path": uploaded, "data": "compute node\n"}},
		ev.shell("ceph-osd", osd, []string{"netconfig"}, "sleep 0.3"),
		ev.shell("ceph-pool", osd, []string{"ceph-osd"}, "sleep 0.3"),
		ev.shell("ntp", all, []string{"netconfig"}, quick),
		ev.shell("rsyslog", all, []string{"ntp"}, quick),
		ev.shell("monitoring", all, []string{"rsyslog"}, quick),
		ev.shell("master-only", []string{"master"}, nil, quick),
		{ID: "legacy", Type: "skipped", Roles: all},
		{ID: "deploy_end", Type: "stage", Requires: []string{"monitoring"}},
		ev.shell("cleanup", all, []string{"deploy_end"}, quick),
	}
	graph[10].CrossDepends = []map[string]any{{"name": "nova-api", "role": "controller"}}
	graph[11].CrossDepends = []map[string]any{{"name": "keystone", "role": "controller", "policy": "any"}}
	graph[15].CrossDependedBy = []map[string]any{{"name": "glance", "role": "controller"}}
	upload(t, s, dir, "default", graph)

	want := map[string][]string{
		"1": {"hiera", "globals", "netconfig", "firewall", "database", "keystone", "glance", "motd", "nova-api", "horizon", "ntp", "rsyslog", "monitoring", "cleanup"},
		"2": {"hiera", "globals", "netconfig", "firewall", "nova-compute", "neutron-agent", "compute-check", "ntp", "rsyslog", "monitoring", "cleanup", "upload-motd"},
		"3": {"hiera", "globals", "netconfig", "ceph-osd", "ceph-pool", "ntp", "rsyslog", "monitoring", "cleanup"},
	}
	var serialized struct {
		Nodes []struct {
			Node  string `json:"node"`
			Tasks []struct {
				Task task `json:"task"`
			} `json:"tasks"`
		} `json:"nodes"`
	}
	resp, err := s.api(t).Do(t.Context(), client.Request{Method: http.MethodGet, Path: "/api/v1/clusters/" + cluster + "/serialized_tasks/"})
	must(t, err)
	must(t, json.Unmarshal(resp.Body, &serialized))
	planned := map[string][]string{}
	for _, n := range serialized.Nodes {
		for _, tk := range n.Tasks {
			planned[n.Node] = append(planned[n.Node], tk.Task.ID)
		}
		if got, w := slices.Sorted(slices.Values(planned[n.Node])), slices.Sorted(slices.Values(want[n.Node])); !slices.Equal(got, w) {
			t.Fatalf("serialized tasks of node %s: %v, want %v", n.Node, planned[n.Node], want[n.Node])
		}
	}

	agents := make([]*agent, len(nodes))
	for i, n := range nodes {
		agents[i] = s.startAgent(t, n, filepath.Join(dir, "agent-"+n.id))
	}

	t.Run("deploy", func(t *testing.T) {
		start := time.Now()
		uuid := execute(t, s)
		tx := awaitEnd(t, s, uuid, 3*time.Minute)
		t.Logf("execute to %s: %v", tx.Status, time.Since(start).Round(time.Millisecond))
		if tx.Status != "ready" {
			t.Fatalf("transaction ended %s: %s", tx.Status, tx.Message)
		}
		byNode := results(t, s, tx)
		for _, n := range nodes {
			rs := byNode[n.id]
			// Exactly its tasks, once each, in the order serialized_tasks announced.
			if got := resultIDs(rs); !slices.Equal(got, planned[n.id]) {
				t.Errorf("node %s ran %v, want %v", n.id, got, planned[n.id])
			}
			for _, r := range rs {
				if r.Status != "ready" || r.Duration == nil {
					t.Errorf("node %s task %s: %+v", n.id, r.Task, r)
				}
			}
		}
		evs := ev.read(t)
		started, ended := map[string]int64{}, map[string]int64{}
		perNode := map[string][]string{}
		for _, e := range evs {
			key := e.task + "@" + e.node
			if e.tx != uuid || e.fqdn != nodes[slices.IndexFunc(nodes, func(n node) bool { return n.id == e.node })].fqdn {
				t.Errorf("event %+v: wrong transaction or FQDN in the task's environment", e)
			}
			switch e.phase {
			case "start":
				if _, twice := started[key]; twice {
					t.Errorf("%s started twice", key)
				}
				started[key] = e.at
				perNode[e.node] = append(perNode[e.node], e.task)
			case "end":
				ended[key] = e.at
			}
		}
		for _, n := range nodes {
			var shellTasks []string
			for _, id := range planned[n.id] {
				if id != "motd" && id != "upload-motd" {
					shellTasks = append(shellTasks, id)
				}
			}
			if !slices.Equal(perNode[n.id], shellTasks) {
				t.Errorf("node %s shell tasks started %v, want %v", n.id, perNode[n.id], shellTasks)
			}
		}
		before := func(a, b string) {
			t.Helper()
			ea, okA := ended[a]
			sb, okB := started[b]
			if !okA || !okB || ea > sb {
				t.Errorf("%s (ended %d) must end before %s starts (%d)", a, ea, b, sb)
			}
		}
		// requires on each node
		for _, tk := range graph {
			for _, r := range tk.Requires {
				for _, n := range nodes {
					if _, ok := started[tk.ID+"@"+n.id]; ok {
						if _, ranR := started[r+"@"+n.id]; ranR {
							before(r+"@"+n.id, tk.ID+"@"+n.id)
						}
					}
				}
			}
		}
		before("monitoring@1", "cleanup@1")
		// cross-depends and cross-depended-by across nodes
		before("nova-api@1", "nova-compute@2")
		before("keystone@1", "neutron-agent@2")
		before("ceph-pool@3", "glance@1")
		if started["master-only@1"] != 0 || started["master-only@2"] != 0 || started["master-only@3"] != 0 {
			t.Error("a master task ran on a node without the master role")
		}

		content, err := os.ReadFile(motd)
		if err != nil || string(content) != "configured by tuningbox\n" {
			t.Errorf("puppet apply did not write %s: %v %q", motd, err, content)
		}
		if r, _ := findResult(byNode["1"], "motd"); r.ExitCode == nil || *r.ExitCode != 2 {
			t.Errorf("puppet result %+v, want exit code 2 (changes applied)", r)
		}
		if data, err := os.ReadFile(uploaded); err != nil || string(data) != "compute node\n" {
			t.Errorf("upload_file: %v %q", err, data)
		}
	})

	t.Run("failure", func(t *testing.T) {
		upload(t, s, dir, "failing", []task{
			ev.shell("f-first", all, nil, quick),
			ev.shell("f-boom", comp, []string{"f-first"}, "echo going down; exit 3"),
			ev.shell("f-after", comp, []string{"f-boom"}, quick),
			{ID: "f-cross", Type: "shell", Roles: ctrl, Requires: []string{"f-first"},
				CrossDepends: []map[string]any{{"name": "f-boom", "role": "compute"}},
				Parameters:   map[string]any{"cmd": ev.recorder + " start", "env": map[string]string{"EVENTS": ev.path}}},
		})
		uuid := execute(t, s, "--type", "failing")
		tx := awaitEnd(t, s, uuid, time.Minute)
		if tx.Status != "error" || !strings.Contains(tx.Message, "Task f-boom failed on node 2 (comp-1.e2e.test): exit status 3: going down") {
			t.Fatalf("transaction = %s %q", tx.Status, tx.Message)
		}
		byNode := results(t, s, tx)
		if r, _ := findResult(byNode["2"], "f-boom"); r.Status != "error" || r.ExitCode == nil || *r.ExitCode != 3 || !strings.Contains(r.Output, "going down") {
			t.Errorf("f-boom result %+v", r)
		}
		time.Sleep(500 * time.Millisecond) // a dependent would have started by now
		for _, e := range ev.read(t) {
			if e.tx == uuid && (e.task == "f-after" || e.task == "f-cross") {
				t.Errorf("%s ran on node %s after the task it depends on failed", e.task, e.node)
			}
		}
	})

	t.Run("idle agents stop cleanly", func(t *testing.T) {
		for i, a := range agents {
			if err := a.stop(t, 10*time.Second); err != nil {
				t.Errorf("agent %s: %v\n%s", nodes[i].id, err, a.log.String())
			}
		}
	})

	t.Run("noop", func(t *testing.T) {
		must(t, os.Remove(motd))
		before := len(ev.read(t))
		uuid := execute(t, s, "--noop")
		// --once agents: each exits 0 when its node has nothing left.
		once := make([]*agent, len(nodes))
		for i, n := range nodes {
			once[i] = s.startAgent(t, n, filepath.Join(dir, "agent-"+n.id), "--once")
		}
		for i, a := range once {
			if err := a.wait(t, 2*time.Minute); err != nil {
				t.Errorf("agent --once of node %s: %v\n%s", nodes[i].id, err, a.log.String())
			}
		}
		tx := awaitEnd(t, s, uuid, time.Minute)
		if tx.Status != "ready" {
			t.Fatalf("noop transaction ended %s: %s", tx.Status, tx.Message)
		}
		if _, err := os.Stat(motd); !os.IsNotExist(err) {
			t.Errorf("puppet --noop changed %s: %v", motd, err)
		}
		if after := len(ev.read(t)); after != before {
			t.Errorf("a noop run ran shell tasks: %d new events", after-before)
		}
		byNode := results(t, s, tx)
		if r, _ := findResult(byNode["1"], "motd"); r.Status != "ready" || r.ExitCode == nil {
			t.Errorf("noop puppet result %+v", r)
		}
		if r, _ := findResult(byNode["2"], "nova-compute"); r.Status != "skipped" {
			t.Errorf("noop shell result %+v", r)
		}
	})

	t.Run("stop", func(t *testing.T) {
		marker := filepath.Join(dir, "still-running")
		upload(t, s, dir, "stopping", []task{
			ev.shell("s-long", ctrl, nil, "sleep 60 && touch "+marker),
			ev.shell("s-next", ctrl, []string{"s-long"}, quick),
		})
		a := s.startAgent(t, nodes[0], filepath.Join(dir, "agent-1"))
		uuid := execute(t, s, "--type", "stopping", "--node", "1")
		deadline := time.Now().Add(time.Minute)
		for !slices.ContainsFunc(ev.read(t), func(e event) bool { return e.tx == uuid && e.task == "s-long" }) {
			if time.Now().After(deadline) {
				t.Fatalf("s-long did not start; agent log:\n%s", a.log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		stopAt := time.Now()
		err := a.stop(t, 15*time.Second)
		t.Logf("agent stopped %v after SIGTERM: %v", time.Since(stopAt).Round(time.Millisecond), err)
		if err == nil {
			t.Error("an agent stopped in the middle of a task exited 0")
		}
		tx := awaitEnd(t, s, uuid, 10*time.Second)
		if tx.Status != "error" || !strings.Contains(tx.Message, "Task s-long failed on node 1 (ctrl-1.e2e.test): interrupted") {
			t.Errorf("stopped transaction = %s %q", tx.Status, tx.Message)
		}
		time.Sleep(time.Second)
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Error("the stopped task's process went on running")
		}
		if slices.ContainsFunc(ev.read(t), func(e event) bool { return e.tx == uuid && e.task == "s-next" }) {
			t.Error("s-next ran after s-long was stopped")
		}
	})

	// Agents of nodes 1 and 2 only: node 3 never claims.
	live := []*agent{
		s.startAgent(t, nodes[0], filepath.Join(dir, "agent-1")),
		s.startAgent(t, nodes[1], filepath.Join(dir, "agent-2")),
	}

	t.Run("unreachable node", func(t *testing.T) {
		upload(t, s, dir, "everywhere", []task{ev.shell("e-all", all, nil, quick)})
		start := time.Now()
		uuid := execute(t, s, "--type", "everywhere", "--claim-timeout", "3s")
		out, code := s.cliStatus(t, "graph", "run", "wait", uuid, "--timeout", "1m")
		t.Logf("execute to the end of graph run wait: %v (exit %d)\n%s", time.Since(start).Round(time.Millisecond), code, out)
		if code != 1 || !strings.Contains(out, "error: Node 3 (osd-1.e2e.test) unreachable: no claim within 3s") || time.Since(start) > 15*time.Second {
			t.Fatalf("graph run wait: exit %d after %v\n%s", code, time.Since(start), out)
		}
		show := s.cli(t, "graph", "run", "show", uuid)
		// Node 3 never claimed: the run ended before it finished.
		if !regexp.MustCompile(`everywhere +3 \(osd-1\.e2e\.test\) +stopped`).MatchString(show) ||
			!regexp.MustCompile(`everywhere +1 \(ctrl-1\.e2e\.test\) +ready`).MatchString(show) {
			t.Errorf("graph run show:\n%s", show)
		}
	})

	t.Run("operator stop", func(t *testing.T) {
		marker := filepath.Join(dir, "stopped-by-operator")
		upload(t, s, dir, "stoppable", []task{ev.shell("o-long", comp, nil, "sleep 45 && touch "+marker)})
		uuid := execute(t, s, "--type", "stoppable", "--node", "2")
		deadline := time.Now().Add(time.Minute)
		for !slices.ContainsFunc(ev.read(t), func(e event) bool { return e.tx == uuid && e.task == "o-long" }) {
			if time.Now().After(deadline) {
				t.Fatalf("o-long did not start; agent log:\n%s", live[1].log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
		if out, code := s.cliStatus(t, "graph", "run", "wait", uuid, "--timeout", "1s"); code != 2 {
			t.Errorf("graph run wait --timeout 1s on a running run: exit %d\n%s", code, out)
		}
		if out := s.cli(t, "graph", "run", "stop", uuid); out != "Run "+uuid+" stopped (error)\n" {
			t.Errorf("graph run stop: %q", out)
		}
		if out, code := s.cliStatus(t, "graph", "run", "wait", uuid); code != 1 || !strings.Contains(out, ": error: Stopped") {
			t.Errorf("graph run wait on a stopped run: exit %d\n%s", code, out)
		}
		// The agent learns it at its next heartbeat (every 30 s) and ends the task.
		stopAt := time.Now()
		for !strings.Contains(live[1].log.String(), "the transaction ended while the task ran") {
			if time.Since(stopAt) > 40*time.Second {
				t.Fatalf("the agent did not end the task of the stopped run; its log:\n%s", live[1].log.String())
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("the agent ended the task %v after the stop", time.Since(stopAt).Round(time.Millisecond))
		time.Sleep(time.Second)
		if _, err := os.Stat(marker); !os.IsNotExist(err) {
			t.Error("the task of the stopped run went on")
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
