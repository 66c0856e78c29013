// Package test drives the operators' console (/ui/) in a real browser:
// Debian's chromium, headless, through the Chrome DevTools Protocol
// (chromedp), against `tuningbox serve` on 127.0.0.1 with a seeded store of
// 1,000 nodes. run.sh installs chromium when it is missing.
package test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/wire"
)

const (
	adminUser     = "admin"
	adminPassword = "admin-console-secret"
	nodeUser      = "agent-node-4"
	nodePassword  = "node-4-secret-pw"
	// operator is a second administrator, whose change the plan's reasons name.
	operator         = "operator-jane"
	operatorPassword = "operator-jane-secret"
	// changedNode is deployed once, then its nova.cpu_allocation_ratio changed.
	changedNode = "7"
	// nodeCount is the cluster's size: the first view must draw within firstViewBudget with all of them.
	nodeCount       = 1000
	firstViewBudget = time.Second
)

// api is the seeded server's API, called as user (the administrator unless as says otherwise).
type api struct {
	t              *testing.T
	base           string
	user, password string
}

// as is the API called as another user.
func (a api) as(user, password string) api {
	a.user, a.password = user, password
	return a
}

// call sends body (JSON unless nil) and fails the test unless the answer is want; it returns the answer's body.
func (a api) call(method, path string, body any, want int) []byte {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			a.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, a.base+path, rd)
	if err != nil {
		a.t.Fatal(err)
	}
	req.SetBasicAuth(a.user, a.password)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	if resp.StatusCode != want {
		a.t.Fatalf("%s %s: %d %s, want %d", method, path, resp.StatusCode, out, want)
	}
	return out
}

// seed stores what every view shows: environment 1 (levels role and nodes)
// with nodeCount nodes (three controllers, the rest compute), a release, a
// deployment graph with a skipped task and tasks that run when a key changed,
// several versions of documents, and the node user of node 4.
func seed(t *testing.T, a api) {
	start := time.Now()
	a.call("POST", "/api/v1/config/components", map[string]any{"name": "fuel", "resource_definitions": []any{map[string]any{"name": "astute"}}}, http.StatusCreated)
	a.call("POST", "/api/v1/config/environments", map[string]any{"id": 1, "components": []string{"fuel"}, "hierarchy_levels": []string{"role", "nodes"}}, http.StatusCreated)
	a.call("POST", "/api/v1/releases", map[string]any{"name": "mitaka", "version": "9.0"}, http.StatusCreated)
	a.call("PUT", "/api/v1/clusters/1", map[string]any{"release_id": 1}, http.StatusOK)
	shell := func(id string, roles []string, requires ...string) map[string]any {
		return map[string]any{"id": id, "type": "shell", "roles": roles, "requires": requires, "parameters": map[string]any{"cmd": "true"}}
	}
	all, controller, compute := []string{"*"}, []string{"controller"}, []string{"compute"}
	never := shell("ceph-osd", compute, "netconfig")
	never["condition"] = map[string]any{"yaql_exp": "false"}
	// Tasks that run on a first deployment and then when their key changes.
	nova := shell("nova-config", compute, "netconfig")
	nova["condition"] = map[string]any{"yaql_exp": "changed($.nova.cpu_allocation_ratio)"}
	ntp := shell("ntp-config", all, "netconfig")
	ntp["condition"] = map[string]any{"yaql_exp": "changed($.ntp)"}
	// A body of 6 KB on every node: the plan of 1,000 nodes takes more than
	// one page of serialized_tasks (5 MiB), which the console reads to the end.
	globals := shell("globals", all, "hiera")
	globals["parameters"] = map[string]any{"cmd": "true # " + strings.Repeat("globals ", 750)}
	a.call("POST", "/api/v1/clusters/1/deployment_graphs/default", map[string]any{"tasks": []any{
		shell("hiera", all), globals, shell("netconfig", all, "globals"),
		shell("database", controller, "netconfig"), shell("keystone", controller, "database"),
		shell("nova-compute", compute, "netconfig"), never, nova, ntp,
		map[string]any{"id": "legacy", "type": "skipped", "roles": all},
	}}, http.StatusCreated)

	// The nodes, by four clients at once (the store writes them one by one).
	var wg sync.WaitGroup
	ids := make(chan int)
	for range 4 {
		wg.Go(func() {
			for id := range ids {
				role := "compute"
				if id <= 3 {
					role = "controller"
				}
				a.call("POST", "/api/v1/nodes", map[string]any{"id": id, "fqdn": fmt.Sprintf("node-%d.console.test", id),
					"environment_id": 1, "roles": []string{role}, "levels": map[string]string{"role": role}}, http.StatusCreated)
			}
		})
	}
	for id := 1; id <= nodeCount; id++ {
		ids <- id
	}
	close(ids)
	wg.Wait()

	values := func(path string, doc map[string]any) {
		a.call("PUT", "/api/v1/config/environments/1"+path+"/resources/astute/values", doc, http.StatusNoContent)
	}
	values("", map[string]any{"region": "RegionOne", "debug": false, "ntp": []string{"0.pool.ntp.org"}})
	values("", map[string]any{"region": "RegionTwo", "debug": false, "ntp": []string{"0.pool.ntp.org", "1.pool.ntp.org"}, "syslog": "10.0.0.2"})
	values("/role/compute", map[string]any{"debug": true, "nova": map[string]any{"cpu_allocation_ratio": 8}})
	values("/role/compute/nodes/4", map[string]any{"hostname": "node-4", "nova": map[string]any{"cpu_allocation_ratio": 4}})
	values("/role/compute/nodes/5", map[string]any{"hostname": "node-5-SECRET"})
	a.call("POST", "/api/v1/users", map[string]any{"name": nodeUser, "password": nodePassword, "role": "node", "node": "node-4.console.test"}, http.StatusCreated)
	t.Logf("seeded %d nodes in %v", nodeCount, time.Since(start).Round(time.Millisecond))
}

