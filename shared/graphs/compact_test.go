package graphs_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// everyGraph has the shape that makes fuel-library's plans grow with the
// square of the nodes: tasks on one role wait, through cross dependencies
// with no role or "*", for a task on every node that has it (a, on the
// computes and the master; c, on the computes, named the other way round).
// One compute may fail.
const everyGraph = `[
 {"id":"computes","type":"group","role":["compute"],"fault_tolerance":1},
 {"id":"a","type":"shell","roles":["compute","master"]},
 {"id":"b","type":"shell","roles":["controller"],"cross-depends":[{"name":"a"}]},
 {"id":"c","type":"shell","roles":["compute"],"requires":["a"],"cross-depended-by":[{"name":"d","role":"*"}]},
 {"id":"d","type":"shell","roles":["controller"],"requires":["b"]}
]`

// everyCluster is cluster 5: controller 1, computes 2 to 70 (more than the
// 64 from which such waits are stored compact) and the master, 71.
func everyCluster() graphstest.Clusters {
	nodes := []planner.ClusterNode{{ID: "1", Roles: []string{"controller"}}}
	for n := 2; n <= 70; n++ {
		nodes = append(nodes, planner.ClusterNode{ID: fmt.Sprint(n), Roles: []string{"compute"}})
	}
	return graphstest.Clusters{"5": append(nodes, planner.ClusterNode{ID: "71", Roles: []string{planner.MasterRole}})}
}

func TestWaitsForEveryNodeListedOnce(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, everyCluster())
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 5}, "default", tasksInput(everyGraph), true))
	got := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 5, "default", nil, false, false))
	controller := got.Nodes[0]
	if ids := nodeTaskIDs(controller); !slices.Equal(ids, []string{"b", "d"}) {
		t.Fatalf("controller runs %v", ids)
	}
	// 69 computes have a and c; the master's a is not waited for (no role selects every node but the master).
	for k, want := range []wire.TaskOnEveryNode{{Task: "a", Nodes: 69}, {Task: "c", Nodes: 69}} {
		if task := controller.Tasks[k]; task.WaitFor != nil || !slices.Equal(task.WaitForEvery, []wire.TaskOnEveryNode{want}) {
			t.Errorf("controller's %s waits for %+v and %+v, want %+v", task.Task.ID(), task.WaitFor, task.WaitForEvery, want)
		}
	}
}

func TestWaitForEveryNodeRuns(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, everyCluster())
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 5}, "default", tasksInput(everyGraph), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster(5), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	wantAction(t, s, tx.UUID, "1", graphs.ActionWait)
	for n := 2; n <= 70; n++ {
		drive(t, s, tx.UUID, fmt.Sprint(n), "a", "ready")
		if n < 70 {
			drive(t, s, tx.UUID, fmt.Sprint(n), "c", "ready")
			wantAction(t, s, tx.UUID, "1", graphs.ActionWait)
		}
	}
	// a passed on every compute (the master's is not waited for): b runs; d waits for c on 70.
	drive(t, s, tx.UUID, "1", "b", "ready")
	wantAction(t, s, tx.UUID, "1", graphs.ActionWait)
	drive(t, s, tx.UUID, "70", "c", "ready")
	drive(t, s, tx.UUID, "1", "d", "ready")
	drive(t, s, tx.UUID, "71", "a", "ready")
	if got := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID)); got.Status != graphs.StatusReady {
		t.Fatalf("transaction = %+v", got)
	}
}

func TestWaitForEveryNodeFailsWithOne(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, everyCluster())
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 5}, "default", tasksInput(everyGraph), false))
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster(5), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	drive(t, s, tx.UUID, "40", "a", "error")
	// b waits for a on 40, which failed: the controller's part fails without running b.
	c := wantAction(t, s, tx.UUID, "1", graphs.ActionDone)
	if c.NodeStatus != graphs.StatusError {
		t.Fatalf("controller's claim = %+v", c)
	}
	sub := must[graphs.Transaction](t)(s.Transaction(ctx, tx.SubTransactions[0].UUID))
	for _, n := range sub.Nodes {
		if n.Node == "1" && (len(n.Results) == 0 || n.Results[0].Task != "b" || n.Results[0].Status != graphs.StatusDepFailed) {
			t.Errorf("controller's results = %+v", n.Results)
		}
	}
}

func cluster(id int64) *int64 { return &id }

// cross-depended-by with no role makes the named task wait for the task on
// every node it runs on, the master included: compact for the others, the
// master's named on its own.
func TestWaitForEveryNodeAndTheMaster(t *testing.T) {
	ctx := context.Background()
	s := newServiceOf(t, everyCluster())
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 5}, "default", tasksInput(`[
	 {"id":"m","type":"shell","roles":["compute","master"],"cross-depended-by":[{"name":"b"}]},
	 {"id":"b","type":"shell","roles":["controller"]}]`), true))
	got := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 5, "default", nil, false, false))
	b := got.Nodes[0].Tasks[0]
	if b.Task.ID() != "b" || !slices.Equal(b.WaitFor, []graphs.NodeTaskRef{{Node: "71", Task: "m"}}) ||
		!slices.Equal(b.WaitForEvery, []wire.TaskOnEveryNode{{Task: "m", Nodes: 69}}) {
		t.Errorf("the controller's b waits for %+v and %+v", b.WaitFor, b.WaitForEvery)
	}
}
