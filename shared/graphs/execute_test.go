package graphs_test

import (
	"context"
	"encoding/json"
	"slices"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

func cluster1() *int64 { id := int64(1); return &id }

// setupExecution gives cluster 1 a "default" graph of two runnable tasks and a
// group, and an "upgrade" graph of one task.
func setupExecution(t *testing.T, s *graphs.Service) {
	t.Helper()
	ctx := context.Background()
	o := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "default", tasksInput(
		`[{"id":"b","type":"shell","requires":["a"]},{"id":"a","type":"puppet"},{"id":"grp","type":"group","requires":["b"]}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "upgrade", tasksInput(`[{"id":"u","type":"shell"}]`), false))
}

// drive claims for node and reports status for the claimed task, checking the task id.
func drive(t *testing.T, s *graphs.Service, tx, node, wantTask, status string) {
	t.Helper()
	ctx := context.Background()
	c := must[graphs.Claim](t)(s.Claim(ctx, tx, node))
	if c.Action != graphs.ActionTask || c.Task.ID() != wantTask {
		t.Fatalf("claim for %s = %+v, want task %s", node, c, wantTask)
	}
	must[graphs.NodeProgress](t)(s.Report(ctx, tx, node, graphs.TaskReport{Task: wantTask, Status: status, Message: "boom"}))
}

func wantAction(t *testing.T, s *graphs.Service, tx, node, action string) graphs.Claim {
	t.Helper()
	c := must[graphs.Claim](t)(s.Claim(context.Background(), tx, node))
	if c.Action != action {
		t.Fatalf("claim for %s = %+v, want %s", node, c, action)
	}
	return c
}

func TestExecutionRunsSubTransactionsInOrder(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{
		Cluster: cluster1(),
		Graphs:  []graphs.GraphRun{{Type: "default"}, {Type: "upgrade", Nodes: []graphs.NodeID{"n2"}}},
		NoopRun: true,
	}))
	if tx.Status != graphs.StatusRunning || tx.Name != "deploy" || !tx.DryRun || len(tx.SubTransactions) != 2 {
		t.Fatalf("transaction = %+v", tx)
	}
	first, second := tx.SubTransactions[0], tx.SubTransactions[1]
	if first.Status != graphs.StatusRunning || first.Name != "deployment" || first.GraphType != "default" ||
		second.Status != graphs.StatusPending || second.GraphType != "upgrade" {
		t.Fatalf("sub-transactions = %+v", tx.SubTransactions)
	}
	plan := must[graphs.Plan](t)(s.Plan(ctx, first.UUID))
	if !slices.Equal(taskIDs(plan.Tasks), []string{"a", "b", "grp"}) || !slices.Equal(plan.Nodes, []string{"n1", "n2"}) {
		t.Fatalf("plan = %+v", plan)
	}
	_, err := s.Plan(ctx, tx.UUID)
	wantKind(t, err, errs.Invalid, "top-level")

	c := wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	if c.Task.ID() != "a" || !c.NoopRun || c.SubTransaction != first.UUID || c.Position == nil || *c.Position != 0 {
		t.Fatalf("first claim = %+v", c)
	}
	// Claiming again before reporting hands out the same task.
	if again := wantAction(t, s, tx.UUID, "n1", graphs.ActionTask); again.Task.ID() != "a" {
		t.Fatalf("second claim = %+v", again)
	}
	_, err = s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "b", Status: "ready"})
	wantKind(t, err, errs.Conflict, "Task b is not running on node n1")
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: "ready"}))
	// A repeated report is accepted once more.
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: "ready"}))
	drive(t, s, tx.UUID, "n1", "b", "ready")
	// n1 is done with "default" and has nothing in "upgrade"; the group task is never handed out.
	wantAction(t, s, tx.UUID, "n1", graphs.ActionDone)
	drive(t, s, tx.UUID, "n2", "a", "ready")
	drive(t, s, tx.UUID, "n2", "b", "skipped")
	// n2 finished "default" with its last report, which started "upgrade".
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.SubTransactions[0].Status != graphs.StatusReady || view.SubTransactions[1].Status != graphs.StatusRunning {
		t.Fatalf("after default: %+v", view.SubTransactions)
	}
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}})
	wantKind(t, err, errs.Conflict, "Cluster 1 already runs transaction "+tx.UUID)
	drive(t, s, tx.UUID, "n2", "u", "ready")
	wantAction(t, s, tx.UUID, "n2", graphs.ActionDone)

	view = must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.Status != graphs.StatusReady || view.TimeEnd == nil || view.SubTransactions[1].Status != graphs.StatusReady {
		t.Fatalf("final = %+v", view)
	}
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, first.UUID))
	if len(sub.Nodes) != 2 || sub.Nodes[1].Status != graphs.StatusReady || len(sub.Nodes[1].Results) != 2 || sub.Nodes[1].Results[1].Status != "skipped" {
		t.Fatalf("sub view = %+v", sub)
	}
	// The cluster is free again.
	next := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}}))
	history := must[[]graphs.Transaction](t)(s.Transactions(ctx, graphs.TransactionFilter{ClusterID: cluster1()}))
	if len(history) != 2 || history[0].UUID != next.UUID || history[1].UUID != tx.UUID {
		t.Fatalf("history = %+v", history)
	}
	running := must[[]graphs.Transaction](t)(s.Transactions(ctx, graphs.TransactionFilter{Status: graphs.StatusRunning}))
	if len(running) != 1 || running[0].UUID != next.UUID {
		t.Fatalf("running = %+v", running)
	}
}

func TestFailureAbortsTheRest(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{
		Cluster: cluster1(),
		Graphs:  []graphs.GraphRun{{Type: "upgrade"}, {Type: "default"}, {Type: "upgrade"}},
	}))
	drive(t, s, tx.UUID, "n1", "u", "ready")
	c := wantAction(t, s, tx.UUID, "n2", graphs.ActionTask)
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n2", graphs.TaskReport{Task: c.Task.ID(), Status: "error", Message: "exit 1"}))
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	want := "Task u failed on node n2: exit 1 (node n2 is in no fault-tolerance group: it is critical)"
	if view.Status != graphs.StatusError || view.Message != want || !slices.Equal(view.FailedNodes, []string{"n2"}) {
		t.Fatalf("parent = %+v", view.TransactionInfo)
	}
	subs := view.SubTransactions
	if subs[0].Status != graphs.StatusError || subs[0].Message != want ||
		subs[1].Status != graphs.StatusError || subs[1].Message != graphs.AbortedMessage ||
		subs[2].Status != graphs.StatusError || subs[2].Message != graphs.AbortedMessage {
		t.Fatalf("subs = %+v", subs)
	}
	// Repeating the failing report is harmless; other reports are refused.
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n2", graphs.TaskReport{Task: "u", Status: "error", Message: "exit 1"}))
	_, err := s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: "ready"})
	wantKind(t, err, errs.Conflict, "is not running (status: error)")
	wantAction(t, s, tx.UUID, "n1", graphs.ActionDone)
	_, err = s.Claim(ctx, tx.UUID, "n9")
	wantKind(t, err, errs.NotFound, "Node n9 is not part of transaction")
	// The cluster is released.
	must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}}))
}

func TestStop(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}, {Type: "upgrade"}}}))
	wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	stopped := must[graphs.Transaction](t)(s.Stop(ctx, tx.UUID))
	if stopped.Status != graphs.StatusError || stopped.Message != "Stopped" || stopped.SubTransactions[1].Message != graphs.AbortedMessage {
		t.Fatalf("stopped = %+v", stopped)
	}
	_, err := s.Stop(ctx, tx.UUID)
	wantKind(t, err, errs.Conflict, "is not running")
	_, err = s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: "ready"})
	wantKind(t, err, errs.Conflict, "is not running")
}

func TestExecuteRejects(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	nine := int64(9)
	tests := []struct {
		name string
		req  graphs.ExecuteRequest
		kind errs.Kind
		msg  string
	}{
		{"no cluster", graphs.ExecuteRequest{Graphs: []graphs.GraphRun{{Type: "default"}}}, errs.Invalid, "cluster: is required"},
		{"no graphs", graphs.ExecuteRequest{Cluster: cluster1()}, errs.Invalid, "graphs: at least one graph is required"},
		{"bad type", graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: ""}}}, errs.Invalid, "graphs[0].type"},
		{"unknown cluster", graphs.ExecuteRequest{Cluster: &nine, Graphs: []graphs.GraphRun{{Type: "default"}}}, errs.NotFound, "Cluster 9 not found"},
		{"unknown graph type", graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "nope"}}}, errs.NotFound, "Graph with type: nope is not defined"},
		{"foreign nodes", graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"n3", "n1", "n0"}}}},
			errs.Invalid, "Nodes n0, n3 are not members of cluster 1"},
		{"unknown tasks", graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Tasks: []string{"zz", "a"}}}},
			errs.Invalid, `Tasks zz are not present in deployment graph "default"`},
		{"unknown subgraph task", graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}, Subgraphs: []planner.Subgraph{{Start: []string{"q"}}}},
			errs.Invalid, `subgraphs[0]: Tasks q are not present`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Execute(ctx, tt.req)
			wantKind(t, err, tt.kind, tt.msg)
		})
	}
	if got := must[[]graphs.Transaction](t)(s.Transactions(ctx, graphs.TransactionFilter{})); len(got) != 0 {
		t.Fatalf("a rejected execution left transactions: %+v", got)
	}
}

func TestPlanSkipsWhatIsNotSelected(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[
		{"id":"a","type":"puppet"},{"id":"b","type":"shell","requires":["a"]},{"id":"c","type":"shell","requires":["b"]},
		{"id":"d","type":"shell","requires":["c"]},{"id":"s","type":"stage","requires":["d"]},{"id":"x","type":"shell"}]`), false))
	tests := []struct {
		name      string
		run       graphs.GraphRun
		subgraphs []planner.Subgraph
		want      map[string]string
	}{
		{"everything", graphs.GraphRun{Type: "default"}, nil,
			map[string]string{"a": "puppet", "b": "shell", "c": "shell", "d": "shell", "s": "stage", "x": "shell"}},
		{"tasks filter", graphs.GraphRun{Type: "default", Tasks: []string{"b", "x"}}, nil,
			map[string]string{"a": "skipped", "b": "shell", "c": "skipped", "d": "skipped", "s": "stage", "x": "shell"}},
		{"subgraph between b and c", graphs.GraphRun{Type: "default"}, []planner.Subgraph{{Start: []string{"b"}, End: []string{"c"}}},
			map[string]string{"a": "skipped", "b": "shell", "c": "shell", "d": "skipped", "s": "stage", "x": "skipped"}},
		{"skip tasks", graphs.GraphRun{Type: "default", SkipTasks: []string{"b", "x"}}, nil,
			map[string]string{"a": "puppet", "b": "skipped", "c": "shell", "d": "shell", "s": "stage", "x": "skipped"}},
		{"subgraph from c on, and tasks filter", graphs.GraphRun{Type: "default", Tasks: []string{"a", "d"}}, []planner.Subgraph{{Start: []string{"c"}}},
			map[string]string{"a": "skipped", "b": "skipped", "c": "skipped", "d": "shell", "s": "stage", "x": "skipped"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{tt.run}, Subgraphs: tt.subgraphs}))
			defer func() { must[graphs.Transaction](t)(s.Stop(ctx, tx.UUID)) }()
			plan := must[graphs.Plan](t)(s.Plan(ctx, tx.SubTransactions[0].UUID))
			if !slices.Equal(taskIDs(plan.Tasks), []string{"a", "b", "c", "d", "s", "x"}) {
				t.Fatalf("plan order = %v", taskIDs(plan.Tasks))
			}
			for _, task := range plan.Tasks {
				if task.Type != tt.want[task.ID] {
					t.Errorf("%s: type %s, want %s", task.ID, task.Type, tt.want[task.ID])
				}
			}
		})
	}
}

