package planner

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs/nailguntest"
)

// The planner on fuel-library's default graph and a cluster made of the
// reference's nodes (nailguntest), at the scale of a large cluster.

// noWaitLimit leaves the waits across nodes unbounded (graphs bounds them by PlanLimits.Edges).
const noWaitLimit = math.MaxInt

// fuelCluster returns fuel-library's default graph in dependency order, its
// role rules, and count nodes of the shared roles (3 controllers, the primary
// among them, then computes and Ceph OSDs in turn), each with its own copy of
// its role's astute.yaml and no old data.
func fuelCluster(t testing.TB, count int) ([]Task, Rules, []PlanNode) {
	_, in := nailguntest.Cluster(t, "first")
	tasks, err := ParseTasks(in.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewDeps(tasks, false)
	if err != nil {
		t.Fatal(err)
	}
	byRole := map[string]map[string]any{}
	for _, n := range in.Nodes {
		byRole[n.Roles[0]] = n.Data.(map[string]any)
	}
	nodes := make([]PlanNode, count)
	for i := range nodes {
		role := []string{"primary-controller", "controller", "controller"}[min(i, 2)]
		if i >= 3 {
			role = []string{"compute", "ceph-osd"}[i%2]
		}
		nodes[i] = PlanNode{ClusterNode: ClusterNode{ID: fmt.Sprint(i + 1), Roles: []string{role}}, Data: maps.Clone(byRole[role]), Old: map[string]any{}}
	}
	return g.Ordered(), NewRules(EntryMetadata{RolesMetadata: in.RolesMetadata, TagsMetadata: in.TagsMetadata}), nodes
}

// TestCompactWaitsKeepThePlan plans fuel-library's graph on 200 nodes with
// waits for a task on every node stored compact and stored as a step
// reference per node: each node's steps, and what each step waits for, are
// the same.
func TestCompactWaitsKeepThePlan(t *testing.T) {
	ordered, rules, nodes := fuelCluster(t, 200)
	// The Fuel master, whose tasks every node's waits leave out or name one by one.
	master := nodes[0]
	master.ClusterNode = ClusterNode{ID: "master", Roles: []string{MasterRole}}
	nodes = append(nodes, master)
	p, err := place(context.Background(), ordered, make([]bool, len(ordered)), nodes, rules, false)
	if err != nil {
		t.Fatal(err)
	}
	resolve := func(compactFrom int) (map[string][]NodeStep, map[int][]StepRef) {
		r, err := newResolver(ordered, p)
		if err != nil {
			t.Fatal(err)
		}
		r.compactFrom = compactFrom
		if err := r.collectWaits(noWaitLimit); err != nil {
			t.Fatal(err)
		}
		order, err := r.order()
		if err != nil {
			t.Fatal(err)
		}
		return r.steps(order)
	}
	explicit, none := resolve(math.MaxInt)
	compact, every := resolve(compactWaitNodes)
	if none != nil || len(every) == 0 {
		t.Fatalf("compact waits: %d tasks with the explicit plan, %d with the compact one", len(none), len(every))
	}
	compacted := 0
	for _, node := range nodes {
		id := node.ID
		if len(compact[id]) != len(explicit[id]) {
			t.Fatalf("node %s: %d steps compact, %d explicit", id, len(compact[id]), len(explicit[id]))
		}
		for k, step := range compact[id] {
			want := explicit[id][k]
			if step.Task != want.Task || step.Skip != want.Skip || !slices.EqualFunc(step.AfterAny, want.AfterAny, slices.Equal) {
				t.Fatalf("node %s step %d: %+v compact, %+v explicit", id, k, step, want)
			}
			// Compact, a step also names steps of its own node before it (passed anyway).
			var got []StepRef
			waits := slices.Clone(step.After)
			for _, j := range step.AfterEvery {
				waits = append(waits, every[j]...)
			}
			for _, ref := range waits {
				if ref.Node != id || ref.Step >= k {
					got = append(got, ref)
				}
			}
			slices.SortFunc(got, compareStepRefs)
			if after := slices.SortedFunc(slices.Values(want.After), compareStepRefs); !slices.Equal(slices.Compact(got), after) {
				t.Fatalf("node %s step %d (%s) waits for %d steps compact, %d explicit", id, k, ordered[step.Task].ID, len(got), len(after))
			}
			compacted += len(step.AfterEvery)
		}
	}
	if err := checkNodeCycles(ordered, nodeClusterNodes(nodes), compact, every); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d waits for %d tasks on every node stored compact", compacted, len(every))
}

func compareStepRefs(a, b StepRef) int {
	return cmp.Or(cmp.Compare(a.Node, b.Node), cmp.Compare(a.Step, b.Step))
}

func nodeClusterNodes(nodes []PlanNode) []ClusterNode {
	out := make([]ClusterNode, len(nodes))
	for i, n := range nodes {
		out[i] = n.ClusterNode
	}
	return out
}

// BenchmarkPlanFuel plans fuel-library's default graph, conditions
// included, for 1,000 and 5,000 nodes (fuelCluster): first with no old
// data, then with old data equal to the new (a re-run with nothing changed).
func BenchmarkPlanFuel(b *testing.B) {
	for _, count := range []int{1000, 5000} {
		ordered, rules, nodes := fuelCluster(b, count)
		b.Run(fmt.Sprintf("nodes=%d", count), func(b *testing.B) {
			benchmarkPlanFuel(b, ordered, nodes, rules)
		})
	}
}

func benchmarkPlanFuel(b *testing.B, ordered []Task, nodes []PlanNode, rules Rules) {
	for _, state := range []string{"first", "same"} {
		for i := range nodes {
			nodes[i].Old = map[string]any{}
			if state == "same" {
				nodes[i].Old = nodes[i].Data
			}
		}
		for _, explain := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/explain=%v", state, explain), func(b *testing.B) {
				benchmarkPlan(b, ordered, nodes, rules, explain)
			})
		}
	}
}

// benchmarkPlan places and orders a plan, explained or not: what an
// explanation costs beside the plain plan.
func benchmarkPlan(b *testing.B, ordered []Task, nodes []PlanNode, rules Rules, explain bool) {
	b.ReportAllocs()
	// What a run keeps of it: the frozen plan (graphs' frozenPlan: these fields
	// and smaller ones), stored as one blob.
	var plan struct {
		Tasks  []Task                `json:"tasks"`
		Nodes  map[string][]NodeStep `json:"nodes"`
		Every  map[int][]StepRef     `json:"every,omitempty"`
		Limits map[string]int        `json:"limits,omitempty"`
	}
	for b.Loop() {
		p, err := place(context.Background(), ordered, make([]bool, len(ordered)), nodes, rules, explain)
		if err != nil {
			b.Fatal(err)
		}
		steps, every, err := resolveNodes(ordered, p, noWaitLimit)
		if err != nil {
			b.Fatal(err)
		}
		plan.Tasks, plan.Nodes, plan.Every, plan.Limits = ordered, steps, every, p.limits
	}
	raw, err := json.Marshal(plan)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(len(raw))/1e6, "plan-MB")
}
