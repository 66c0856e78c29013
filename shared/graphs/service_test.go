package graphs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// newService returns a service on a fresh embedded store with clusters 1
// (nodes n1, n2), 2 (node n3) and 3 (nodes 1 primary-controller, 2
// controller and 3 compute).
func newService(t testing.TB, opts ...graphs.Option) *graphs.Service {
	t.Helper()
	return newServiceOf(t, graphstest.Clusters{"1": graphstest.Nodes("n1", "n2"), "2": graphstest.Nodes("n3"), "3": {
		{ID: "1", Roles: []string{"primary-controller"}}, {ID: "2", Roles: []string{"controller"}}, {ID: "3", Roles: []string{"compute"}},
	}}, opts...)
}

// newServiceOf returns a service on a fresh embedded store with these clusters.
func newServiceOf(t testing.TB, clusters graphs.Clusters, opts ...graphs.Option) *graphs.Service {
	t.Helper()
	b := mem.New()
	return graphs.NewService(b.Index, b.Blobs, clusters, opts...)
}

func wantKind(t *testing.T, err error, kind errs.Kind, msg string) {
	t.Helper()
	if !errs.Is(err, kind) {
		t.Fatalf("err = %v, want kind %d", err, kind)
	}
	if msg != "" && !strings.Contains(errs.Message(err), msg) {
		t.Fatalf("message = %q, want it to contain %q", errs.Message(err), msg)
	}
}

func must[T any](t testing.TB) func(v T, err error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func tasksInput(tasks string) graphs.GraphInput {
	return graphs.GraphInput{Tasks: json.RawMessage(tasks)}
}

func taskIDs(tasks []planner.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func TestRegistry(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	rel := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.0"}))
	if rel.ID != 1 {
		t.Fatalf("first release id = %d", rel.ID)
	}
	_, err := s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.0"})
	wantKind(t, err, errs.Conflict, "already exists")
	must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.1"}))
	_, err = s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "ldap"})
	wantKind(t, err, errs.Invalid, "version: is required")
	p := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "mitaka", Version: "9.0"}))
	if p.ID != 1 {
		t.Fatalf("plugins count their own ids: %d", p.ID)
	}
	_, err = s.Entry(ctx, graphs.Plugin, 7)
	wantKind(t, err, errs.NotFound, "Plugin 7 not found")

	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Release, ID: rel.ID}, "default", tasksInput(`[{"id":"a","type":"shell"}]`), false))
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID, Plugins: []int64{p.ID}}))
	wantKind(t, s.DeleteEntry(ctx, graphs.Release, rel.ID), errs.Conflict, "Release 1 is used by clusters 1")
	wantKind(t, s.DeleteEntry(ctx, graphs.Plugin, p.ID), errs.Conflict, "Plugin 1 is used by clusters 1")
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{}))
	if err := s.DeleteEntry(ctx, graphs.Release, rel.ID); err != nil {
		t.Fatal(err)
	}
	if gs := must[[]graphs.Graph](t)(s.ListGraphs(ctx, graphs.GraphFilter{})); len(gs) != 0 {
		t.Fatalf("graphs of a deleted release remain: %v", gs)
	}
	// The name is free again.
	must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "mitaka", Version: "9.0"}))

	_, err = s.SetCluster(ctx, 1, graphs.ClusterInput{Plugins: []int64{1, 1}})
	wantKind(t, err, errs.Invalid, "plugin 1 is listed twice")
	_, err = s.SetCluster(ctx, 1, graphs.ClusterInput{Plugins: []int64{9}})
	wantKind(t, err, errs.NotFound, "Plugin 9 not found")
	_, err = s.SetCluster(ctx, 5, graphs.ClusterInput{})
	wantKind(t, err, errs.NotFound, "Cluster 5 not found")
}

