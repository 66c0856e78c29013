package graphs_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestAgentPollsAreNotAudited: of an agent's calls, the claim that hands out
// a task or passes steps and the report are audited; idle claims, heartbeats
// (recorded or not as the node's last sign of life), waiting claims that pass
// nothing and the claim that finds the node done leave no record.
func TestAgentPollsAreNotAudited(t *testing.T) {
	b := mem.New()
	clock := graphstest.NewClock()
	s := graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": {{ID: "n1", Roles: []string{"a"}}, {ID: "n2", Roles: []string{"b"}}}},
		graphs.WithClock(clock.Now), graphs.WithHeartbeat(10*time.Second))
	log := audit.New(b.Index, nil)
	ctx := context.Background()
	setupExecution(t, s)

	// audited runs call as one audited request and says whether it left a record.
	records := 0
	audited := func(name string, call func(ctx context.Context) error) bool {
		t.Helper()
		rctx, w := log.Begin(ctx, audit.Record{Principal: "node-n1", Role: "node", Method: "POST", Path: name})
		if err := call(rctx); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := w.Finish(rctx, 200); err != nil {
			t.Fatal(err)
		}
		got, err := log.List(ctx, audit.Query{Limit: audit.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		wrote := len(got) > records
		records = len(got)
		return wrote
	}
	claim := func(want string) func(ctx context.Context) error {
		return func(ctx context.Context) error {
			c, err := s.ClaimInCluster(ctx, 1, "n1", 0, nil)
			if err == nil && c.Action != want {
				t.Fatalf("claim = %+v, want %s", c, want)
			}
			return err
		}
	}
	if audited("idle claim", claim(graphs.ActionIdle)) {
		t.Error("an idle claim was audited")
	}
	tx, err := s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade", Nodes: []graphs.NodeID{"n1"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !audited("claim handing out a task", claim(graphs.ActionTask)) {
		t.Error("the claim that handed out a task was not audited")
	}
	if audited("heartbeat", claim(graphs.ActionTask)) {
		t.Error("a heartbeat was audited")
	}
	clock.Advance(10 * time.Second) // this heartbeat records the node's last sign of life
	if audited("recorded heartbeat", claim(graphs.ActionTask)) {
		t.Error("a heartbeat that recorded the node's last sign of life was audited")
	}
	if !audited("report", func(ctx context.Context) error {
		_, err := s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "u", Status: graphs.StatusReady})
		return err
	}) {
		t.Error("a report was not audited")
	}
	if audited("claim when done", claim(graphs.ActionIdle)) {
		t.Error("a claim after the run was audited")
	}

	// n1 passes the skipped task s, then waits for x on n2.
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "waits", tasksInput(`[
		{"id":"s","type":"skipped","role":["a"]},
		{"id":"w","type":"shell","role":["a"],"requires":["s"],"cross-depends":[{"name":"x","role":"b"}]},
		{"id":"x","type":"shell","role":["b"]}]`), false))
	if _, err := s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "waits"}}}); err != nil {
		t.Fatal(err)
	}
	if !audited("waiting claim passing a step", claim(graphs.ActionWait)) {
		t.Error("the claim that passed a step was not audited")
	}
	if audited("waiting claim", claim(graphs.ActionWait)) {
		t.Error("a waiting claim that passed nothing was audited")
	}
}
