package graphs_test

import (
	"context"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
)

// dataClusters gives every node the same deployment data, which never changes.
type dataClusters struct{ graphstest.Clusters }

func (c dataClusters) NodeData(ctx context.Context, id, _ string, nodes []string, _ time.Time) (map[string]graphs.NodeDocument, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	docs := map[string]graphs.NodeDocument{}
	for _, n := range nodes {
		docs[n] = graphs.NodeDocument{Body: []byte(`{"x":1}`), ETag: `"1"`}
	}
	return docs, nil
}

// A compute may fail (its group tolerates one node): the run ends ready,
// listing it; the node's other tasks are dep_failed, and only the node that
// finished ready counts as deployed (its changed() is false next time).
func TestToleratedFailure(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, dataClusters{graphstest.Clusters{"1": {{ID: "n1", Roles: []string{"controller"}}, {ID: "n2", Roles: []string{"compute"}}}}})
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[
		{"id":"compute","type":"group","role":["compute"],"fault_tolerance":1},
		{"id":"a","type":"shell","role":["*"],"condition":{"yaql_exp":"changed($)"}},
		{"id":"b","type":"shell","role":["*"],"requires":["a"]},
		{"id":"c","type":"shell","role":["*"],"requires":["b"],"parameters":{"fail_on_error":false}}]`), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	drive(t, s, tx.UUID, "n1", "a", graphs.StatusReady)
	drive(t, s, tx.UUID, "n1", "b", graphs.StatusReady)
	drive(t, s, tx.UUID, "n1", "c", graphs.StatusError) // fail_on_error false: recorded skipped
	drive(t, s, tx.UUID, "n2", "a", graphs.StatusError)
	wantAction(t, s, tx.UUID, "n2", graphs.ActionDone)
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.Status != graphs.StatusReady || !slices.Equal(view.FailedNodes, []string{"n2"}) ||
		!slices.Equal(view.FailedTasks, []graphs.NodeTaskRef{{Node: "n2", Task: "a"}}) {
		t.Fatalf("run = %+v", view.TransactionInfo)
	}
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
	statuses := func(p graphs.NodeProgress) (out []string) {
		for _, r := range p.Results {
			out = append(out, r.Task+" "+r.Status)
		}
		return out
	}
	if n1, n2 := sub.Nodes[0], sub.Nodes[1]; n1.Status != graphs.StatusReady || n2.Status != graphs.StatusError ||
		!slices.Equal(statuses(n1), []string{"a ready", "b ready", "c skipped"}) ||
		!slices.Equal(statuses(n2), []string{"a error", "b dep_failed", "c dep_failed"}) {
		t.Fatalf("nodes = %v %v, %v %v", n1.Status, statuses(n1), n2.Status, statuses(n2))
	}
	// Running again only the failed node, with the tasks it failed and did not run.
	again := must[graphs.Transaction](t)(s.Retry(ctx, tx.UUID, true))
	plan := must[graphs.Plan](t)(s.Plan(ctx, again.SubTransactions[0].UUID))
	if !slices.Equal(plan.Nodes, []string{"n2"}) || len(plan.NodeTasks["n2"]) != 3 {
		t.Fatalf("retry plan: nodes %v, tasks %+v", plan.Nodes, plan.NodeTasks["n2"])
	}
	must[graphs.Transaction](t)(s.Stop(ctx, again.UUID))
	next := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 1, "default", nil, false, false))
	for _, n := range next.Nodes {
		runsA := slices.ContainsFunc(n.Tasks, func(st graphs.SerializedTask) bool { return st.Task.ID() == "a" })
		if runsA != (n.Node == "n2") {
			t.Errorf("next run: node %s runs a: %v (only the failed node's data counts as changed)", n.Node, runsA)
		}
	}
}

// A critical node fails while another runs a task: nothing new starts, the
// task in flight is reported, then the run ends in error; the node that did
// not finish shows stopped.
func TestGracefulStop(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, graphstest.Clusters{"1": graphstest.Nodes("n1", "n2", "n3")})
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[
		{"id":"a","type":"shell"},{"id":"b","type":"shell","requires":["a"]}]`), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	drive(t, s, tx.UUID, "n3", "a", graphs.StatusReady)
	wantAction(t, s, tx.UUID, "n2", graphs.ActionTask)
	drive(t, s, tx.UUID, "n1", "a", graphs.StatusError)
	if view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID)); view.Status != graphs.StatusRunning {
		t.Fatalf("the run ended with a task in flight: %+v", view.TransactionInfo)
	}
	wantAction(t, s, tx.UUID, "n3", graphs.ActionDone) // its next task does not start
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n2", graphs.TaskReport{Task: "a", Status: graphs.StatusReady}))
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	want := "Task a failed on node n1: boom (node n1 is in no fault-tolerance group: it is critical)"
	if view.Status != graphs.StatusError || view.Message != want || !slices.Equal(view.FailedNodes, []string{"n1"}) {
		t.Fatalf("run = %+v", view.TransactionInfo)
	}
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
	for i, want := range []string{graphs.StatusError, graphs.StatusStopped, graphs.StatusStopped} {
		if sub.Nodes[i].Status != want {
			t.Errorf("node %s: %s, want %s", sub.Nodes[i].Node, sub.Nodes[i].Status, want)
		}
	}
	// Running again what did not succeed: every node (one failed, two did not
	// finish) with the tasks from where each stopped.
	again := must[graphs.Transaction](t)(s.Retry(ctx, tx.UUID, true))
	plan := must[graphs.Plan](t)(s.Plan(ctx, again.SubTransactions[0].UUID))
	if !slices.Equal(plan.Nodes, []string{"n1", "n2", "n3"}) || len(plan.NodeTasks["n1"]) != 2 || plan.NodeTasks["n1"][0].Task.ID() != "a" {
		t.Fatalf("retry plan: nodes %v, n1's tasks %+v", plan.Nodes, plan.NodeTasks["n1"])
	}
	_, err := s.Retry(ctx, again.UUID, true)
	wantKind(t, err, errs.Conflict, "is still running")
}

