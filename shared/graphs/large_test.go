package graphs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// The large case: a release graph of 300 tasks (4 stages, 6 groups, 290
// puppet/shell tasks with 1-3 dependencies each, groups by name and by
// pattern), 3 enabled plugins that each replace 10 release tasks and add 20,
// and a cluster graph that replaces 15 release tasks and adds 10.
const (
	largeReleaseTasks = 300
	largePlugins      = 3
)

var largeGroups = []string{"primary-controller", "controller", "compute", "cinder", "ceph-osd", "mongo"}
var largeStages = []string{"pre_deployment", "deploy_start", "deploy_end", "post_deployment"}

func largeReleaseJSON() string {
	var tasks []string
	for i, s := range largeStages {
		req := ""
		if i > 0 {
			req = fmt.Sprintf(`,"requires":[%q]`, largeStages[i-1])
		}
		tasks = append(tasks, fmt.Sprintf(`{"id":%q,"type":"stage"%s}`, s, req))
	}
	for _, g := range largeGroups {
		tasks = append(tasks, fmt.Sprintf(`{"id":%q,"type":"group","role":[%q],"requires":["deploy_start"],"required_for":["deploy_end"],`+
			`"parameters":{"strategy":{"type":"parallel","amount":5}}}`, g, g))
	}
	for i := range largeReleaseTasks - len(largeStages) - len(largeGroups) {
		deps := []string{}
		for _, back := range []int{1, 7, 31} {
			if i-back >= 0 && (i+back)%3 != 0 {
				deps = append(deps, fmt.Sprintf("%q", largeTaskID(i-back)))
			}
		}
		if len(deps) == 0 {
			deps = append(deps, `"pre_deployment"`)
		}
		group := fmt.Sprintf("%q", largeGroups[i%len(largeGroups)])
		if i%10 == 0 {
			group = `"/.*controller/"`
		}
		typ := "puppet"
		if i%4 == 0 {
			typ = "shell"
		}
		tasks = append(tasks, fmt.Sprintf(`{"id":%q,"type":%q,"version":"2.1.0","requires":[%s],"groups":[%s],"required_for":["deploy_end"],`+
			`"parameters":{"puppet_manifest":"/etc/puppet/modules/osnailyfacter/modular/task%d.pp","puppet_modules":"/etc/puppet/modules","timeout":3600},`+
			`"cross-depends":[{"name":"hiera","role":"self"}],"condition":{"yaql_exp":"changed($.network_scheme)"}}`,
			largeTaskID(i), typ, strings.Join(deps, ","), group, i))
	}
	return "[" + strings.Join(tasks, ",") + "]"
}

func largeTaskID(i int) string { return fmt.Sprintf("task-%03d", i) }

// largeOverrides returns n tasks replacing release tasks start, start+step, ...
// followed by add new tasks with the given prefix.
func largeOverrides(prefix string, start, step, n, add int) string {
	var tasks []string
	for k := range n {
		id := largeTaskID(start + k*step)
		tasks = append(tasks, fmt.Sprintf(`{"id":%q,"type":"shell","requires":["pre_deployment"],"required_for":["deploy_end"],"parameters":{"cmd":"echo %s"}}`, id, prefix))
	}
	for k := range add {
		tasks = append(tasks, fmt.Sprintf(`{"id":"%s-%02d","type":"puppet","requires":[%q,%q],"groups":["/compute|cinder/"]}`,
			prefix, k, largeTaskID(k*9), "deploy_start"))
	}
	return "[" + strings.Join(tasks, ",") + "]"
}

