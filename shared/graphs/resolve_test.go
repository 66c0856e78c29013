package graphs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
)

// roleGraph runs on cluster 3: group tasks for the controllers and compute,
// tasks selected by roles, by groups (by id and by pattern), by "*" and by
// nothing, and a cross dependency each way.
const roleGraph = `[
 {"id":"controllers","type":"group","role":["primary-controller","controller"]},
 {"id":"compute","type":"group"},
 {"id":"hiera","type":"shell"},
 {"id":"everywhere","type":"shell","roles":"*","requires":["hiera"]},
 {"id":"database","type":"puppet","roles":["primary-controller"],"requires":["everywhere"]},
 {"id":"keystone","type":"puppet","groups":["controllers"],"requires":["database"]},
 {"id":"nova-compute","type":"puppet","groups":["/comp.*/"],"requires":["everywhere"],
  "cross-depends":[{"name":"keystone","role":["controller","primary-controller"]}]},
 {"id":"any-controller","type":"shell","groups":["compute"],"requires":["nova-compute"],
  "cross_depends":[{"name":"/^key.*/","role":"*","policy":"any"}]},
 {"id":"ping","type":"shell","roles":["compute"],"cross-depended-by":[{"name":"report","role":"primary-controller"}]},
 {"id":"report","type":"shell","roles":["primary-controller"],"requires":["keystone"]}
]`

func cluster3() *int64 { id := int64(3); return &id }

func nodeTaskIDs(n graphs.NodeTasks) []string {
	var ids []string
	for _, t := range n.Tasks {
		ids = append(ids, t.Task.ID())
	}
	return ids
}

func TestSerializedTasksSelectByRole(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 3}, "default", tasksInput(roleGraph), true))
	got := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 3, "default", nil, false, false))
	want := map[string][]string{
		"1": {"hiera", "everywhere", "database", "keystone", "report"},
		"2": {"hiera", "everywhere", "keystone"},
		"3": {"hiera", "everywhere", "nova-compute", "any-controller", "ping"},
	}
	if len(got.Nodes) != 3 {
		t.Fatalf("nodes = %+v", got.Nodes)
	}
	for _, n := range got.Nodes {
		if ids := nodeTaskIDs(n); !slices.Equal(ids, want[n.Node]) {
			t.Errorf("node %s runs %v, want %v", n.Node, ids, want[n.Node])
		}
	}
	waits, _ := json.Marshal(got.Nodes[2].Tasks[2:4])
	wantWaits := `[{"task":` + string(must[[]byte](t)(json.Marshal(got.Nodes[2].Tasks[2].Task))) +
		`,"wait_for":[{"node":"1","task":"keystone"},{"node":"2","task":"keystone"}]},` +
		`{"task":` + string(must[[]byte](t)(json.Marshal(got.Nodes[2].Tasks[3].Task))) +
		`,"wait_for_any":[[{"node":"1","task":"keystone"},{"node":"2","task":"keystone"}]]}]`
	if string(waits) != wantWaits {
		t.Errorf("compute waits:\n%s\nwant\n%s", waits, wantWaits)
	}
	if r := got.Nodes[0].Tasks[4]; r.Task.ID() != "report" || !slices.Equal(r.WaitFor, []graphs.NodeTaskRef{{Node: "3", Task: "ping"}}) {
		t.Errorf("report = %+v", r)
	}
	only := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 3, "default", []graphs.NodeID{"3"}, false, false))
	if len(only.Nodes) != 1 || only.Nodes[0].Tasks[2].WaitFor != nil || only.Nodes[0].Tasks[3].WaitForAny != nil {
		t.Errorf("node 3 alone = %+v", only.Nodes)
	}
	_, err := s.SerializedTasks(ctx, 3, "default", []graphs.NodeID{"9"}, false, false)
	wantKind(t, err, errs.Invalid, "Nodes 9 are not members of cluster 3")
}