// changeAfterRun gives changedNode a first successful run, executed with
// explain, its agent reporting every task done; then operator changes the
// node's nova.cpu_allocation_ratio (8, from the compute role's document) to 2,
// so that the plan runs nova-config there again, and says why. It returns
// the run's UUID.
func changeAfterRun(t *testing.T, a api) string {
	var tx wire.Transaction
	run := map[string]any{"cluster": 1, "explain": true, "graphs": []any{map[string]any{"type": "default", "nodes": []string{changedNode}}}}
	if err := json.Unmarshal(a.call("POST", "/api/v1/graphs/execute", run, http.StatusAccepted), &tx); err != nil {
		t.Fatal(err)
	}
	for done := false; !done; {
		var claim wire.Claim
		if err := json.Unmarshal(a.call("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/"+changedNode+"/claim", nil, http.StatusOK), &claim); err != nil {
			t.Fatal(err)
		}
		switch claim.Action {
		case "task":
			a.call("POST", "/api/v1/transactions/"+claim.Transaction+"/nodes/"+changedNode+"/result", wire.TaskReport{Task: claim.Task.ID(), Status: "ready"}, http.StatusOK)
		case "done":
			done = true
		default:
			t.Fatalf("node %s's claim in its first run: %+v", changedNode, claim)
		}
	}
	var ended wire.Transaction
	if err := json.Unmarshal(a.call("GET", "/api/v1/transactions/"+tx.UUID, nil, http.StatusOK), &ended); err != nil || ended.Status != "ready" {
		t.Fatalf("node %s's first run: %+v %v, want ready", changedNode, ended, err)
	}
	a.call("POST", "/api/v1/users", map[string]any{"name": operator, "password": operatorPassword, "role": "admin"}, http.StatusCreated)
	a.as(operator, operatorPassword).call("PUT", "/api/v1/config/environments/1/role/compute/nodes/"+changedNode+"/resources/astute/values",
		map[string]any{"nova": map[string]any{"cpu_allocation_ratio": 2}}, http.StatusNoContent)
	return tx.UUID
}