func largeSources(t testing.TB) sources {
	t.Helper()
	src := sources{
		release: &Graph{Owner: Owner{Kind: Release, ID: 1}, Tasks: mustTasks(t, largeReleaseJSON())},
		cluster: &Graph{Owner: Owner{Kind: Cluster, ID: 1}, Tasks: mustTasks(t, largeOverrides("cluster", 5, 17, 15, 10))},
	}
	for p := range largePlugins {
		src.plugins = append(src.plugins, pluginGraph{
			plugin: Entry{ID: int64(p + 1), Name: fmt.Sprint("plugin", p), Version: "1.0.0"},
			graph:  Graph{Owner: Owner{Kind: Plugin, ID: int64(p + 1)}, Tasks: mustTasks(t, largeOverrides(fmt.Sprint("plugin", p), p, 3*7, 10, 20))},
		})
	}
	return src
}

// checkOrder fails unless every edge of g goes forwards in order.
func checkOrder(t testing.TB, g *planner.Deps, order []planner.Task) {
	t.Helper()
	pos := map[string]int{}
	for i, task := range order {
		pos[task.ID] = i
	}
	for u, v := range g.Edges() {
		if pos[u.ID] >= pos[v.ID] {
			t.Fatalf("edge %s -> %s goes backwards", u.ID, v.ID)
		}
	}
}

func TestLargeMergeAndOrder(t *testing.T) {
	src := largeSources(t)
	start := time.Now()
	m, err := merge(src)
	if err != nil {
		t.Fatal(err)
	}
	g, err := planner.NewDeps(m.Tasks, true)
	if err != nil {
		t.Fatal(err)
	}
	order := g.Ordered()
	elapsed := time.Since(start)
	// 300 release + 3*20 plugin + 10 cluster new tasks; overrides replace, they do not add.
	if want := largeReleaseTasks + largePlugins*20 + 10; len(order) != want {
		t.Fatalf("%d merged tasks, want %d", len(order), want)
	}
	checkOrder(t, g, order)
	edges := 0
	for range g.Edges() {
		edges++
	}
	// The winner of each replaced release task: the cluster over the plugins
	// (the two sets share task-022 and task-107), a plugin over the release.
	winner := map[string]string{}
	for p := range largePlugins {
		for k := range 10 {
			winner[largeTaskID(p+k*3*7)] = fmt.Sprint("plugin", p)
		}
	}
	for k := range 15 {
		winner[largeTaskID(5+k*17)] = "cluster"
	}
	replaced := 0
	for _, task := range m.Tasks {
		if by, ok := winner[task.ID]; ok {
			if want := `{"cmd":"echo ` + by + `"}`; string(task.Parameters) != want {
				t.Fatalf("%s: parameters %s, want %s", task.ID, task.Parameters, want)
			}
			replaced++
		}
	}
	if replaced != len(winner) {
		t.Fatalf("%d replaced tasks, want %d", replaced, len(winner))
	}
	t.Logf("merge+order of %d tasks (%d edges, %d replaced): %v", len(order), edges, replaced, elapsed)
}

func BenchmarkMergeAndOrder300(b *testing.B) {
	src := largeSources(b)
	b.ReportAllocs()
	for b.Loop() {
		m, err := merge(src)
		if err != nil {
			b.Fatal(err)
		}
		g, err := planner.NewDeps(m.Tasks, true)
		if err != nil {
			b.Fatal(err)
		}
		_ = g.Ordered()
	}
}

// largeService stores the large case on the embedded store: cluster 1 (one
// node, "n1") built from the release with the plugins enabled.
// oneNodeCluster is cluster 1 with the role-less node n1 and the resource
// astute, empty at every node (graphstest imports this package).
type oneNodeCluster struct{}

func (oneNodeCluster) HasResource(_ context.Context, _, resource string) error {
	if resource != planner.DefaultDeploymentInfoResource {
		return errs.NotFoundf("resource %s not found", resource)
	}
	return nil
}

func (oneNodeCluster) Exists(ctx context.Context, id string) error {
	_, err := oneNodeCluster{}.Nodes(ctx, id)
	return err
}

func (oneNodeCluster) Identify(ctx context.Context, ref string) (ClusterIdentity, error) {
	_, err := oneNodeCluster{}.Nodes(ctx, ref)
	return ClusterIdentity{ID: 1, UUID: "00000000-0000-4000-8000-000000000001"}, err
}