func TestGraphCRUD(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	cluster := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	name := "fixes"
	g := must[graphs.Graph](t)(s.CreateGraph(ctx, cluster, "fixes", graphs.GraphInput{Name: &name, Tasks: json.RawMessage(`[{"id":"a","type":"shell"}]`)}, false))
	_, err := s.CreateGraph(ctx, cluster, "fixes", graphs.GraphInput{}, false)
	wantKind(t, err, errs.Conflict, `Deployment graph with type "fixes" already exist.`)
	_, err = s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 9}, "fixes", graphs.GraphInput{}, false)
	wantKind(t, err, errs.NotFound, "Cluster 9 not found")
	_, err = s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Release, ID: 1}, "fixes", graphs.GraphInput{}, false)
	wantKind(t, err, errs.NotFound, "Release 1 not found")
	_, err = s.CreateGraph(ctx, cluster, "bad type", graphs.GraphInput{}, false)
	wantKind(t, err, errs.Invalid, "must match")
	_, err = s.GraphOf(ctx, cluster, "other")
	wantKind(t, err, errs.NotFound, "Graph with type: other is not defined")

	// A partial update keeps the tasks; tasks replace the whole list.
	other := "renamed"
	got := must[graphs.Graph](t)(s.UpdateGraphOf(ctx, cluster, "fixes", graphs.GraphInput{Name: &other}, false))
	if got.Name != "renamed" || len(got.Tasks) != 1 {
		t.Fatalf("after rename: %+v", got)
	}
	got = must[graphs.Graph](t)(s.UpdateGraph(ctx, g.ID, tasksInput(`[{"id":"b","type":"shell"},{"id":"c","type":"sync"}]`), false))
	if got.Name != "renamed" || !slices.Equal(taskIDs(got.Tasks), []string{"b", "c"}) {
		t.Fatalf("after tasks update: %+v", got)
	}
	byID := must[graphs.Graph](t)(s.Graph(ctx, g.ID))
	byOwner := must[graphs.Graph](t)(s.GraphOf(ctx, cluster, "fixes"))
	a, _ := json.Marshal(byID)
	b, _ := json.Marshal(byOwner)
	if string(a) != string(b) || !strings.Contains(string(a), `"relations":[{"type":"fixes","model":"cluster","model_id":1}]`) {
		t.Fatalf("by id %s\nby owner %s", a, b)
	}
	_, err = s.UpdateGraph(ctx, g.ID, tasksInput(`[{"id":"b","type":"shell"},{"id":"b","type":"sync"}]`), false)
	wantKind(t, err, errs.Invalid, "Tasks duplication found: b")

	if err := s.DeleteGraphOf(ctx, cluster, "fixes"); err != nil {
		t.Fatal(err)
	}
	_, err = s.Graph(ctx, g.ID)
	wantKind(t, err, errs.NotFound, fmt.Sprintf("Graph %d not found", g.ID))
	_, err = s.DeleteGraph(ctx, g.ID)
	wantKind(t, err, errs.NotFound, "")
	// The (owner, type) is free again and the new graph gets a new id.
	again := must[graphs.Graph](t)(s.CreateGraph(ctx, cluster, "fixes", graphs.GraphInput{}, false))
	if again.ID == g.ID {
		t.Fatal("graph ids must not be reused")
	}
	// Deleted by id, a graph tells whose it was.
	if owner := must[graphs.Owner](t)(s.DeleteGraph(ctx, again.ID)); owner != cluster {
		t.Errorf("DeleteGraph returned owner %+v, want %+v", owner, cluster)
	}
}

func TestLargeGraphKeepsTasksInABlob(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	var b strings.Builder
	b.WriteString("[")
	for i := range 400 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `{"id":"task-%03d","type":"shell","parameters":{"cmd":%q}}`, i, strings.Repeat("x", 1000))
	}
	b.WriteString("]")
	o := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "big", tasksInput(b.String()), false))
	g := must[graphs.Graph](t)(s.GraphOf(ctx, o, "big"))
	if len(g.Tasks) != 400 || g.Tasks[399].ID != "task-399" {
		t.Fatalf("read back %d tasks", len(g.Tasks))
	}
}

