package main

import (
	"context"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// fastRunPolls makes graph run wait read the run every 10 ms during a test.
func fastRunPolls(t *testing.T) {
	interval := runPollInterval
	t.Cleanup(func() { runPollInterval = interval })
	runPollInterval = 10 * time.Millisecond
}

func execute(t *testing.T, url string, args ...string) string {
	t.Helper()
	out := mustCLI(t, url, "", append([]string{"graph", "execute", "-e", "1", "--format", "json"}, args...)...)
	return jsonOut(t, out).(map[string]any)["uuid"].(string)
}

// graph run list, show, wait and stop; a node that never claims fails the
// run after the claim timeout (the server's clock is a fake one here).
func TestGraphRunCommands(t *testing.T) {
	fastRunPolls(t)
	clock := graphstest.NewClock()
	url := graphServer(t, graphs.WithClock(clock.Now))
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default", "-f", writeFile(t, "tasks.yaml", "- {id: a, type: shell}\n"))
	c, err := newAPIClient()
	must(t, err)
	ctx := context.Background()

	tx := execute(t, url, "--claim-timeout", "5s")
	if claim, err := c.Claim(ctx, tx, "1"); err != nil || claim.Action != "task" || claim.Task.ID() != "a" {
		t.Fatalf("claim: %+v %v", claim, err)
	}
	show := mustCLI(t, url, "", "graph", "run", "show", tx)
	for _, want := range []string{"Run " + tx + ": running", "Graphs: default:running", "GRAPH", "default  1     running  a (", "default  2     pending"} {
		if !strings.Contains(show, want) {
			t.Fatalf("show lacks %q:\n%s", want, show)
		}
	}
	if list := mustCLI(t, url, "", "graph", "run", "list", "-e", "1", "--status", "running"); !strings.Contains(list, tx) || !strings.Contains(list, "default:running") {
		t.Fatalf("list:\n%s", list)
	}
	out, err := cli(t, url, "", "graph", "run", "wait", tx, "--timeout", "50ms")
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "still running after 50ms") || !strings.Contains(out, "default node 1: running a\n") {
		t.Fatalf("wait with a timeout: %v (exit %d)\n%s", err, exitCode(err), out)
	}

	clock.Advance(5*time.Second + time.Millisecond)
	out, err = cli(t, url, "", "graph", "run", "wait", tx)
	if exitCode(err) != 1 || err.Error() != "Run "+tx+": error: Node 2 unreachable: no claim within 5s" {
		t.Fatalf("wait on a run with an absent node: %v (exit %d)\n%s", err, exitCode(err), out)
	}
	if list := mustCLI(t, url, "", "graph", "run", "list", "--status", "running"); strings.Contains(list, tx) {
		t.Fatalf("still listed as running:\n%s", list)
	}

	tx = execute(t, url)
	if out := mustCLI(t, url, "", "graph", "run", "stop", tx); out != "Run "+tx+" stopped (error)\n" {
		t.Fatalf("stop: %q", out)
	}
	if _, err := cli(t, url, "", "graph", "run", "wait", tx); exitCode(err) != 1 || !strings.HasSuffix(err.Error(), ": error: Stopped") {
		t.Fatalf("wait on a stopped run: %v", err)
	}
	if _, err := cli(t, url, "", "graph", "run", "stop", tx); exitCode(err) != 1 || !strings.Contains(err.Error(), "is not running") {
		t.Fatalf("stopping twice: %v", err)
	}
	// The stopped run again, its nodes having run nothing: a new run of the same graph on both.
	again := jsonOut(t, mustCLI(t, url, "", "graph", "run", "retry", tx, "--failed", "--format", "json")).(map[string]any)
	if again["uuid"] == tx || again["status"] != "running" {
		t.Fatalf("retry: %v", again)
	}
	mustCLI(t, url, "", "graph", "run", "stop", again["uuid"].(string))
	// Skipping the graph's only task leaves the nodes nothing to do: the run is done at once.
	if run := jsonOut(t, mustCLI(t, url, "", "graph", "execute", "-e", "1", "--skip-tasks", "a", "--format", "json")).(map[string]any); run["status"] != "ready" {
		t.Fatalf("execute --skip-tasks a: %v", run)
	}

	tx = execute(t, url, "--node", "1")
	if _, err := c.Claim(ctx, tx, "1"); err != nil {
		t.Fatal(err)
	}
	must(t, c.Report(ctx, tx, "1", client.TaskReport{Task: "a", Status: "ready"}))
	out = mustCLI(t, url, "", "graph", "run", "wait", tx)
	if !strings.Contains(out, "default node 1: ready 1 done\n") || !strings.Contains(out, "Run "+tx+": ready\n") {
		t.Fatalf("wait on a finished run:\n%s", out)
	}

	// On a terminal the lines are redrawn in place.
	terminal := stdoutIsTerminal
	t.Cleanup(func() { stdoutIsTerminal = terminal })
	stdoutIsTerminal = func(io.Writer) bool { return true }
	tx = execute(t, url)
	out, err = cli(t, url, "", "graph", "run", "wait", tx, "--timeout", "50ms")
	if exitCode(err) != 2 || !strings.Contains(out, "\x1b[4A\x1b[J") {
		t.Fatalf("wait on a terminal: %v\n%q", err, out)
	}

	for _, args := range [][]string{{"graph", "run", "show"}, {"graph", "run", "wait", tx, "--timeout", "-1s"}, {"graph", "execute", "-e", "1", "--claim-timeout", "0s"}} {
		if _, err := cli(t, url, "", args...); exitCode(err) != 2 {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

// A node's row names its FQDN, its failed tasks and those not run because of a failure.
func TestNodeRowFailures(t *testing.T) {
	sub := client.Transaction{GraphType: "default", FQDNs: map[string]string{"3": "comp-2.example"}}
	p := client.NodeProgress{Node: "3", Status: graphs.StatusError, Results: []wire.TaskResult{
		{Task: "hiera", Status: graphs.StatusReady}, {Task: "nova", Status: graphs.StatusError, Message: "exit status 1"},
		{Task: "nova-after", Status: graphs.StatusDepFailed}, {Task: "ceilometer", Status: graphs.StatusDepFailed}}}
	row := nodeRow(sub, p, time.Now())
	want := []string{"default", "3 (comp-2.example)", "error", "", "4", "nova: exit status 1; dep_failed: nova-after, ceilometer"}
	if !slices.Equal(row, want) {
		t.Fatalf("row = %q, want %q", row, want)
	}
}