func (oneNodeCluster) Nodes(_ context.Context, id string) ([]planner.ClusterNode, error) {
	if id != "1" {
		return nil, errs.NotFoundf("Cluster %s not found", id)
	}
	return []planner.ClusterNode{{ID: "n1"}}, nil
}

func (oneNodeCluster) NodeData(ctx context.Context, cluster, resource string, ids []string, _ time.Time) (map[string]NodeDocument, error) {
	docs := map[string]NodeDocument{}
	for _, id := range ids {
		docs[id] = NodeDocument{ETag: `"empty"`}
	}
	return docs, oneNodeCluster{}.HasResource(ctx, cluster, resource)
}

func (oneNodeCluster) KeyOrigin(context.Context, string, string, string, string, time.Time) (wire.KeyOrigin, error) {
	return wire.KeyOrigin{}, errs.Conflictf("no key")
}

func (oneNodeCluster) NodeParts(context.Context, string, string, []string, time.Time) (map[string]NodeParts, error) {
	return nil, errs.NotFoundf("no deployment data")
}

func largeService(b *testing.B) *Service {
	ctx := context.Background()
	be, err := bolt.Open(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = be.Close() })
	s := NewService(be.Index, be.Blobs, oneNodeCluster{})
	src := largeSources(b)
	put := func(o Owner, tasks []planner.Task) {
		raw, _ := json.Marshal(tasks)
		if _, err := s.CreateGraph(ctx, o, DefaultType, GraphInput{Tasks: raw}, false); err != nil {
			b.Fatal(err)
		}
	}
	rel, _ := s.CreateEntry(ctx, Release, EntryInput{Name: "r", Version: "1"})
	put(Owner{Kind: Release, ID: rel.ID}, src.release.Tasks)
	var plugins []int64
	for _, p := range src.plugins {
		e, _ := s.CreateEntry(ctx, Plugin, EntryInput{Name: p.plugin.Name, Version: p.plugin.Version})
		put(Owner{Kind: Plugin, ID: e.ID}, p.graph.Tasks)
		plugins = append(plugins, e.ID)
	}
	put(Owner{Kind: Cluster, ID: 1}, src.cluster.Tasks)
	if _, err := s.SetCluster(ctx, 1, ClusterInput{ReleaseID: &rel.ID, Plugins: plugins}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkDeploymentTasks300 is the same case end to end on the embedded
// store: read the cluster's sources, decode, merge, validate the order.
func BenchmarkDeploymentTasks300(b *testing.B) {
	ctx := context.Background()
	s := largeService(b)
	b.ReportAllocs()
	for b.Loop() {
		tasks, err := s.DeploymentTasks(ctx, 1, DefaultType, Merged)
		if err != nil {
			b.Fatal(err)
		}
		if len(tasks) != 370 {
			b.Fatalf("%d tasks", len(tasks))
		}
	}
}

// BenchmarkClaimAndReport300 is one agent step (claim the next task, report
// it ready) through the frozen plan of the large case; a finished transaction
// is followed by a new execution, whose cost is part of the figure.
func BenchmarkClaimAndReport300(b *testing.B) {
	ctx := context.Background()
	s := largeService(b)
	cluster := int64(1)
	execute := func() string {
		tx, err := s.Execute(ctx, ExecuteRequest{Cluster: &cluster, Graphs: []GraphRun{{Type: DefaultType}}})
		if err != nil {
			b.Fatal(err)
		}
		return tx.UUID
	}
	tx := execute()
	b.ReportAllocs()
	for b.Loop() {
		c, err := s.Claim(ctx, tx, "n1")
		if err != nil {
			b.Fatal(err)
		}
		if c.Action == ActionDone {
			tx = execute()
			continue
		}
		if _, err := s.Report(ctx, tx, "n1", TaskReport{Task: c.Task.ID(), Status: StatusReady}); err != nil {
			b.Fatal(err)
		}
	}
}