// browser is a headless chromium whose console errors (console.error calls,
// uncaught exceptions, error entries of the browser log such as a failed
// request or a Content-Security-Policy violation) are collected.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// startBrowser starts chromium with a profile in a temporary directory and
// stops it, by its PID, when the test ends.
func startBrowser(t *testing.T) *browser {
	path, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatal("chromium is not on the PATH: run console/test/run.sh")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
		chromedp.NoSandbox, // root in CI containers; the page is our own, on 127.0.0.1
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	b := &browser{ctx: ctx}
	messages := chromedp.Console(ctx) // starts the browser and its tab
	pid := chromedp.FromContext(ctx).Browser.Process().Pid
	read := make(chan struct{})
	go func() {
		defer close(read)
		for m, err := range messages {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				b.mu.Lock()
				b.errors = append(b.errors, fmt.Sprintf("%s (%s %s:%d)", m, m.Source, m.URL, m.Line+1))
				b.mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		cancelTimeout()
		cancel()
		cancelAlloc()
		<-read
		if syscall.Kill(pid, 0) == nil { // still there after chromedp's own shutdown
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return b
}

// do runs actions, failing the test with what is being checked.
func (b *browser) do(t *testing.T, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v\nthe page: %.2000s\nthe console's errors: %q", what, err, b.pageText(), b.consoleErrors())
	}
}

// pageText is the page's text, for a failure's message.
func (b *browser) pageText() string {
	ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
	defer cancel()
	text, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body ? document.body.innerText : ""`))
	if err != nil {
		return err.Error()
	}
	return text
}

// get runs action and returns its value, failing the test with what is being read.
func get[T any](t *testing.T, b *browser, what string, action chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, action)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

// screenshot saves the viewport as name.png in the artifacts directory.
func (b *browser) screenshot(t *testing.T, dir, name string) {
	t.Helper()
	png := get(t, b, "screenshot "+name, chromedp.CaptureScreenshot())
	if err := os.WriteFile(filepath.Join(dir, name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// text returns the text of the first element matching the CSS selector sel.
func (b *browser) text(t *testing.T, sel string) string {
	t.Helper()
	return get(t, b, "read "+sel, chromedp.Text(chromedp.CSS(sel)))
}

// rowCells returns the texts of the cells of the first row of the table sel
// whose text contains what.
func (b *browser) rowCells(t *testing.T, sel, what string) []string {
	t.Helper()
	return get(t, b, "read the row of "+sel+" with "+what, chromedp.Evaluate[[]string](fmt.Sprintf(
		`Array.from(Array.from(document.querySelectorAll(%q)).find((r) => r.innerText.includes(%q))?.cells ?? [], (c) => c.innerText.trim())`, sel+" tr", what)))
}

func (b *browser) login(t *testing.T, base, user, password string) {
	t.Helper()
	b.do(t, "log in as "+user,
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.ID("user")),
		chromedp.SendKeys(chromedp.ID("user"), user),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.ID("who")),
	)
}

func TestConsole(t *testing.T) {
	if os.Getenv("TUNINGBOX_CONSOLE_TEST") != "1" {
		t.Skip("set TUNINGBOX_CONSOLE_TEST=1 (console/test/run.sh) to drive the console in chromium")
	}
	artifacts := os.Getenv("TUNINGBOX_CONSOLE_ARTIFACTS")
	if artifacts == "" {
		artifacts = "artifacts"
	}
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	srv := apptest.StartServe(t, apptest.Build(t), apptest.ServeOptions{Admin: adminUser, Password: adminPassword})
	a := api{t: t, base: srv.URL, user: adminUser, password: adminPassword}
	seed(t, a)
	firstRun := changeAfterRun(t, a)
	b := startBrowser(t)

	// Login, then the first view: the clusters with their nodes' counts, runs
	// and first page of nodes.
	b.login(t, srv.URL, adminUser, adminPassword)
	firstPage := "#cluster-1 table.nodes tr:nth-child(101)"
	b.do(t, "the clusters view", chromedp.WaitVisible(chromedp.CSS(firstPage)))
	if who := b.text(t, "#who"); who != "admin (admin)" {
		t.Errorf("logged in as %q", who)
	}
	// With the session in the tab, a fresh load of the page draws the clusters
	// view: the time from navigating to the first page of nodes on screen,
	// the best of three loads (the CI machine is shared: one load can wait
	// for another process).
	var loads []time.Duration
	for range 3 {
		b.do(t, "leave the console", chromedp.Navigate("about:blank"))
		start := time.Now()
		b.do(t, "load the clusters view", chromedp.Navigate(srv.URL+"/ui/#/clusters"), chromedp.WaitVisible(chromedp.CSS(firstPage)))
		loads = append(loads, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("first view (clusters, %d nodes) drawn in %v (three loads)", nodeCount, loads)
	if best := slices.Min(loads); best > firstViewBudget {
		t.Errorf("the first view took at best %v, over %v", best, firstViewBudget)
	}
	if s := b.text(t, "#cluster-1"); !strings.Contains(s, "mitaka 9.0") || !strings.Contains(s, "1000 nodes (controller 3, compute 997)") {
		t.Errorf("cluster card: %.300s", s)
	}
	b.do(t, "filter the nodes", chromedp.SendKeys(chromedp.CSS("#cluster-1 .node-filter"), "node-1000."),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#cluster-1 table.nodes tr").length === 2`))
	if s := b.text(t, "#cluster-1 table.nodes"); !strings.Contains(s, "node-1000.console.test") {
		t.Errorf("filtered nodes: %.300s", s)
	}
	b.do(t, "clear the filter", chromedp.Navigate("about:blank"), chromedp.Navigate(srv.URL+"/ui/#/clusters"), chromedp.WaitVisible(chromedp.CSS(firstPage)))
	b.screenshot(t, artifacts, "clusters")

	// The plan: reasons of skipped tasks, and the graph drawn by Graphviz.
	start := time.Now()
	b.do(t, "the plan view", chromedp.Navigate(srv.URL+"/ui/#/plan/1"), chromedp.WaitVisible(chromedp.CSS("table.plan tr:nth-child(2)")))
	planDrawn := time.Since(start)
	b.do(t, "the graph's picture", chromedp.WaitVisible(chromedp.CSS("#graph svg")))
	if s := b.text(t, "table.plan"); !strings.Contains(s, "ceph-osd condition") || !strings.Contains(s, "legacy type") {
		t.Errorf("plan: no skipped tasks with their reasons in %.400s", s)
	}
	// Every page of the plan was read: the nodes of the last one are in it.
	var planPage wire.ClusterTasks
	if err := json.Unmarshal(a.call("GET", "/api/v1/clusters/1/serialized_tasks", nil, http.StatusOK), &planPage); err != nil || len(planPage.Links) == 0 {
		t.Fatalf("the plan of %d nodes fits in one page (%d nodes, %v): the test reads no next page", nodeCount, len(planPage.Nodes), err)
	}
	b.do(t, "the plan's last page", chromedp.WaitVisible(chromedp.ID("find-changes")))
	t.Logf("the plan of %d nodes: first page drawn in %v; every page read and the graph drawn in %v", nodeCount, planDrawn.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if s := b.text(t, "table.plan"); !strings.Contains(s, "4-6, 8-1000 (996)") || !strings.Contains(s, "1-3 (3)") {
		t.Errorf("plan: the nodes after the first page (%d nodes) are missing: %.400s", len(planPage.Nodes), s)
	}
	t.Logf("the plan's first page has %d of %d nodes", len(planPage.Nodes), nodeCount)
	if s := get(t, b, "read the graph", chromedp.TextContent(chromedp.CSS("#graph svg"))); !strings.Contains(s, "keystone") {
		t.Errorf("graph picture: %.200s", s)
	}
	b.screenshot(t, artifacts, "plan")

	// The changes since each node's last run, explained on demand, 100 nodes
	// a request: node 7's changed key, its old and new values and its writer.
	start = time.Now()
	b.do(t, "find the changes", chromedp.Click(chromedp.ID("find-changes")),
		chromedp.Poll[chromedp.Void](fmt.Sprintf(`(document.getElementById("changes-progress") || {}).textContent?.startsWith("All %d of %d")`, nodeCount, nodeCount), chromedp.WithPollingTimeout(25*time.Second)))
	t.Logf("the changes of %d nodes explained in %v", nodeCount, time.Since(start).Round(time.Millisecond))
	// Node 7's row: nodes, changed data, old → new, written, deployed, makes run.
	row := b.rowCells(t, "table.changes", "why on "+changedNode)
	if len(row) != 6 || row[0] != "7 (1) why on 7" || row[1] != "$.nova.cpu_allocation_ratio" || row[2] != "8 → 2" ||
		!strings.HasPrefix(row[3], "/role/compute/nodes/7/ version 1, ") || !strings.Contains(row[3], " by "+operator+" (admin, request req-") ||
		row[4] != "/role/compute/ version 1" || row[5] != "nova-config" {
		t.Errorf("node %s's changes: %q", changedNode, row)
	}
	b.do(t, "show the changes", chromedp.ScrollIntoView(chromedp.ID("changes")))
	b.screenshot(t, artifacts, "changes")

	// Why node 7 runs what it runs, from the changes' link: each task's
	// placement, decision, condition and data-diff calls with their writers.
	start = time.Now()
	b.do(t, "the explanation of node 7's plan", chromedp.Click(chromedp.CSS(`#changes a[href="#/why/1/`+changedNode+`"]`)),
		chromedp.WaitVisible(chromedp.CSS("table.why tr:nth-child(2)")))
	t.Logf("node %s's plan explained in %v (from the link)", changedNode, time.Since(start).Round(time.Millisecond))
	var whyLoads []time.Duration
	for range 3 {
		b.do(t, "leave the console", chromedp.Navigate("about:blank"))
		start := time.Now()
		b.do(t, "load the explanation", chromedp.Navigate(srv.URL+"/ui/#/why/1/"+changedNode), chromedp.WaitVisible(chromedp.CSS("table.why tr:nth-child(2)")))
		whyLoads = append(whyLoads, time.Since(start).Round(time.Millisecond))
	}
	t.Logf("node %s's plan explained in %v (three fresh loads)", changedNode, whyLoads)
	// Its changes, then each task: name, decision, placed by, condition and data.
	if row := b.rowCells(t, "#why-changes", "$.nova"); len(row) != 5 || row[0] != "$.nova.cpu_allocation_ratio" || row[1] != "8 → 2" ||
		!strings.Contains(row[2], " by "+operator+" (admin, request req-") || row[3] != "/role/compute/ version 1" || row[4] != "nova-config" {
		t.Errorf("node %s's changes: %q", changedNode, row)
	}
	if s := b.text(t, "#why"); !strings.Contains(s, "$%old is the data of the node's last successful run") {
		t.Errorf("node %s's explanation does not say whose data $%%old is: %.500s", changedNode, s)
	}
	nova := b.rowCells(t, "#why table.why", "nova-config")
	if len(nova) != 4 || nova[1] != "runs: its condition is true" || nova[2] != `role "compute" matches tag "compute" of role "compute" (roles_metadata "compute" tags)` {
		t.Errorf("nova-config on node %s: %q", changedNode, nova)
	} else {
		for _, want := range []string{
			"condition changed($.nova.cpu_allocation_ratio) is true", "compared $.nova.cpu_allocation_ratio: 8 → 2, answered true",
			"written at /role/compute/nodes/7/ version 1", "by " + operator + " (admin, request req-", "deployed: /role/compute/ version 1",
		} {
			if !strings.Contains(nova[3], want) {
				t.Errorf("nova-config on node %s: no %q in %q", changedNode, want, nova[3])
			}
		}
	}
	if ntp := b.rowCells(t, "#why table.why", "ntp-config"); len(ntp) != 4 || ntp[1] != "skipped: its condition is false" ||
		!strings.Contains(ntp[3], "condition changed($.ntp) is false") || !strings.Contains(ntp[3], "answered false") {
		t.Errorf("ntp-config on node %s: %q", changedNode, ntp)
	}
	b.screenshot(t, artifacts, "why")
	b.do(t, "filter the tasks", chromedp.SendKeys(chromedp.CSS("#why .task-filter"), "ntp"),
		chromedp.Poll[chromedp.Void](`document.querySelectorAll("#why table.why tr").length === 2`))
	if s := b.text(t, "#why table.why"); !strings.Contains(s, "ntp-config") {
		t.Errorf("the tasks filtered by ntp: %.300s", s)
	}

	// The first run was executed with explain: its plan says why node 7 ran each task.
	b.do(t, "the first run's explanation", chromedp.Navigate(srv.URL+"/ui/#/runs/"+firstRun), chromedp.WaitVisible(chromedp.ID("run-why-"+changedNode)),
		chromedp.Click(chromedp.CSS("#run-why-"+changedNode+" summary")), chromedp.WaitVisible(chromedp.CSS("#run-why-"+changedNode+" table.why")))
	if s := b.text(t, "#run-why-"+changedNode); !strings.Contains(s, "first deployment") || !strings.Contains(s, "nova-config") {
		t.Errorf("the first run's explanation of node %s: %.1500s", changedNode, s)
	}
	b.screenshot(t, artifacts, "run-why")

	// The hierarchy to node 4's effective document, each key with its layer.
	b.do(t, "the explain view", chromedp.Navigate(srv.URL+"/ui/#/config/1/4"), chromedp.WaitVisible(chromedp.CSS("table.explain tr:nth-child(2)")))
	if s := b.text(t, "table.explain"); !strings.Contains(s, "/role/compute/nodes/4/") || !strings.Contains(s, "RegionTwo") || !strings.Contains(s, "admin") {
		t.Errorf("explain: %.500s", s)
	}
	b.do(t, "the layers", chromedp.WaitVisible(chromedp.CSS(".layers .layer:nth-child(3) pre")))
	if s := b.text(t, ".layers"); !strings.Contains(s, "/role/compute/nodes/4") || !strings.Contains(s, `"cpu_allocation_ratio": 8`) || !strings.Contains(s, `"cpu_allocation_ratio": 4`) {
		t.Errorf("layers: %.500s", s)
	}
	b.screenshot(t, artifacts, "explain")

	// History: the global document's two versions and their diff.
	b.do(t, "the history view", chromedp.Navigate(srv.URL+"/ui/#/history/1"), chromedp.WaitVisible(chromedp.ID("diff")))
	if s := b.text(t, "#diff"); !strings.Contains(s, "RegionOne") || !strings.Contains(s, "RegionTwo") || !strings.Contains(s, "syslog") {
		t.Errorf("diff: %.400s", s)
	}
	b.screenshot(t, artifacts, "history")

	// A run, live: the view updates as an agent reports, without a reload.
	var tx wire.Transaction
	if err := json.Unmarshal(a.call("PUT", "/api/v1/clusters/1/deploy?nodes=1,2,3", nil, http.StatusAccepted), &tx); err != nil {
		t.Fatal(err)
	}
	b.do(t, "the run view", chromedp.Navigate(srv.URL+"/ui/#/runs/"+tx.UUID), chromedp.WaitVisible(chromedp.ID("run-node-1")))
	if s := b.text(t, "#run-node-1"); !strings.Contains(s, "pending") || !strings.Contains(s, "keystone") {
		t.Errorf("node 1 before any report: %q", s)
	}
	for _, task := range []string{"hiera", "globals"} {
		var claim wire.Claim
		if err := json.Unmarshal(a.call("POST", "/api/v1/clusters/1/nodes/1/claim", nil, http.StatusOK), &claim); err != nil || claim.Task.ID() != task {
			t.Fatalf("claim: %+v %v, want task %s", claim, err, task)
		}
		a.call("POST", "/api/v1/transactions/"+claim.Transaction+"/nodes/1/result", wire.TaskReport{Task: task, Status: "ready", Message: "done"}, http.StatusOK)
	}
	b.do(t, "the run view updates", chromedp.WaitVisible(chromedp.CSS(`#run-node-1 .task.s-ready:nth-child(2)`)))
	if s := b.text(t, "#run-node-1"); !strings.Contains(s, "running") {
		t.Errorf("node 1 after two reports: %q", s)
	}
	b.screenshot(t, artifacts, "run")

	// The audit log: the writes above, newest first.
	b.do(t, "the audit view", chromedp.Navigate(srv.URL+"/ui/#/audit"), chromedp.WaitVisible(chromedp.CSS("table.audit tr:nth-child(2)")))
	if s := b.text(t, "table.audit"); !strings.Contains(s, "/nodes/1/result") || !strings.Contains(s, "PUT /api/v1/clusters/1/deploy") {
		t.Errorf("audit: %.400s", s)
	}
	b.screenshot(t, artifacts, "audit")

	// Log out: the session's token no longer works.
	token := get(t, b, "the session's token", chromedp.Evaluate[string](`JSON.parse(sessionStorage.getItem("tuningbox.session")).token`))
	b.do(t, "log out", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login")))
	req, _ := http.NewRequest("GET", srv.URL+"/api/v1/config/environments", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("the ended session's token: %v %v, want 401", resp.Status, err)
	} else {
		resp.Body.Close()
	}

	// A node user sees its own node, and nothing of the cluster, whatever the address.
	b.login(t, srv.URL, nodeUser, nodePassword)
	b.do(t, "the node's view", chromedp.Navigate(srv.URL+"/ui/#/clusters"), chromedp.WaitVisible(chromedp.CSS("table.lookup tr:nth-child(2)")))
	page := b.text(t, "body")
	for _, want := range []string{"node-4.console.test", "cpu_allocation_ratio", "/role/compute/nodes/4/"} {
		if !strings.Contains(page, want) {
			t.Errorf("the node's view lacks %q: %.500s", want, page)
		}
	}
	for _, foreign := range []string{"node-5", "node-1.console.test", "Recent runs", "Audit log"} {
		if strings.Contains(page, foreign) {
			t.Errorf("the node's view shows %q", foreign)
		}
	}
	if n := get(t, b, "count the cluster sections", chromedp.Evaluate[int](`document.querySelectorAll("section.cluster").length`)); n != 0 {
		t.Errorf("a node user's page has %d cluster sections", n)
	}
	b.screenshot(t, artifacts, "node")

	// An observer logs in with an API token instead of a password.
	a.call("POST", "/api/v1/users", map[string]any{"name": "watcher", "password": "watcher-secret-pw", "role": "observer"}, http.StatusCreated)
	var created wire.CreatedToken
	if err := json.Unmarshal(a.call("POST", "/api/v1/tokens", map[string]any{"user": "watcher", "description": "console test"}, http.StatusCreated), &created); err != nil {
		t.Fatal(err)
	}
	b.do(t, "log in with an API token", chromedp.Click(chromedp.ID("logout")), chromedp.WaitVisible(chromedp.ID("login")),
		chromedp.Click(chromedp.CSS("#login button.link")), chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), created.Secret), chromedp.Click(chromedp.ID("login-submit")),
		chromedp.WaitVisible(chromedp.CSS(firstPage)))
	if who := b.text(t, "#who"); who != "watcher (observer)" {
		t.Errorf("logged in with a token as %q", who)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("the browser console has errors:\n%s", strings.Join(errs, "\n"))
	}
}
