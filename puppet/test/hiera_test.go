// Package puppettest runs real `puppet lookup` through tuningbox's Hiera 5
// backend (puppet/tuningbox) against a local `tuningbox serve`. It needs
// Puppet on the PATH and runs only with TUNINGBOX_HIERA_TEST=1 (run.sh sets
// it after installing puppet-agent), because every lookup starts Puppet (~1 s).
package puppettest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
)

// The bootstrap administrator seeds the data; Hiera reads as an observer, or
// as node-1's own `node` user.
const (
	adminUser     = "admin"
	adminPassword = "admin-secret"
	hieraUser     = "hiera"
	hieraPassword = "hiera-secret"
	nodeUser      = "node-1"
	nodePassword  = "node-1-secret"
)

// server is a running `tuningbox serve` (or local API Gateway) and the request log it writes.
type server struct {
	url    string
	bin    string
	caFile string // the CA clients trust, for an https server
	mu     sync.Mutex
	log    []requestLog
}

// requestLog is one request line of the server's JSON log.
type requestLog struct {
	Msg      string        `json:"msg"`
	Method   string        `json:"method"`
	Path     string        `json:"path"`
	Status   int           `json:"status"`
	Duration time.Duration `json:"duration"`
}

func (s *server) requests() []requestLog {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// requestsSince returns the request lines logged after the first before ones,
// once enough has arrived (or 5 s have passed) and the log is quiet. The
// server logs a request after answering it, and writes its lines in batches
// at most 100 ms late (shared/logwriter), so a client can exit before its
// last request's line is read: waiting for quiet also catches the lines of
// requests beyond enough.
func (s *server) requestsSince(before int, enough func([]requestLog) bool) []requestLog {
	deadline := time.Now().Add(5 * time.Second)
	for !enough(s.requests()[before:]) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	return s.quietRequests()[before:]
}

// logQuiet is how long no request line must come for the log to be quiet:
// past the server's 100 ms batching of log lines.
const logQuiet = 300 * time.Millisecond

// quietRequests returns the request lines once none has come for logQuiet:
// every request answered before the call is in them.
func (s *server) quietRequests() []requestLog {
	last := s.requests()
	for quiet := time.Now(); time.Since(quiet) < logQuiet; time.Sleep(20 * time.Millisecond) {
		if now := s.requests(); len(now) != len(last) {
			last, quiet = now, time.Now()
		}
	}
	return last
}

// logLine records a request line of the server's JSON log.
func (s *server) logLine(b []byte) {
	var line requestLog
	if json.Unmarshal(b, &line) != nil || line.Msg != "request" {
		return
	}
	s.mu.Lock()
	s.log = append(s.log, line)
	s.mu.Unlock()
}

// repoRoot is the module root, two directories up from this file.
func repoRoot(t *testing.T) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// startServer builds tuningbox and starts `serve` (apptest.StartServe) with
// the extra serve arguments, or, when run-integration.sh asks for it and
// there are none, the local API Gateway in front of the Lambda functions.
func startServer(t *testing.T, serveArgs ...string) *server {
	t.Helper()
	s := &server{bin: apptest.Build(t)}
	if len(serveArgs) == 0 {
		if s.url = apptest.StartGateway(t, adminUser, adminPassword, s.logLine); s.url != "" {
			return s
		}
	}
	s.url = apptest.StartServe(t, s.bin, apptest.ServeOptions{Admin: adminUser, Password: adminPassword, Args: serveArgs, OnLog: s.logLine}).URL
	return s
}

// cli runs the tuningbox client against the server.
func (s *server) cli(t *testing.T, stdin string, args ...string) {
	t.Helper()
	cmd := exec.Command(s.bin, append([]string{"--url", s.url, "--user", adminUser}, args...)...)
	cmd.Env = append(os.Environ(), "TUNINGBOX_PASSWORD="+adminPassword, "TUNINGBOX_CACERT="+s.caFile)
	cmd.Stdin = strings.NewReader(stdin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tuningbox %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// api is the administrator's API client; it trusts the server's CA, when it has one.
func (s *server) api(t *testing.T) *client.Client {
	t.Helper()
	opts := []client.Option{client.WithBasicAuth(adminUser, adminPassword)}
	if s.caFile != "" {
		opts = append(opts, client.WithCACertFile(s.caFile))
	}
	c, err := client.New(s.url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// createUser and createNode add a user and a node as the administrator.
func (s *server) createUser(t *testing.T, u client.NewUser) {
	t.Helper()
	if _, err := s.api(t).CreateUser(t.Context(), u); err != nil {
		t.Fatalf("create user %s: %v", u.Name, err)
	}
}

func (s *server) createNode(t *testing.T, n client.NewNode) {
	t.Helper()
	if _, err := s.api(t).CreateNode(t.Context(), n); err != nil {
		t.Fatalf("create node %s: %v", n.FQDN, err)
	}
}

// seed builds environment 1 with levels role and nodes: values at global,
// role and node levels, overrides at the role and node levels, and the
// Fuel-style override/node document keyed by FQDN. Hiera gets a read-only user.
func seed(t *testing.T, s *server) {
	s.createUser(t, client.NewUser{Name: hieraUser, Password: hieraPassword, Role: "observer"})
	s.createUser(t, client.NewUser{Name: nodeUser, Password: nodePassword, Role: "node", Node: "node-1.domain.tld"})
	s.cli(t, "", "comp", "create", "--name", "fuel",
		"--definition", "astute", "--definition", "globals", "--definition", "override/plugins", "--definition", "override/node")
	s.cli(t, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "role,nodes")
	s.createNode(t, client.NewNode{ID: "7", FQDN: "node-1.domain.tld", EnvironmentID: "1", Roles: []string{"controller"}, Levels: map[string]string{"role": "controller"}})
	s.createNode(t, client.NewNode{ID: "8", FQDN: "node-2.domain.tld", EnvironmentID: "1", Roles: []string{"compute"}, Levels: map[string]string{"role": "compute"}})

	set := func(level, resource, yaml string) {
		args := []string{"config", "set", "--env", "1", "--resource", resource, "--format", "yaml"}
		if level != "" {
			args = append(args, "--level", level)
		}
		s.cli(t, yaml, args...)
	}
	set("", "astute", `
deployment_id: 1
only_global: from-global
role_key: global-value
services: {nova: {workers: 2}, glance: {workers: 2}}
greeting: "hello %{facts.hostname}"
`)
	set("", "globals", "ntp_server: pool.ntp.org\n")
	set("", "override/plugins", "plugin_flag: from-plugin\n")
	set("role=controller", "astute", "role_key: controller-value\ndeployment_id: 2\n")
	set("role=compute", "astute", "role_key: compute-value\n")
	set("role=controller,nodes=node-1.domain.tld", "astute", `
uid: "7"
deployment_id: 5
services: {nova: {workers: 8, api: true}}
`)
	set("role=compute,nodes=node-2.domain.tld", "astute", "uid: \"8\"\ndeployment_id: 6\n")
	set("role=controller,nodes=node-1.domain.tld", "override/node", `
node-1.domain.tld: {ntp_server: 10.0.0.1, plugin_flag: node-override}
node-2.domain.tld: {ntp_server: must-not-leak}
`)
	// Written by id, read by certname (checkStockHieraHTTP): in environment 1 ([role, nodes]) and
	// environment 2 ([nodes]), where node-3 is node 9.
	set("role=controller,nodes=7", "globals", "written_by: id 7\n")
	s.cli(t, "", "env", "create", "--id", "2", "--components", "fuel", "--levels", "nodes")
	s.createNode(t, client.NewNode{ID: "9", FQDN: "node-3.domain.tld", EnvironmentID: "2"})
	s.cli(t, "deployment_id: 9\nwritten_by: id 9\n", "config", "set", "--env", "2", "--level", "nodes=9", "--resource", "astute", "--format", "yaml")
	s.cli(t, "region: env-2\n", "config", "set", "--env", "2", "--resource", "astute", "--format", "yaml")
	// Overrides: at node-1 over its own uploaded deployment_id; at the compute role over role_key.
	s.cli(t, "", "config", "override", "--env", "1", "--level", "role=controller,nodes=node-1.domain.tld", "--resource", "astute", "--key", "deployment_id", "--value", "42")
	s.cli(t, "", "config", "override", "--env", "1", "--level", "role=compute", "--resource", "astute", "--key", "role_key", "--value", "compute-override")
}

// hieraYAML is the hierarchy of the test: the Fuel order (override/node,
// override/plugins, globals, astute). Only the node is given, by certname: the
// server takes its role from the registry (the short path).
const hieraYAML = `version: 5
defaults:
  data_hash: tuningbox::data_hash
hierarchy:
  - name: "override/node"
    uri: &tuningbox "%s"
    options: &node
      environment: "1"
      node: "%%{trusted.certname}"
      user: %s
      password: %s
      open_timeout: 2
      read_timeout: 5
      resource: "override/node/%%{facts.fqdn}"
      split: true
  - name: "override/plugins"
    uri: *tuningbox
    options: { <<: *node, resource: "override/plugins", split: false }
  - name: "globals"
    uri: *tuningbox
    options: { <<: *node, resource: "globals", split: false }
  - name: "astute"
    uri: *tuningbox
    options: { <<: *node, resource: "astute", split: false }
`

// dataSources is the number of entries of hieraYAML: each costs one request per lookup.
const dataSources = 4

// puppet is a Puppet installation confined to a temporary directory, with the
// tuningbox module on its module path.
type puppet struct {
	dir, hieraConfig string
}

func newPuppet(t *testing.T, root, hieraConfig string) *puppet {
	t.Helper()
	dir := t.TempDir()
	modules := filepath.Join(dir, "code", "environments", "production", "modules")
	for _, d := range []string{modules, filepath.Join(dir, "conf"), filepath.Join(dir, "var")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	module, err := filepath.Abs(filepath.Join(root, "puppet", "tuningbox"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(module, filepath.Join(modules, "tuningbox")); err != nil {
		t.Fatal(err)
	}
	p := &puppet{dir: dir, hieraConfig: filepath.Join(dir, "hiera.yaml")}
	if err := os.WriteFile(p.hieraConfig, []byte(hieraConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// facts writes the facts file of a node: puppet lookup needs clientcert (for
// trusted.certname), fqdn, hostname and domain together.
func (p *puppet) facts(t *testing.T, fqdn, role string) string {
	t.Helper()
	host, domain, _ := strings.Cut(fqdn, ".")
	path := filepath.Join(p.dir, fqdn+".facts.yaml")
	content := fmt.Sprintf("clientcert: %s\nfqdn: %s\nhostname: %s\ndomain: %s\nrole: %s\n", fqdn, fqdn, host, domain, role)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// lookup runs `puppet lookup key` for a node and returns the value as JSON,
// whether it was found, and the wall time.
func (p *puppet) lookup(t *testing.T, fqdn, factsFile, key string) (string, bool, time.Duration) {
	t.Helper()
	stdout, stderr, elapsed, err := p.run(fqdn, factsFile, key)
	if err != nil {
		// puppet lookup exits 1 with empty output when no hierarchy level has the key.
		if stdout == "" && !strings.Contains(stderr, "Error") {
			return "", false, elapsed
		}
		t.Fatalf("puppet lookup %s for %s: %v\nstdout: %s\nstderr: %s", key, fqdn, err, stdout, stderr)
	}
	return stdout, true, elapsed
}

// run runs `puppet lookup key` for a node.
func (p *puppet) run(fqdn, factsFile, key string) (stdout, stderr string, elapsed time.Duration, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "puppet", "lookup", key,
		"--node", fqdn, "--facts", factsFile, "--hiera_config", p.hieraConfig, "--render-as", "json",
		"--confdir", filepath.Join(p.dir, "conf"), "--vardir", filepath.Join(p.dir, "var"),
		"--codedir", filepath.Join(p.dir, "code"), "--environment", "production", "--color=false")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	err = cmd.Run()
	return strings.TrimSpace(out.String()), errOut.String(), time.Since(start), err
}

func canonical(t *testing.T, s string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("not JSON: %q", s)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func TestPuppetLookupThroughTuningbox(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to run real puppet lookups")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Fatal("puppet is not on the PATH: run puppet/test/run.sh, which installs puppet-agent")
	}
	root := repoRoot(t)
	srv := startServer(t)
	seed(t, srv)
	p := newPuppet(t, root, fmt.Sprintf(hieraYAML, srv.url, hieraUser, hieraPassword))
	node1 := p.facts(t, "node-1.domain.tld", "controller")
	node2 := p.facts(t, "node-2.domain.tld", "compute")

	tests := []struct {
		node, facts, key string
		want             string // JSON; "" = not found
		why              string
	}{
		{"node-1.domain.tld", node1, "deployment_id", "42", "the node-level override beats the node's value 5 and the role's 2"},
		{"node-1.domain.tld", node1, "role_key", `"controller-value"`, "role level beats global"},
		{"node-1.domain.tld", node1, "only_global", `"from-global"`, "a key only at the global level"},
		{"node-1.domain.tld", node1, "services", `{"nova":{"workers":8,"api":true}}`, "a hash value; top-level keys replace, they do not deep-merge"},
		{"node-1.domain.tld", node1, "ntp_server", `"10.0.0.1"`, "override/node/<fqdn> split into resource override/node, key fqdn"},
		{"node-1.domain.tld", node1, "plugin_flag", `"node-override"`, "override/node comes before override/plugins in the hierarchy"},
		{"node-1.domain.tld", node1, "no_such_key", "", "a missing key is not found"},
		{"node-2.domain.tld", node2, "deployment_id", "6", "the node's own value; node-1's override does not leak"},
		{"node-2.domain.tld", node2, "role_key", `"compute-override"`, "a role-level override beats the role's value"},
		{"node-2.domain.tld", node2, "ntp_server", `"pool.ntp.org"`, "no override/node data at node-2's level: globals"},
		{"node-2.domain.tld", node2, "greeting", `"hello node-2"`, "Hiera interpolates facts in returned strings"},
	}
	var walls []time.Duration
	for _, tt := range tests {
		before := len(srv.quietRequests())
		got, found, wall := p.lookup(t, tt.node, tt.facts, tt.key)
		walls = append(walls, wall)
		requests := len(srv.requestsSince(before, func(r []requestLog) bool { return len(r) >= dataSources }))
		shown := got
		if !found {
			shown = "(not found)"
		}
		t.Logf("%-18s %-14s = %-36s %5d ms, %d requests  (%s)", tt.node, tt.key, shown, wall.Milliseconds(), requests, tt.why)
		// One request per data source of the hierarchy, none to the node registry.
		if requests != dataSources {
			t.Errorf("%s %s: %d requests, want %d (one per data source)", tt.node, tt.key, requests, dataSources)
		}
		switch {
		case tt.want == "" && found:
			t.Errorf("%s %s: found %s, want not found", tt.node, tt.key, got)
		case tt.want != "" && !found:
			t.Errorf("%s %s: not found, want %s (%s)", tt.node, tt.key, tt.want, tt.why)
		case tt.want != "" && canonical(t, got) != canonical(t, tt.want):
			t.Errorf("%s %s = %s, want %s (%s)", tt.node, tt.key, got, tt.want, tt.why)
		}
	}
	for _, r := range srv.requests() {
		if r.Method == http.MethodGet && strings.HasPrefix(r.Path, "/api/v1/nodes") {
			t.Errorf("Hiera asked the node registry: %s %s", r.Method, r.Path)
		}
	}
	reportLatency(t, walls, srv.requests())
	checkNodeCredentials(t, root, srv.url, node1, node2)
	baselineLookup(t, root, node1)
	checkRevalidation(t, root, srv)
	checkStockHieraHTTP(t, root, srv, node1)
}

// checkNodeCredentials runs Hiera on node-1 as node-1's own `node` user: its
// lookups work (its own node by FQDN, at its own placement), and the same
// credentials cannot read node-2's data: the lookup fails on the 403 instead
// of finding nothing.
func checkNodeCredentials(t *testing.T, root, url, node1Facts, node2Facts string) {
	p := newPuppet(t, root, fmt.Sprintf(hieraYAML, url, nodeUser, nodePassword))
	if got, found, _ := p.lookup(t, "node-1.domain.tld", node1Facts, "deployment_id"); !found || got != "42" {
		t.Errorf("node-1 as itself: deployment_id = %q (found %v), want 42", got, found)
	}
	stdout, stderr, _, err := p.run("node-2.domain.tld", node2Facts, "deployment_id")
	if err == nil || !strings.Contains(stderr, "403") {
		t.Errorf("node-1's credentials for node-2's data: err %v, stdout %q, stderr %q; want a failed lookup naming the 403", err, stdout, stderr)
	}
	t.Logf("node credentials: node-1 reads its own deployment_id 42; its lookup for node-2 fails with %s", firstLine(stderr, "403"))
}

// firstLine returns the first line of s that contains substr.
func firstLine(s, substr string) string {
	for line := range strings.Lines(s) {
		if strings.Contains(line, substr) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

// baselineLookup times one puppet lookup from a local YAML file, the cost of
// starting Puppet that every lookup above includes.
func baselineLookup(t *testing.T, root, factsFile string) {
	p := newPuppet(t, root, "version: 5\nhierarchy:\n  - name: common\n    path: common.yaml\n")
	if err := os.MkdirAll(filepath.Join(p.dir, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, "data", "common.yaml"), []byte("deployment_id: 42\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, found, wall := p.lookup(t, "node-1.domain.tld", factsFile, "deployment_id")
	if !found || got != "42" {
		t.Fatalf("baseline lookup from YAML = %q, found %v", got, found)
	}
	t.Logf("baseline: the same lookup from a local YAML file takes %v (Puppet start-up)", wall.Round(time.Millisecond))
}

// reportLatency logs the lookup wall times and the server's time per Hiera request.
func reportLatency(t *testing.T, walls []time.Duration, log []requestLog) {
	var serverTimes []time.Duration
	for _, r := range log {
		if r.Method == http.MethodGet && strings.HasSuffix(r.Path, "/values") {
			serverTimes = append(serverTimes, r.Duration)
		}
	}
	slices.Sort(walls)
	slices.Sort(serverTimes)
	pct := func(d []time.Duration, p float64) time.Duration {
		if len(d) == 0 {
			return 0
		}
		return d[int(p*float64(len(d)-1))]
	}
	t.Logf("puppet lookup wall time over %d lookups: min %v, median %v, max %v",
		len(walls), walls[0].Round(time.Millisecond), pct(walls, 0.5).Round(time.Millisecond), walls[len(walls)-1].Round(time.Millisecond))
	t.Logf("server time per effective read over %d requests: median %v, p90 %v, max %v",
		len(serverTimes), pct(serverTimes, 0.5), pct(serverTimes, 0.9), pct(serverTimes, 1))
}

// checkRevalidation reads one data source repeatedly through the backend's
// Ruby code in one process, as a Puppet server does across compiles: after
// the first read every read is a 304 revalidation of the cached document.
// It also times reads from Ruby, with and without the cached document.
func checkRevalidation(t *testing.T, root string, srv *server) {
	const reads = 200
	script := fmt.Sprintf(`
require 'puppet_x/tuningbox/source'
opts = {'uri' => %q, 'environment' => '1', 'levels' => {'role' => 'controller'}, 'node' => 'node-1.domain.tld', 'resource' => 'astute',
        'user' => %q, 'password' => %q}
first = PuppetX::Tuningbox::Source.new(opts).data
second = PuppetX::Tuningbox::Source.new(opts).data
raise "documents differ" unless first == second
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
%d.times { PuppetX::Tuningbox::Source.new(opts).data }
revalidated = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - start) / %d
documents = PuppetX::Tuningbox::Source.instance_variable_get(:@documents)
start = Process.clock_gettime(Process::CLOCK_MONOTONIC)
%d.times { documents.clear; PuppetX::Tuningbox::Source.new(opts).data }
fetched = (Process.clock_gettime(Process::CLOCK_MONOTONIC) - start) / %d
puts first['deployment_id'], (fetched * 1e6).round, (revalidated * 1e6).round
`, srv.url, hieraUser, hieraPassword, reads, reads, reads, reads)
	before := len(srv.quietRequests())
	cmd := exec.Command("ruby", "-I", filepath.Join(root, "puppet", "tuningbox", "lib"), "-e", script)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ruby: %v\n%s", err, out)
	}
	fields := strings.Fields(string(out))
	if len(fields) != 3 || fields[0] != "42" {
		t.Fatalf("backend read deployment_id: output %q, want 42 and two timings", out)
	}
	effective := regexp.MustCompile(`/resources/astute/values$`)
	want := []int{http.StatusOK}
	for range reads + 1 {
		want = append(want, http.StatusNotModified)
	}
	for range reads {
		want = append(want, http.StatusOK)
	}
	matching := func(logged []requestLog) []int {
		var statuses []int
		for _, r := range logged {
			if effective.MatchString(r.Path) {
				statuses = append(statuses, r.Status)
			}
		}
		return statuses
	}
	statuses := matching(srv.requestsSince(before, func(r []requestLog) bool { return len(matching(r)) >= len(want) }))
	if !slices.Equal(statuses, want) {
		t.Errorf("statuses of repeated reads in one process: %d requests, want 1 x 200, %d x 304, %d x 200", len(statuses), reads+1, reads)
	}
	t.Logf("backend read from Ruby (Net::HTTP, one connection per read), mean of %d: %s us with a full 200, %s us revalidated with a 304", reads, fields[1], fields[2])
}
