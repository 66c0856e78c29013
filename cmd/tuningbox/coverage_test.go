package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// operationsWithoutCommand are the route table's operations no command of
// the CLI sends, each with the reason.
var operationsWithoutCommand = map[string]string{
	"versions":                        "clients read the microversion range before they log in; the CLI sends --api-version and the server answers 406 for one it lacks",
	"openapi":                         "the API's description for tools (curl it, or feed it to an OpenAPI client generator)",
	"config.components.update":        "the CLI's comp update sends PATCH (config.components.patch), the same operation",
	"config.definitions.update":       "the CLI's def update sends PATCH (config.definitions.patch), the same operation",
	"config.environments.update":      "the CLI's env update sends PATCH (config.environments.patch), the same operation",
	"config.levels.update":            "renaming a hierarchy level: tuning-box's API only; env update --levels replaces the level list",
	"config.levels.patch":             "renaming a hierarchy level (as PUT): tuning-box's API only",
	"store.gc":                        "an administrator's maintenance call: tuningbox serve sweeps every hour (--gc-interval), functions/gc on AWS",
	"store.backup":                    "store backup sends it to tuningbox serve (TestStoreBackupWhileServing); this session's Lambda stack has no backup route, as on AWS",
	"graphs.releases.deploymentTasks": "fuel2's release task view; graph download -r of an environment shows the release's graph",
	"graphs.releases.graphs.list":     "graph list lists every graph (graphs.list) with its release, plugin or cluster",
	"graphs.plugins.graphs.list":      "graph list lists every graph (graphs.list)",
	"graphs.clusters.graphs.list":     "graph list -e lists an environment's graphs with its release's and plugins' (graphs.list)",
	"graphs.releases.graphs.patch":    "graph upload replaces a graph with PUT; PATCH is fuel2's partial update",
	"graphs.plugins.graphs.patch":     "graph upload replaces a graph with PUT; PATCH is fuel2's partial update",
	"graphs.clusters.graphs.patch":    "graph upload replaces a graph with PUT; PATCH is fuel2's partial update",
	"graphs.clusters.tasks.merged":    "graph download -a reads the same tasks; listed for fuel2 compatibility",
	"graphs.clusters.deploy":          "spec 002's PUT /clusters/{id}/deploy: graph execute starts the same transaction through /graphs/execute",
	"graphs.clusters.graphviz":        "a Graphviz drawing of the task graph: curl .../deploy_tasks/graph.gv | dot",
	"graphs.graphs.get":               "graphs by their own id: the CLI names a graph by its owner and type",
	"graphs.graphs.update":            "graphs by their own id: the CLI names a graph by its owner and type",
	"graphs.graphs.patch":             "graphs by their own id: the CLI names a graph by its owner and type",
	"graphs.graphs.delete":            "graphs by their own id: the CLI names a graph by its owner and type",
	"users.get":                       "user list shows every user; one user's record adds nothing to it",
	"audit.list":                      "the audit log is read with curl (GET /api/v1/audit?environment=1)",
	"metrics":                         "Prometheus scrapes it (GET /metrics, admin or observer); not for people at a terminal",
	"console":                         "the operators' console is for a browser (/ui/)",
	"sessions.create":                 "the console's login: the CLI sends its credentials with every request and needs no session",
	"sessions.delete":                 "the console's logout",
}

// commandsNotRun are the CLI's commands the session below does not run, with the reason.
var commandsNotRun = map[string]string{
	"serve":         "the server itself (TestUsersAndTokensOverTLS and TestClientCertificates start it)",
	"store check":   "an offline check of a data directory (TestStoreCheckAndDamagedStart)",
	"store backup":  "this session's Lambda stack answers 404, as on AWS (point-in-time recovery); TestStoreBackupWhileServing backs up tuningbox serve",
	"store restore": "an offline restore of a data directory (TestStoreBackupWhileServing)",
	"completion":    "cobra's shell completion scripts",
	"help":          "cobra's help",
}