func TestCrossDependsOrderClaims(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 3}, "default", tasksInput(roleGraph), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster3(), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	for _, id := range []string{"hiera", "everywhere"} {
		drive(t, s, tx.UUID, "3", id, "ready")
	}
	// nova-compute waits for keystone on both controllers.
	wantAction(t, s, tx.UUID, "3", graphs.ActionWait)
	for _, id := range []string{"hiera", "everywhere", "database", "keystone"} {
		drive(t, s, tx.UUID, "1", id, "ready")
	}
	// report on 1 waits for ping on 3.
	wantAction(t, s, tx.UUID, "1", graphs.ActionWait)
	wantAction(t, s, tx.UUID, "3", graphs.ActionWait)
	drive(t, s, tx.UUID, "2", "hiera", "ready")
	drive(t, s, tx.UUID, "2", "everywhere", "ready")
	// keystone in flight on 2 is not passed yet.
	wantAction(t, s, tx.UUID, "2", graphs.ActionTask)
	wantAction(t, s, tx.UUID, "3", graphs.ActionWait)
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "2", graphs.TaskReport{Task: "keystone", Status: "ready"}))
	for _, id := range []string{"nova-compute", "any-controller", "ping"} {
		drive(t, s, tx.UUID, "3", id, "ready")
	}
	wantAction(t, s, tx.UUID, "2", graphs.ActionDone)
	drive(t, s, tx.UUID, "1", "report", "ready")
	if got := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID)); got.Status != graphs.StatusReady {
		t.Fatalf("transaction = %+v", got)
	}
	plan := must[graphs.Plan](t)(s.Plan(ctx, tx.SubTransactions[0].UUID))
	if len(plan.NodeTasks["3"]) != 5 || plan.NodeTasks["3"][2].WaitFor == nil {
		t.Errorf("plan node tasks = %+v", plan.NodeTasks)
	}
}

func TestCycleAcrossNodesRefused(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	o := graphs.Owner{Kind: graphs.Cluster, ID: 3}
	// a on the controllers waits for b on compute, which waits for a on the controllers.
	cyclic := tasksInput(`[
	 {"id":"a","type":"shell","roles":"controller","cross-depends":[{"name":"b","role":"compute"}]},
	 {"id":"b","type":"shell","roles":"compute","cross-depends":[{"name":"a","role":"controller"}]}]`)
	_, err := s.CreateGraph(ctx, o, "default", cyclic, true)
	wantKind(t, err, errs.Invalid, `Tasks form a cycle across nodes: "a" on node 2 -> "b" on node 3 -> "a" on node 2`)
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "default", cyclic, false))
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster3(), Graphs: []graphs.GraphRun{{Type: "default"}}})
	wantKind(t, err, errs.Invalid, "Tasks form a cycle across nodes")
	_, err = s.SerializedTasks(ctx, 3, "default", nil, false, false)
	wantKind(t, err, errs.Invalid, "Tasks form a cycle across nodes")
	// A task waiting for a later task of its own node: b requires a, a waits for b.
	must[graphs.Graph](t)(s.UpdateGraphOf(ctx, o, "default", tasksInput(`[
	 {"id":"a","type":"shell","cross-depends":[{"name":"b","role":"self"}]},
	 {"id":"b","type":"shell","requires":["a"]}]`), false))
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster3(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"3"}}}})
	wantKind(t, err, errs.Invalid, `"a" on node 3 -> "b" on node 3 -> "a" on node 3`)
}