// Nodes are named by FQDN too: in the request, on the run and in its messages.
func TestNodesByFQDN(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, graphstest.Clusters{"1": {{ID: "1", FQDN: "node-1.example"}, {ID: "2", FQDN: "node-2.example"}}})
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[{"id":"a","type":"shell"}]`), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"node-2.example"}}}}))
	if !maps.Equal(tx.FQDNs, map[string]string{"2": "node-2.example"}) {
		t.Fatalf("run's nodes = %v", tx.FQDNs)
	}
	drive(t, s, tx.UUID, "2", "a", graphs.StatusError)
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if want := "Task a failed on node 2 (node-2.example): boom (node 2 is in no fault-tolerance group: it is critical)"; view.Message != want {
		t.Fatalf("message = %q, want %q", view.Message, want)
	}
	_, err := s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"node-9.example"}}}})
	wantKind(t, err, errs.Invalid, "Nodes node-9.example are not members of cluster 1")
}

// A node that misses a deadline fails alone when its group may lose it (the
// run goes on; a task it was running failed); past the tolerance, a missed
// deadline ends the run at once.
func TestToleratedUnreachableNode(t *testing.T) {
	for _, tolerance := range []string{"1", `"100%"`} {
		t.Run("fault_tolerance "+tolerance, func(t *testing.T) {
			ctx := context.Background()
			clock := graphstest.NewClock()
			start := clock.Now()
			s := newServiceOf(t, graphstest.Clusters{"1": {{ID: "n1", Roles: []string{"controller"}}, {ID: "n2", Roles: []string{"compute"}}, {ID: "n3", Roles: []string{"compute"}}}},
				graphs.WithClock(clock.Now))
			must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[
				{"id":"compute","type":"group","role":["compute"],"fault_tolerance":`+tolerance+`},
				{"id":"a","type":"shell","role":["*"]},{"id":"b","type":"shell","role":["compute"],"requires":["a"]}]`), false))
			must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "upgrade", tasksInput(`[{"id":"u","type":"shell"}]`), false))
			tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}, ClaimTimeout: seconds(5)}))
			drive(t, s, tx.UUID, "n1", "a", graphs.StatusReady)
			wantAction(t, s, tx.UUID, "n3", graphs.ActionTask)
			clock.Advance(6 * time.Second)
			view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
			if view.Status != graphs.StatusRunning || !slices.Equal(view.SubTransactions[0].FailedNodes, []string{"n2"}) {
				t.Fatalf("after n2's claim timeout: %s, failed %v", view.Status, view.SubTransactions[0].FailedNodes)
			}
			sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
			if n2 := sub.Nodes[1]; n2.Status != graphs.StatusError || len(n2.Results) != 2 || n2.Results[0].Status != graphs.StatusDepFailed ||
				n2.Results[0].Message != "Node n2 unreachable: no claim within 5s" {
				t.Fatalf("n2 = %+v", n2)
			}
			// n3, the group's second loss, goes silent while it runs a task.
			clock.Advance(90 * time.Second)
			lost := "Node n3 lost: no heartbeat since " + start.Format(time.RFC3339)
			if tolerance == "1" {
				wantEnded(t, s, tx.UUID, lost, "n1", "n3")
				return
			}
			view = must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
			if view.Status != graphs.StatusReady || !slices.Equal(view.FailedNodes, []string{"n2", "n3"}) ||
				!slices.Equal(view.FailedTasks, []graphs.NodeTaskRef{{Node: "n3", Task: "a"}}) {
				t.Fatalf("run = %+v", view.TransactionInfo)
			}
			sub = must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
			if r := sub.Nodes[2].Results; len(r) != 2 || r[0].Status != graphs.StatusError || r[0].Message != lost || r[1].Status != graphs.StatusDepFailed {
				t.Fatalf("n3's results = %+v", r)
			}
		})
	}
}
