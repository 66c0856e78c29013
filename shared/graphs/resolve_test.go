package graphs_test

import (
	"context"
	"encoding/json"
	"slices"
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
		ids = append(ids, t.Task.ID)
	}
	return ids
}

func TestSerializedTasksSelectByRole(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 3}, "default", tasksInput(roleGraph), true))
	got := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 3, "default", nil))
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
	if r := got.Nodes[0].Tasks[4]; r.Task.ID != "report" || !slices.Equal(r.WaitFor, []graphs.NodeTaskRef{{Node: "3", Task: "ping"}}) {
		t.Errorf("report = %+v", r)
	}
	only := must[graphs.ClusterTasks](t)(s.SerializedTasks(ctx, 3, "default", []graphs.NodeID{"3"}))
	if len(only.Nodes) != 1 || only.Nodes[0].Tasks[2].WaitFor != nil || only.Nodes[0].Tasks[3].WaitForAny != nil {
		t.Errorf("node 3 alone = %+v", only.Nodes)
	}
	_, err := s.SerializedTasks(ctx, 3, "default", []graphs.NodeID{"9"})
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
	_, err = s.SerializedTasks(ctx, 3, "default", nil)
	wantKind(t, err, errs.Invalid, "Tasks form a cycle across nodes")
	// A task waiting for a later task of its own node: b requires a, a waits for b.
	must[graphs.Graph](t)(s.UpdateGraphOf(ctx, o, "default", tasksInput(`[
	 {"id":"a","type":"shell","cross-depends":[{"name":"b","role":"self"}]},
	 {"id":"b","type":"shell","requires":["a"]}]`), false))
	_, err = s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster3(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"3"}}}})
	wantKind(t, err, errs.Invalid, `"a" on node 3 -> "b" on node 3 -> "a" on node 3`)
}