// Random graphs on cluster 3, driven by the three nodes' agents in turn:
// every execution that is not refused as a cycle runs to ready without a
// deadlock, and no task is handed out before what it waits for is reported.
func TestRandomGraphsRunWithoutDeadlock(t *testing.T) {
	ctx := context.Background()
	roles := []string{"primary-controller", "controller", "compute", "*"}
	types := []string{"shell", "shell", "shell", "puppet", "group", "skipped", "stage"}
	ran, refused := 0, 0
	for seed := range 60 {
		rng := rand.New(rand.NewPCG(uint64(seed), 7))
		s := newService(t)
		var tasks []map[string]any
		n := 6 + rng.IntN(10)
		for i := range n {
			task := map[string]any{"id": fmt.Sprintf("t%02d", i), "type": types[rng.IntN(len(types))]}
			if rng.IntN(4) > 0 {
				task["roles"] = []string{roles[rng.IntN(len(roles))]}
			}
			if i > 0 && rng.IntN(3) > 0 {
				task["requires"] = []string{fmt.Sprintf("t%02d", rng.IntN(i))}
			}
			if rng.IntN(3) == 0 {
				dep := map[string]any{"name": fmt.Sprintf("t%02d", rng.IntN(n)), "role": roles[rng.IntN(len(roles))], "policy": []string{"all", "any"}[rng.IntN(2)]}
				task[[]string{"cross-depends", "cross-depended-by"}[rng.IntN(2)]] = []any{dep}
			}
			tasks = append(tasks, task)
		}
		raw, _ := json.Marshal(tasks)
		must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 3}, "default", graphs.GraphInput{Tasks: raw}, false))
		tx, err := s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster3(), Graphs: []graphs.GraphRun{{Type: "default"}}})
		if err != nil {
			if !strings.Contains(errs.Message(err), "cycle") {
				t.Fatalf("seed %d: %v\n%s", seed, err, raw)
			}
			refused++
			continue
		}
		ran++
		plan := must[graphs.Plan](t)(s.Plan(ctx, tx.SubTransactions[0].UUID))
		reported := map[graphs.NodeTaskRef]bool{}
		pos := map[string]int{}
		for i, task := range plan.Tasks {
			pos[task.ID] = i
		}
		// A task a node runs is passed once reported. (When a group, stage or
		// skipped task is passed depends on the node's order, which the plan
		// does not show: those waits are not checked here, only that
		// everything ends.)
		passed := func(w graphs.NodeTaskRef) bool {
			switch plan.Tasks[pos[w.Task]].Type {
			case "group", "stage", "skipped":
				return true
			}
			return reported[w]
		}
		done := map[string]bool{}
		for round := 0; len(done) < 3; round++ {
			if round > 500 {
				t.Fatalf("seed %d: no progress (deadlock?); done %v, reported %v\n%s", seed, done, reported, raw)
			}
			for _, node := range []string{"1", "2", "3"} {
				if done[node] {
					continue
				}
				c := must[graphs.Claim](t)(s.Claim(ctx, tx.UUID, node))
				switch c.Action {
				case graphs.ActionDone:
					done[node] = true
				case graphs.ActionTask:
					i := slices.IndexFunc(plan.NodeTasks[node], func(st graphs.SerializedTask) bool { return st.Task.ID() == c.Task.ID() })
					st := plan.NodeTasks[node][i]
					for _, w := range st.WaitFor {
						if !passed(w) {
							t.Fatalf("seed %d: %s on %s handed out before %+v\n%s", seed, c.Task.ID(), node, w, raw)
						}
					}
					for _, group := range st.WaitForAny {
						if !slices.ContainsFunc(group, passed) {
							t.Fatalf("seed %d: %s on %s handed out before any of %+v\n%s", seed, c.Task.ID(), node, group, raw)
						}
					}
					must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, node, graphs.TaskReport{Task: c.Task.ID(), Status: "ready"}))
					reported[graphs.NodeTaskRef{Node: node, Task: c.Task.ID()}] = true
				}
			}
		}
		if got := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID)); got.Status != graphs.StatusReady {
			t.Fatalf("seed %d: transaction %s", seed, got.Status)
		}
	}
	t.Logf("%d random graphs ran to ready, %d refused as cycles", ran, refused)
	if ran < 30 {
		t.Fatalf("only %d of 60 random graphs ran", ran)
	}
}

// A node's order follows its cross dependencies too: a task that waits for a
// later task of its own node (role self), or for one that waits for a task
// of this node elsewhere, moves after it instead of making a cycle.
func TestNodeOrderFollowsCrossDependencies(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 3}, "default", tasksInput(`[
	 {"id":"a","type":"shell","cross-depends":[{"name":"b","role":"self"}]},
	 {"id":"b","type":"shell"},
	 {"id":"c","type":"shell","roles":"compute","cross-depends":[{"name":"d","role":"controller"}]},
	 {"id":"d","type":"shell","roles":"controller","cross-depends":[{"name":"e","role":"compute"}]},
	 {"id":"e","type":"shell","roles":"compute"}]`), true))
	got := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 3, "default", nil, false, false))
	want := map[string][]string{"1": {"b", "a"}, "2": {"b", "a", "d"}, "3": {"b", "a", "e", "c"}}
	for _, n := range got.Nodes {
		if ids := nodeTaskIDs(n); !slices.Equal(ids, want[n.Node]) {
			t.Errorf("node %s runs %v, want %v", n.Node, ids, want[n.Node])
		}
	}
}
