package graphs_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func seconds(s float64) *float64 { return &s }

// wantEnded checks that a transaction ended in error with message, released its cluster, and that claims answer done.
func wantEnded(t *testing.T, s *graphs.Service, tx, message string, nodes ...string) {
	t.Helper()
	ctx := context.Background()
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx))
	if view.Status != graphs.StatusError || view.Message != message || view.SubTransactions[0].Message != message {
		t.Fatalf("transaction = %s %q, want error %q", view.Status, view.Message, message)
	}
	for _, n := range nodes {
		wantAction(t, s, tx, n, graphs.ActionDone)
	}
	running := must[[]graphs.Transaction](t)(s.Transactions(ctx, graphs.TransactionFilter{Status: graphs.StatusRunning}))
	if len(running) != 0 {
		t.Fatalf("still running: %+v", running)
	}
	must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}}))
}

// A node without tasks in a sub-transaction is ready from its start; a
// sub-transaction, or a whole execution, where no node has work is done at once.
func TestNodesWithoutTasksAreReadyAtOnce(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	o := graphs.Owner{Kind: graphs.Cluster, ID: 3}
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "default", tasksInput(
		`[{"id":"ctl","type":"shell","roles":["controller","primary-controller"]},{"id":"grp","type":"group","roles":["compute"],"requires":["ctl"]}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "nothing", tasksInput(`[{"id":"st","type":"stage"},{"id":"none","type":"shell","roles":["storage"]}]`), false))
	three := int64(3)

	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: &three, Graphs: []graphs.GraphRun{{Type: "default"}, {Type: "nothing"}}}))
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
	if sub.Nodes[2].Node != "3" || sub.Nodes[2].Status != graphs.StatusReady || sub.Nodes[0].Status != graphs.StatusPending {
		t.Fatalf("nodes at the start: %+v", sub.Nodes)
	}
	// Node 3 takes part in the next graph: it waits.
	wantAction(t, s, tx.UUID, "3", graphs.ActionWait)
	drive(t, s, tx.UUID, "1", "ctl", "ready")
	drive(t, s, tx.UUID, "2", "ctl", "ready")
	// The last report ended "default"; "nothing" has no work anywhere: the transaction is ready.
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.Status != graphs.StatusReady || view.SubTransactions[1].Status != graphs.StatusReady {
		t.Fatalf("after the last task: %+v", view)
	}
	wantAction(t, s, tx.UUID, "3", graphs.ActionDone)

	idle := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: &three, Graphs: []graphs.GraphRun{{Type: "nothing"}, {Type: "nothing"}}}))
	if idle.Status != graphs.StatusReady || idle.TimeEnd == nil || idle.SubTransactions[1].Status != graphs.StatusReady {
		t.Fatalf("an execution without work: %+v", idle)
	}
	// It holds no lock.
	must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: &three, Graphs: []graphs.GraphRun{{Type: "nothing"}}}))
}

// A node that does not claim within the claim timeout fails the run, naming
// it; a node that claimed and waits for others does not.
func TestClaimTimeout(t *testing.T) {
	ctx := context.Background()
	clock := graphstest.NewClock()
	s := newService(t, graphs.WithClock(clock.Now))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(
		`[{"id":"a","type":"shell"},{"id":"b","type":"shell","requires":["a"],"cross-depends":[{"name":"a"}]}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "upgrade", tasksInput(`[{"id":"u","type":"shell"}]`), false))

	_, err := s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}, ClaimTimeout: seconds(0)})
	wantKind(t, err, errs.Invalid, "claim_timeout: must be a number of seconds above 0")

	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}, ClaimTimeout: seconds(5)}))
	if tx.ClaimTimeout != 5 {
		t.Fatalf("claim_timeout = %v", tx.ClaimTimeout)
	}
	drive(t, s, tx.UUID, "n1", "a", "ready")
	clock.Advance(4 * time.Second)
	// n1 waits for n2's "a": it has claimed, so only n2 is late.
	wantAction(t, s, tx.UUID, "n1", graphs.ActionWait)
	if view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID)); view.Status != graphs.StatusRunning {
		t.Fatalf("before the timeout: %+v", view)
	}
	clock.Advance(1500 * time.Millisecond)
	wantEnded(t, s, tx.UUID, "Node n2 unreachable: no claim within 5s", "n1", "n2")
}