// TestConcurrentExecutions: the conditional write of the cluster lock lets
// exactly one of many simultaneous executions start.
func TestConcurrentExecutions(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	const n = 12
	var wg sync.WaitGroup
	results := make([]error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, results[i] = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}})
		}()
	}
	wg.Wait()
	started := 0
	for _, err := range results {
		switch {
		case err == nil:
			started++
		case !errs.Is(err, errs.Conflict):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if started != 1 {
		t.Fatalf("%d executions started, want 1", started)
	}
}

// TestConcurrentAgents: many nodes claiming and reporting at once still finish
// every sub-transaction exactly once and in order.
func TestConcurrentAgents(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}, {Type: "upgrade"}, {Type: "default"}}}))
	var wg sync.WaitGroup
	for _, node := range []string{"n1", "n2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				c, err := s.Claim(ctx, tx.UUID, node)
				if err != nil {
					t.Error(err)
					return
				}
				switch c.Action {
				case graphs.ActionDone:
					return
				case graphs.ActionTask:
					if _, err := s.Report(ctx, tx.UUID, node, graphs.TaskReport{Task: c.Task.ID(), Status: "ready"}); err != nil {
						t.Error(err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.Status != graphs.StatusReady {
		t.Fatalf("final = %+v", view)
	}
	for _, sub := range view.SubTransactions {
		detail := must[graphs.Transaction](t)(s.Transaction(ctx, sub.UUID))
		for _, n := range detail.Nodes {
			raw, _ := json.Marshal(n.Results)
			if n.Status != graphs.StatusReady || len(n.Results) == 0 {
				t.Fatalf("%s %s: %s %s", sub.GraphType, n.Node, n.Status, raw)
			}
		}
	}
}