func TestListGraphs(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	rel := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "r", Version: "1"}))
	p1 := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "p1", Version: "1"}))
	p2 := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "p2", Version: "1"}))
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID, Plugins: []int64{p1.ID}}))
	create := func(kind graphs.OwnerKind, id int64, typ string) int64 {
		return must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: kind, ID: id}, typ, graphs.GraphInput{}, false)).ID
	}
	relDefault := create(graphs.Release, rel.ID, "default")
	relUpgrade := create(graphs.Release, rel.ID, "upgrade")
	p1Default := create(graphs.Plugin, p1.ID, "default")
	p2Default := create(graphs.Plugin, p2.ID, "default")
	c1Default := create(graphs.Cluster, 1, "default")
	c2Default := create(graphs.Cluster, 2, "default")
	tests := []struct {
		name   string
		filter graphs.GraphFilter
		want   []int64
	}{
		{"all", graphs.GraphFilter{}, []int64{relDefault, relUpgrade, p1Default, p2Default, c1Default, c2Default}},
		{"by type", graphs.GraphFilter{Types: []string{"upgrade"}}, []int64{relUpgrade}},
		{"by cluster", graphs.GraphFilter{Clusters: []int64{1}}, []int64{c1Default}},
		{"fetch_related adds release and enabled plugins", graphs.GraphFilter{Clusters: []int64{1}, FetchRelated: true}, []int64{relDefault, relUpgrade, p1Default, c1Default}},
		{"fetch_related and type", graphs.GraphFilter{Clusters: []int64{1}, FetchRelated: true, Types: []string{"default"}}, []int64{relDefault, p1Default, c1Default}},
		{"owners of several kinds", graphs.GraphFilter{Plugins: []int64{p2.ID}, Clusters: []int64{2}}, []int64{p2Default, c2Default}},
		{"unknown owner", graphs.GraphFilter{Releases: []int64{42}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gs := must[[]graphs.Graph](t)(s.ListGraphs(ctx, tt.filter))
			var got []int64
			for _, g := range gs {
				got = append(got, g.ID)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("ids = %v, want %v", got, tt.want)
			}
		})
	}
	gs := must[[]graphs.Graph](t)(s.GraphsOf(ctx, graphs.Owner{Kind: graphs.Release, ID: rel.ID}))
	if len(gs) != 2 {
		t.Fatalf("release graphs: %d", len(gs))
	}
}