// An agent that stops claiming (heartbeats) while it runs a task is lost
// after three heartbeats; one that goes on claiming is not.
func TestLostHeartbeat(t *testing.T) {
	ctx := context.Background()
	clock := graphstest.NewClock()
	s := newService(t, graphs.WithClock(clock.Now), graphs.WithHeartbeat(10*time.Second))
	setupExecution(t, s)
	start := clock.Now()
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	if c := wantAction(t, s, tx.UUID, "n1", graphs.ActionTask); c.Heartbeat != 10 {
		t.Fatalf("claim = %+v, want heartbeat 10", c)
	}
	wantAction(t, s, tx.UUID, "n2", graphs.ActionTask)
	for range 3 {
		clock.Advance(10 * time.Second)
		if c := wantAction(t, s, tx.UUID, "n1", graphs.ActionTask); c.Task.ID() != "a" {
			t.Fatalf("heartbeat claim = %+v", c)
		}
	}
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
	if seen := sub.Nodes[0].LastSeen; seen == nil || !seen.Equal(clock.Now()) {
		t.Fatalf("n1 last seen %v, want %v", seen, clock.Now())
	}
	clock.Advance(time.Second)
	wantEnded(t, s, tx.UUID, "Node n2 lost: no heartbeat since "+start.Format(time.RFC3339), "n1")
}

// A task still running after its timeout (times its attempts) and the grace
// fails the run, even while its agent sends heartbeats.
func TestTaskTimeout(t *testing.T) {
	ctx := context.Background()
	clock := graphstest.NewClock()
	s := newService(t, graphs.WithClock(clock.Now))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(
		`[{"id":"slow","type":"shell","parameters":{"cmd":"sleep 1000","timeout":10,"retries":1,"interval":2}}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "upgrade", tasksInput(`[{"id":"u","type":"shell"}]`), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"n1"}}}}))
	wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	// 2 attempts of 10 s, 2 s apart, and a minute's grace: 82 s.
	for range 4 {
		clock.Advance(20 * time.Second)
		wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	}
	clock.Advance(3 * time.Second)
	_, err := s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "slow", Status: graphs.StatusReady})
	wantKind(t, err, errs.Conflict, "is not running (status: error)")
	wantEnded(t, s, tx.UUID, "Task slow timed out on node n1 after 22s", "n1")
}

// The local server's periodic check ends an overdue run without any request.
func TestEnforceDeadlines(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	clock := graphstest.NewClock()
	s := graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": graphstest.Nodes("n1")}, graphs.WithClock(clock.Now))
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}}))
	// The stored record, read past the service (whose every read checks deadlines).
	stored := func() (status, message string) {
		t.Helper()
		var rec graphs.TransactionInfo
		if _, err := store.GetJSON(ctx, b.Index, store.Key{Partition: "gr#tx", Sort: tx.UUID}, &rec); err != nil {
			t.Fatal(err)
		}
		return rec.Status, rec.Message
	}
	if err := s.EnforceDeadlines(ctx); err != nil {
		t.Fatal(err)
	}
	clock.Advance(graphs.DefaultClaimTimeout)
	if err := s.EnforceDeadlines(ctx); err != nil {
		t.Fatal(err)
	}
	if status, _ := stored(); status != graphs.StatusRunning {
		t.Fatalf("ended on time: %s", status)
	}
	clock.Advance(time.Second)
	if err := s.EnforceDeadlines(ctx); err != nil {
		t.Fatal(err)
	}
	if status, message := stored(); status != graphs.StatusError || message != "Node n1 unreachable: no claim within 10m0s" {
		t.Fatalf("after the check: %s %q", status, message)
	}
}