// The route table's operations without a CLI command: one operator's session
// runs every command of the CLI against the whole API through a proxy that
// records the route of each request. Every operation the session does not
// reach needs a reason (operationsWithoutCommand), and every command a run or
// a reason (commandsNotRun); a reason for what is reached is stale.
func TestRouteTableOperationsWithoutCommand(t *testing.T) {
	backend, err := url.Parse(cliServer(t))
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	reached := map[string]bool{}
	proxy := httputil.NewSingleHostReverseProxy(backend)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if m, ok := routes.Find(r); ok {
			mu.Lock()
			reached[m.ID] = true
			mu.Unlock()
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	ran := map[string]bool{}
	run := func(stdin string, args ...string) string {
		t.Helper()
		cmd, _, err := newRootCmd().Find(args)
		if err != nil {
			t.Fatalf("tuningbox %s: %v", strings.Join(args, " "), err)
		}
		ran[strings.TrimPrefix(cmd.CommandPath(), "tuningbox ")] = true
		return mustCLI(t, srv.URL, stdin, args...)
	}
	operatorsDay(t, run)

	var without []string
	for _, r := range routes.Table {
		reason, allowed := operationsWithoutCommand[r.ID]
		switch {
		case reached[r.ID] && allowed:
			t.Errorf("%s (%s %s) is reached by the CLI, yet listed without a command: %q", r.ID, r.Method, r.Path, reason)
		case !reached[r.ID] && !allowed:
			t.Errorf("%s (%s %s) has no CLI command and no reason why", r.ID, r.Method, r.Path)
		case !reached[r.ID]:
			without = append(without, r.ID)
		}
	}
	for id := range operationsWithoutCommand {
		if !slices.ContainsFunc(routes.Table, func(r routes.Route) bool { return r.ID == id }) {
			t.Errorf("operationsWithoutCommand names %s, which is not in the route table", id)
		}
	}
	for _, path := range leafCommands(newRootCmd(), "") {
		if _, exempt := commandsNotRun[path]; !ran[path] && !exempt {
			t.Errorf("command %q is not run by the session", path)
		}
	}
	t.Logf("%d operations in the route table: %d with a CLI command, %d without (%s)",
		len(routes.Table), len(routes.Table)-len(without), len(without), strings.Join(without, ", "))
}

// leafCommands lists the runnable commands under cmd by path ("config set"); an
// exempt group of commandsNotRun (completion) stands for its subcommands.
func leafCommands(cmd *cobra.Command, prefix string) []string {
	var out []string
	for _, c := range cmd.Commands() {
		path := strings.TrimSpace(prefix + " " + c.Name())
		if _, exempt := commandsNotRun[path]; c.HasSubCommands() && !exempt {
			out = append(out, leafCommands(c, path)...)
		} else {
			out = append(out, path)
		}
	}
	return out
}

// operatorsDay runs every command of the CLI once, as an operator's day would.
func operatorsDay(t *testing.T, run func(stdin string, args ...string) string) {
	dir := t.TempDir()
	// The ConfigDB: a component with its data sources, an environment, its levels.
	run("", "comp", "create", "--name", "fuel", "--definition", "astute", "--definition", "override/node", "--definition", "override/plugins")
	run("", "comp", "list")
	run("", "comp", "show", "fuel")
	run("", "def", "create", "--name", "globals", "--component", "fuel")
	run("", "def", "list")
	run("", "def", "show", "globals")
	run("", "def", "update", "globals", "--content", `{"x":1}`)
	run("", "comp", "create", "--name", "scratch")
	run("", "comp", "update", "scratch", "--name", "scratch2")
	run("", "def", "create", "--name", "tmp")
	run("", "def", "delete", "tmp")
	run("", "comp", "delete", "scratch2")
	run("", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	run("", "env", "list")
	run("", "env", "show", "1")
	run("", "env", "update", "1", "--components", "fuel")
	run("", "lvl", "list", "--env", "1")
	run("", "lvl", "show", "--env", "1", "nodes")
	run("", "env", "create", "--id", "2", "--components", "fuel", "--levels", "nodes")

	// Nodes by FQDN, templates, default deploy steps, validation.
	run("", "--api-version", "latest", "node", "create", "--fqdn", "node-1.domain.tld", "--env", "1", "--role", "controller", "--trait", "CUSTOM_RAID")
	run("", "node", "list")
	run("", "--api-version", "latest", "node", "show", "node-1.domain.tld")
	run("", "--api-version", "latest", "node", "set", "node-1.domain.tld", "--interfaces", `{"raid":["*"],"deploy":["*"]}`)
	run("", "template", "create", "--name", "CUSTOM_RAID", "--steps", `[{"interface":"raid","step":"create_configuration","args":{},"priority":10}]`)
	run("", "template", "list")
	run("", "template", "show", "CUSTOM_RAID")
	run("", "template", "set", "CUSTOM_RAID", "--steps", `[{"interface":"raid","step":"create_configuration","args":{},"priority":20}]`)
	run("", "template", "defaults", "set", "-e", "1", "--steps", `[{"interface":"deploy","step":"deploy","args":{},"priority":100}]`)
	run("", "template", "defaults", "show", "-e", "1")
	run("", "node", "steps", "node-1.domain.tld", "--trait", "CUSTOM_RAID")
	run("", "node", "validate", "node-1.domain.tld")
	run("", "template", "defaults", "delete", "-e", "1")
	run("", "template", "create", "--name", "CUSTOM_OLD", "--steps", `[{"interface":"bios","step":"apply_configuration","args":{},"priority":5}]`)
	run("", "template", "delete", "CUSTOM_OLD")

	// Configuration: an /etc/hiera tree, then facts by key, history, rollback.
	writeTreeFile(t, dir, "hiera/astute.yaml", "deployment_id: 1\nstorage: {}\n")
	writeTreeFile(t, dir, "hiera/override/node.yaml", "debug: true\n")
	run("", "config", "import", "--env", "1", "--node", "node-1.domain.tld", filepath.Join(dir, "hiera"))
	doc := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	config := func(verb string, args ...string) []string {
		return append(append([]string{"config", verb}, doc...), args...)
	}
	run("", config("set", "--key", "storage.backend", "--value", "ceph")...)
	run("", config("override", "--key", "deployment_id", "--value", "2")...)
	run("", config("delete", "--key", "storage.backend")...)
	run("", config("get")...)
	run("", config("history")...)
	run("", config("history", "--key", "storage.backend")...)
	run("", config("diff", "--from", "1", "--to", "2")...)
	run("", "config", "diff", "--env", "1", "--resource", "astute", "--to-env", "2")
	run("", config("rollback", "--to", "1")...)
	run("", config("watch", "--count", "1")...)
	// Moving an environment: its export, imported into the same store (a copy
	// under a new id; environment 2 has no nodes, whose host names would be taken).
	export := filepath.Join(dir, "env-2.export")
	run("", "env", "export", "2", "--to", export)
	run("", "env", "import", export)
	catalog := writeFile(t, "catalog.json", `[{"type":"package","title":"mc","parameters":{"ensure":"installed"}}]`)
	run("", "override", "apply", "--catalog", catalog, "--data", writeFile(t, "data.json", `{"configuration":{"package":{"mc":{"ensure":"absent"}}}}`))

	// Releases, plugins, graphs, a run the agent carries out.
	run("", "release", "create", "--name", "mitaka", "--version", "9.0")
	run("", "release", "list")
	run("", "release", "show", "mitaka")
	run("", "release", "update", "mitaka", "--metadata", writeFile(t, "release-metadata.yaml", "roles_metadata: {controller: {tags: [controller]}}\n"))
	run("", "plugin", "create", "--name", "ldap", "--version", "3.0.0")
	run("", "plugin", "list")
	run("", "plugin", "show", "ldap")
	run("", "plugin", "update", "ldap", "--version", "3.0.1")
	run("", "plugin", "update", "ldap", "--version", "3.0.0")
	run("", "env", "update", "1", "--release", "mitaka", "--plugin", "ldap")
	tasks := writeFile(t, "tasks.yaml", "- {id: hiera, type: shell, roles: [controller], parameters: {cmd: 'true'}}\n")
	for _, owner := range [][]string{{"-r", "mitaka"}, {"-p", "ldap"}, {"-e", "1"}} {
		run("", append([]string{"graph", "upload", "-t", "default", "-f", tasks}, owner...)...)
		run("", append([]string{"graph", "upload", "-t", "default", "-f", tasks}, owner...)...) // replaces it
	}
	run("", "graph", "list", "-e", "1")
	for _, level := range []string{"-c", "-p", "-r"} {
		run("", "graph", "download", "-e", "1", level, "-f", "-")
	}
	runID := func(out string) string {
		var tx struct {
			UUID string `json:"uuid"`
		}
		if err := json.Unmarshal([]byte(out), &tx); err != nil || tx.UUID == "" {
			t.Fatalf("graph execute: %s", out)
		}
		return tx.UUID
	}
	first := runID(run("", "graph", "execute", "-e", "1", "--node", "node-1.domain.tld", "--format", "json"))
	run("", "agent", "--node", "node-1.domain.tld", "--once", "--workdir", filepath.Join(dir, "agent"))
	run("", "graph", "run", "list", "-e", "1")
	run("", "graph", "run", "show", first)
	run("", "graph", "run", "wait", first, "--timeout", "10s")
	// The run again, whole: nobody runs it, so it is stopped. A dry run
	// prints each node's plan and ends at once; so does a plan.
	run("", "graph", "run", "stop", runID(run("", "graph", "run", "retry", first, "--format", "json")))
	run("", "graph", "plan", "-e", "1")
	run("", "graph", "execute", "-e", "1", "--dry-run")
	for _, owner := range [][]string{{"-r", "mitaka"}, {"-p", "ldap"}, {"-e", "1"}} {
		run("", append([]string{"graph", "delete", "-t", "default"}, owner...)...)
	}
	run("", "env", "update", "1", "--plugin", "")
	run("", "plugin", "delete", "ldap")
	run("", "release", "create", "--name", "old", "--version", "1")
	run("", "release", "delete", "old-1")
	run("", "env", "delete", "2")
	run("", "node", "create", "--fqdn", "spare.domain.tld", "--env", "1")
	run("", "node", "delete", "spare.domain.tld")

	// Users and tokens.
	run("observer-password\n", "user", "create", "watcher", "--role", "observer", "--password-stdin")
	run("", "user", "list")
	run("", "token", "create", "--user", "watcher", "--description", "ci")
	var tokens []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(run("", "token", "list", "--format", "json")), &tokens); err != nil || len(tokens) != 1 {
		t.Fatalf("token list: %v %v", tokens, err)
	}
	run("", "token", "revoke", tokens[0].ID)
	run("", "user", "delete", "watcher")
}