// setupMerge creates release 1 with tasks, plugins 1 and 2 enabled on cluster 1.
func setupMerge(t *testing.T, s *graphs.Service) {
	t.Helper()
	ctx := context.Background()
	rel := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "r", Version: "1"}))
	p1 := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "ldap", Version: "3.0.0"}))
	p2 := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "contrail", Version: "5.0.0"}))
	must[graphs.ClusterSettings](t)(s.SetCluster(ctx, 1, graphs.ClusterInput{ReleaseID: &rel.ID, Plugins: []int64{p2.ID, p1.ID}}))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Release, ID: rel.ID}, "default",
		tasksInput(`[{"id":"hiera","type":"puppet"},{"id":"netconfig","type":"puppet","requires":["hiera"]},{"id":"ntp","type":"shell","requires":["hiera"]}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Plugin, ID: p1.ID}, "default",
		tasksInput(`[{"id":"ldap","type":"puppet","requires":["netconfig"]},{"id":"ntp","type":"puppet","requires":["hiera"]}]`), false))
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Plugin, ID: p2.ID}, "default",
		tasksInput(`[{"id":"contrail","type":"puppet"}]`), false))
}

func TestDeploymentTasksSources(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupMerge(t, s)
	must[graphs.Graph](t)(s.CreateGraph(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default",
		tasksInput(`[{"id":"netconfig","type":"shell"}]`), false))
	tests := []struct {
		from graphs.Source
		want []string
	}{
		{graphs.Merged, []string{"netconfig", "ldap", "ntp", "contrail", "hiera"}},
		{graphs.Own, []string{"netconfig"}},
		{graphs.Plugins, []string{"ldap", "ntp", "contrail"}},
		{graphs.ReleaseOnly, []string{"hiera", "netconfig", "ntp"}},
	}
	for _, tt := range tests {
		got := must[[]planner.Task](t)(s.DeploymentTasks(ctx, 1, "default", tt.from))
		if !slices.Equal(taskIDs(got), tt.want) {
			t.Errorf("source %d: %v, want %v", tt.from, taskIDs(got), tt.want)
		}
	}
	merged := must[[]planner.Task](t)(s.DeploymentTasks(ctx, 1, "default", graphs.Merged))
	if merged[0].Type != "shell" || len(merged[0].Requires) != 0 {
		t.Fatalf("cluster task must replace the release task whole: %+v", merged[0])
	}
	_, err := s.DeploymentTasks(ctx, 1, "nothing", graphs.Merged)
	wantKind(t, err, errs.NotFound, "Graph with type: nothing is not defined")
	if got := must[[]planner.Task](t)(s.DeploymentTasks(ctx, 1, "nothing", graphs.Own)); len(got) != 0 {
		t.Fatalf("a single source without a graph is empty: %v", got)
	}
	_, err = s.DeploymentTasks(ctx, 9, "default", graphs.Merged)
	wantKind(t, err, errs.NotFound, "Cluster 9 not found")
}

func TestValidateOnUpload(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupMerge(t, s)
	cluster := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	// A cluster task may refer to release tasks: the merged graph is valid.
	must[graphs.Graph](t)(s.CreateGraph(ctx, cluster, "default", tasksInput(`[{"id":"fix","type":"shell","requires":["ldap","hiera"]}]`), true))
	_, err := s.UpdateGraphOf(ctx, cluster, "default", tasksInput(`[{"id":"fix","type":"shell","requires":["nope"]}]`), true)
	wantKind(t, err, errs.Invalid, `"fix" requires "nope"`)
	_, err = s.UpdateGraphOf(ctx, cluster, "default", tasksInput(`[{"id":"hiera","type":"shell","requires":["ntp"]}]`), true)
	wantKind(t, err, errs.Invalid, `Tasks form a cycle: "hiera" -> "ntp" -> "hiera"`)
	// Without validate the same graph is stored, and the merged view reports it.
	must[graphs.Graph](t)(s.UpdateGraphOf(ctx, cluster, "default", tasksInput(`[{"id":"hiera","type":"shell","requires":["ntp"]}]`), false))
	_, err = s.DeploymentTasks(ctx, 1, "default", graphs.Merged)
	wantKind(t, err, errs.Invalid, "cycle")
	// A release graph is checked in each cluster built from it.
	_, err = s.UpdateGraphOf(ctx, graphs.Owner{Kind: graphs.Release, ID: 1}, "default", tasksInput(`[{"id":"hiera","type":"puppet"}]`), true)
	wantKind(t, err, errs.Invalid, `in cluster 1: Tasks depend on tasks that are not in the graph: "ldap" requires "netconfig"`)
}

func TestPluginOverlap(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupMerge(t, s)
	must[graphs.Graph](t)(s.UpdateGraphOf(ctx, graphs.Owner{Kind: graphs.Plugin, ID: 2}, "default", tasksInput(`[{"id":"ldap","type":"shell"}]`), false))
	_, err := s.DeploymentTasks(ctx, 1, "default", graphs.Merged)
	wantKind(t, err, errs.Invalid, "Plugin contrail-5.0.0 is overlapping with plugin ldap-3.0.0 by introducing the same deployment task with id ldap")
}

func TestDOTOfCluster(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupMerge(t, s)
	dot := must[string](t)(s.DOT(ctx, 1, "default", planner.DOTOptions{ParentsFor: "ldap"}))
	want := "digraph \"default\" {\n  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n" +
		"  \"hiera\";\n  \"netconfig\";\n  \"ldap\";\n  \"hiera\" -> \"netconfig\";\n  \"netconfig\" -> \"ldap\";\n}\n"
	if dot != want {
		t.Fatalf("dot:\n%s", dot)
	}
	_, err := s.DOT(ctx, 1, "default", planner.DOTOptions{Tasks: []string{"x"}})
	wantKind(t, err, errs.Invalid, "Tasks x are not present in deployment graph")
}

func TestConcurrentUpdatesOfOneGraph(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	o := graphs.Owner{Kind: graphs.Cluster, ID: 1}
	must[graphs.Graph](t)(s.CreateGraph(ctx, o, "default", graphs.GraphInput{}, false))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("n", i)
			if _, err := s.UpdateGraphOf(ctx, o, "default", graphs.GraphInput{Name: &name}, false); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
}
