package main

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/graphsapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// graphServer serves the graphs routes over a fresh embedded store with
// environment 1 (nodes 1, 2), a release and a plugin enabled on it.
func graphServer(t *testing.T, opts ...graphs.Option) string {
	t.Helper()
	for _, name := range []string{"TUNINGBOX_URL", "TUNINGBOX_USER", "TUNINGBOX_PASSWORD", "TUNINGBOX_TOKEN", "TUNINGBOX_CACERT", "TUNINGBOX_API_VERSION"} {
		t.Setenv(name, "")
	}
	b := mem.New()
	router := routes.NewRouter(1 << 20)
	graphsapi.Register(router, graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": graphstest.Nodes("1", "2")}, opts...))
	srv := httptest.NewServer(httpapi.Wrap(router, httpapi.Options{}))
	t.Cleanup(srv.Close)
	c, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []client.Request{
		{Method: http.MethodPost, Path: "/api/v1/releases", Body: []byte(`{"name":"mitaka","version":"9.0"}`)},
		{Method: http.MethodPost, Path: "/api/v1/plugins", Body: []byte(`{"name":"ldap","version":"3.0.0"}`)},
		{Method: http.MethodPut, Path: "/api/v1/clusters/1", Body: []byte(`{"release_id":1,"plugins":[1]}`)},
	} {
		if _, err := c.Do(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	return srv.URL
}

func TestGraphCommands(t *testing.T) {
	url := graphServer(t)
	release := writeFile(t, "release.yaml", `
- id: hiera
  type: puppet
  version: 2.1.0
  parameters: {puppet_manifest: hiera.pp, timeout: 120}
- id: netconfig
  type: puppet
  requires: [hiera]
`)
	pluginJSON := `{"name":"LDAP","tasks":[{"id":"ldap","type":"shell","requires":["netconfig"]}]}`
	graphDir := t.TempDir()
	writeTreeFile(t, graphDir, "metadata.yaml", "name: Fixes\non_success: {node_attributes: {status: ready}}\n")
	writeTreeFile(t, graphDir, "tasks.yaml", "- {id: netconfig, type: shell, requires: [hiera]}\n")

	if out := mustCLI(t, url, "", "graph", "upload", "-r", "1", "-f", release, "--yes"); !strings.Contains(out, "Deployment graph created (id 1, type default)") {
		t.Fatalf("upload release: %s", out)
	}
	mustCLI(t, url, pluginJSON, "graph", "upload", "-p", "1", "-t", "default", "-f", "-")
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-d", graphDir, "--validate", "-y")
	// A second upload replaces the graph.
	if out := mustCLI(t, url, "", "graph", "upload", "-e", "1", "-d", graphDir, "--yes"); !strings.Contains(out, "Deployment graph updated (id 3") {
		t.Fatalf("re-upload: %s", out)
	}
	bad := writeFile(t, "bad.yaml", "- {id: x, type: shell, requires: [nowhere]}\n")
	if out, err := cli(t, url, "", "graph", "upload", "-e", "1", "-t", "bad", "-f", bad, "--validate"); err == nil || !strings.Contains(err.Error(), `"x" requires "nowhere"`) {
		t.Fatalf("invalid upload: %v %s", err, out)
	}

	list := mustCLI(t, url, "", "graph", "list", "-e", "1")
	for _, want := range []string{"ID", "1   ", "release", "plugin", "cluster", "hiera,netconfig", "Fixes"} {
		if !strings.Contains(list, want) {
			t.Fatalf("list lacks %q:\n%s", want, list)
		}
	}

	merged := mustCLI(t, url, "", "graph", "download", "-e", "1", "-a", "-f", "-")
	if !strings.HasPrefix(merged, "- id: netconfig\n  requires:\n    - hiera\n  type: shell\n") || !strings.Contains(merged, "id: ldap") {
		t.Fatalf("merged download:\n%s", merged)
	}
	file := filepath.Join(t.TempDir(), "release.json")
	mustCLI(t, url, "", "graph", "download", "-e", "1", "-r", "-f", file, "--format", "json")
	data, err := os.ReadFile(file)
	if err != nil || !strings.Contains(string(data), `"puppet_manifest": "hiera.pp"`) {
		t.Fatalf("release download: %v %s", err, data)
	}

	// The type is "default" unless given.
	out := mustCLI(t, url, "", "graph", "execute", "-e", "1", "--node", "2", "-T", "ldap", "--noop", "--format", "json")
	tx := jsonOut(t, out).(map[string]any)
	subs, _ := tx["sub_transactions"].([]any)
	if tx["status"] != "running" || tx["dry_run"] != true || tx["noop_run"] != true || len(subs) != 1 || subs[0].(map[string]any)["graph_type"] != "default" {
		t.Fatalf("execute: %s", out)
	}
	if _, err := cli(t, url, "", "graph", "execute", "-e", "1", "-t", "default", "--nodes", "1,2"); err == nil || !strings.Contains(err.Error(), "already runs transaction") {
		t.Fatalf("second execute: %v", err)
	}

	if out := mustCLI(t, url, "", "graph", "delete", "-e", "1", "-t", "default"); !strings.Contains(out, "was deleted") {
		t.Fatalf("delete: %s", out)
	}
	_, err = cli(t, url, "", "graph", "delete", "-e", "1", "-t", "default")
	if exitCode(err) != 3 {
		t.Fatalf("deleting a missing graph: %v (exit %d)", err, exitCode(err))
	}
}

func TestGraphCommandUsage(t *testing.T) {
	url := graphServer(t)
	tests := [][]string{
		{"graph", "upload", "-f", "x.yaml"},
		{"graph", "upload", "-e", "1", "-r", "1", "-f", "x.yaml"},
		{"graph", "upload", "-e", "1"},
		{"graph", "download", "-e", "1"},
		{"graph", "download", "-e", "1", "-a", "-c"},
		{"graph", "download", "-a"},
		{"graph", "execute", "-t", "default"},
		{"graph", "execute", "-e", "1", "-t", "default", "--dry-run", "--noop"},
		{"graph", "delete", "-e", "1"},
	}
	for _, args := range tests {
		_, err := cli(t, url, "", args...)
		if exitCode(err) != 2 {
			t.Errorf("%v: err %v, want a usage error", args, err)
		}
	}
}

// Without --type an upload is for the default graph only once confirmed:
// on a terminal by answering yes, otherwise with --yes; nothing is written before.
func TestGraphUploadConfirmsDefaultType(t *testing.T) {
	url := graphServer(t)
	tasks := writeFile(t, "tasks.yaml", "- {id: a, type: shell}\n")
	graphCount := func() int {
		return strings.Count(mustCLI(t, url, "", "graph", "list", "--format", "json"), `"relations"`)
	}
	_, err := cli(t, url, "", "graph", "upload", "-e", "1", "-f", tasks)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "no --type given") || graphCount() != 0 {
		t.Fatalf("upload without a terminal: %v, %d graphs", err, graphCount())
	}
	terminal := stdinIsTerminal
	t.Cleanup(func() { stdinIsTerminal = terminal })
	stdinIsTerminal = func(io.Reader) bool { return true }
	for _, answer := range []string{"n\n", "\n", "maybe\n", ""} {
		if _, err := cli(t, url, answer, "graph", "upload", "-e", "1", "-f", tasks); exitCode(err) != 2 || !strings.Contains(err.Error(), "upload cancelled") {
			t.Fatalf("answer %q: %v", answer, err)
		}
	}
	if graphCount() != 0 {
		t.Fatal("a cancelled upload wrote a graph")
	}
	if out := mustCLI(t, url, "yes\n", "graph", "upload", "-e", "1", "-f", tasks); !strings.Contains(out, "created (id 1, type default)") {
		t.Fatalf("confirmed upload: %s", out)
	}
}

// fuel-library keeps one tasks.yaml per module: upload -d takes the tree, and
// execute --dry-run prints what each node runs and skips.
func TestGraphUploadTreeAndDryRun(t *testing.T) {
	url := graphServer(t)
	tree := t.TempDir()
	writeTreeFile(t, tree, "deployment/puppet/osnailyfacter/modular/globals/tasks.yaml",
		"- {id: globals, type: puppet, version: 2.1.0, role: ['/.*/'], parameters: {puppet_manifest: globals.pp, puppet_modules: /etc/puppet/modules, timeout: 120}}\n")
	writeTreeFile(t, tree, "deployment/puppet/osnailyfacter/modular/netconfig/tasks.yaml",
		"- {id: netconfig, type: puppet, version: 2.1.0, role: ['/.*/'], requires: [globals], condition: false}\n"+
			"- {id: ssl-dns-setup, type: puppet, version: 2.1.0, groups: [primary-rabbitmq, rabbitmq]}\n")
	out := mustCLI(t, url, "", "graph", "upload", "-r", "1", "-t", "default", "-d", tree)
	if !strings.Contains(out, "created (id 1, type default)") {
		t.Fatalf("upload of the tree: %s", out)
	}
	got := mustCLI(t, url, "", "graph", "download", "-e", "1", "-r", "-f", "-")
	for _, id := range []string{"id: globals", "id: netconfig", "id: ssl-dns-setup"} {
		if !strings.Contains(got, id) {
			t.Fatalf("the uploaded graph lacks %s:\n%s", id, got)
		}
	}
	// The nodes of graphServer have no roles: '/.*/' matches no tag, so nothing runs.
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default",
		"-f", writeFile(t, "own.yaml", "- {id: everywhere, type: shell, requires: [globals]}\n- {id: never, type: shell, condition: false}\n"))
	out = mustCLI(t, url, "", "graph", "execute", "-e", "1", "--dry-run")
	for _, want := range []string{"graph default:", "node 1: 1 to run, 1 skipped", "    run  everywhere", "    skip never (condition)",
		`placed on no node: globals, netconfig, ssl-dns-setup`, `groups "rabbitmq" matches no node (tasks ssl-dns-setup)`} {
		if !strings.Contains(out, want) {
			t.Errorf("dry run lacks %q:\n%s", want, out)
		}
	}
}

// graph plan previews a run without one: the same lists as a dry run, each
// task as its agent would get it in JSON, and no transaction left behind.
func TestGraphPlan(t *testing.T) {
	url := graphServer(t)
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default",
		"-f", writeFile(t, "own.yaml", "- {id: everywhere, type: shell, parameters: {cmd: 'ls /etc/{CLUSTER_ID}'}}\n- {id: never, type: shell, condition: false}\n"))
	out := mustCLI(t, url, "", "graph", "plan", "-e", "1", "--node", "2")
	// No deployment data in this environment: the placeholder stays, and the plan says so.
	for _, want := range []string{"graph default:", "node 2: 1 to run, 1 skipped", "    run  everywhere", "    skip never (condition)",
		"warning: placeholders such as {CLUSTER_ID} stay as written"} {
		if !strings.Contains(out, want) {
			t.Errorf("plan lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "node 1:") {
		t.Errorf("--node 2 plans node 2 only:\n%s", out)
	}
	explained := mustCLI(t, url, "", "graph", "plan", "-e", "1", "--node", "1", "--explain", "--task", "never")
	for _, want := range []string{"    skip never (condition)\n         placed: no tags, role or groups: every node\n         skipped: its condition is false\n"} {
		if !strings.Contains(explained, want) || strings.Contains(explained, "run  everywhere") {
			t.Errorf("plan --explain --task never lacks %q:\n%s", want, explained)
		}
	}
	js := jsonOut(t, mustCLI(t, url, "", "graph", "plan", "-e", "1", "--force", "--format", "json")).(map[string]any)
	nodes, _ := js["nodes"].([]any)
	if len(nodes) != 2 || !strings.Contains(mustCLI(t, url, "", "graph", "plan", "-e", "1", "--format", "json"), `"fail_on_error": true`) {
		t.Fatalf("plan --format json: %v", js)
	}
	// A run explained keeps the reasons with its plan: a dry run prints them.
	dry := mustCLI(t, url, "", "graph", "execute", "-e", "1", "--dry-run", "--explain")
	if !strings.Contains(dry, "    skip never (condition)\n         placed: no tags, role or groups: every node\n         skipped: its condition is false\n") {
		t.Errorf("execute --dry-run --explain:\n%s", dry)
	}
	// The run list holds the dry run alone: the plans started nothing.
	if runs, _ := jsonOut(t, mustCLI(t, url, "", "graph", "run", "list", "-e", "1", "--format", "json")).([]any); len(runs) != 1 || runs[0].(map[string]any)["status"] != "ready" {
		t.Fatalf("runs after three plans and a dry run: %v", runs)
	}
}
