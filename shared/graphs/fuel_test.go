package graphs

import (
	"context"
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs/nailguntest"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

// The differential test of the planner: fuel-library's default graph, its
// release metadata and a cluster of real nodes' astute.yaml (testdata/
// nailgun_cluster.py builds them from testdata/fuel at the repository root), planned by tuningbox
// and by testdata/nailgun_plan.py, an independent port of Nailgun's LCM
// serializer on Debian's python3-yaql. Both must place, run and skip the same
// tasks on every node, and tuningbox's order must hold every dependency edge
// Nailgun emits (requires and cross-depends, across nodes).

// The reference runs Nailgun's own unit tests, ported, before it is trusted.
func TestNailgunReferenceSelfTest(t *testing.T) {
	t.Parallel()
	nailguntest.Python(t, nil, "-m", "unittest", "discover", "-s", nailguntest.Testdata(), "-p", "nailgun_*_test.py")
}

func TestPlanAgreesWithNailgun(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"first", "same", "glance"} {
		t.Run(state, func(t *testing.T) {
			raw, in := nailguntest.Cluster(t, state)
			var want struct {
				Nodes                map[string]nailguntest.Node   `json:"nodes"`
				FaultToleranceGroups []planner.FaultToleranceGroup `json:"fault_tolerance_groups"`
			}
			if err := json.Unmarshal(nailguntest.Python(t, raw, filepath.Join(nailguntest.Testdata(), "nailgun_plan.py")), &want); err != nil {
				t.Fatal(err)
			}
			tasks, err := planner.ParseTasks(in.Tasks)
			if err != nil {
				t.Fatal(err)
			}
			g, err := planner.NewDeps(tasks, false)
			if err != nil {
				t.Fatal(err)
			}
			ordered, filtered, err := g.Select(planner.Selection{})
			if err != nil {
				t.Fatal(err)
			}
			nodes := make([]planner.PlanNode, len(in.Nodes))
			for n, node := range in.Nodes {
				nodes[n] = planner.PlanNode{ClusterNode: planner.ClusterNode{ID: node.UID, Roles: node.Roles}, Data: node.Data, Old: node.Old}
				if node.Old == nil {
					nodes[n].Old = map[string]any{}
				}
			}
			rules := planner.NewRules(planner.EntryMetadata{RolesMetadata: in.RolesMetadata, TagsMetadata: in.TagsMetadata})
			p, err := planner.Plan(context.Background(), ordered, nodes, rules, planner.Options{
				Filtered: filtered, MaxNodeTasks: DefaultPlanNodeTasks, MaxWaits: DefaultPlanEdges,
			})
			if err != nil {
				t.Fatal(err)
			}
			plan := &frozenPlan{Tasks: ordered, Nodes: p.Steps, Every: p.Every, Limits: p.Limits}
			for _, node := range nodes {
				w := want.Nodes[node.ID]
				placed, run, skipped := plannedOn(plan, node.ID)
				t.Logf("node %s %v: placed %d, run %d, skipped %d (nailgun: %d, %d, %d)", node.ID, node.Roles,
					len(placed), len(run), len(skipped), len(w.Placed), len(w.Run), len(w.Skipped))
				for _, c := range []struct {
					what      string
					got, want []string
				}{{"placed", placed, w.Placed}, {"run", run, w.Run}, {"skipped", slices.Sorted(maps.Keys(skipped)), slices.Sorted(maps.Keys(w.Skipped))}} {
					if !slices.Equal(c.got, c.want) {
						t.Errorf("node %s %s:\n only tuningbox: %v\n only nailgun:   %v", node.ID, c.what, minus(c.got, c.want), minus(c.want, c.got))
					}
				}
				for id, reason := range w.Skipped {
					if got := skipped[id]; got != reason && !(reason == "skipped_type" && got == SkipType) {
						t.Errorf("node %s skips %s for %q, nailgun for %q", node.ID, id, got, reason)
					}
				}
				for id, st := range w.Strategy {
					amount := 0
					switch {
					case st.Type == planner.StrategyOneByOne:
						amount = 1
					case st.Amount != nil:
						amount = *st.Amount
					}
					if amount > 0 && plan.Limits[id] > amount {
						t.Errorf("task %s runs on %d nodes at once, nailgun's strategy on node %s says %d", id, plan.Limits[id], node.ID, amount)
					}
				}
			}
			checkOrderHolds(t, plan, want.Nodes)
			// The same groups, in any order (Nailgun's is the graph file's).
			byName := func(a, b planner.FaultToleranceGroup) int { return strings.Compare(a.Name, b.Name) }
			groups := p.Groups
			slices.SortFunc(groups, byName)
			slices.SortFunc(want.FaultToleranceGroups, byName)
			if !reflect.DeepEqual(groups, want.FaultToleranceGroups) {
				t.Errorf("fault-tolerance groups:\n tuningbox %v\n nailgun   %v", groups, want.FaultToleranceGroups)
			}
		})
	}
}

// plannedOn lists what a plan does with a node's tasks: the ids placed on
// it (not counting group and stage tasks), the ones it runs and the ones it
// skips with the reason.
func plannedOn(plan *frozenPlan, node string) (placed, run []string, skipped map[string]string) {
	skipped = map[string]string{}
	for _, step := range plan.steps(node) {
		t := plan.Tasks[step.Task]
		if t.Type == planner.TypeGroup || t.Type == planner.TypeStage {
			continue
		}
		placed = append(placed, t.ID)
		if plan.handedOut(step) {
			run = append(run, t.ID)
		}
	}
	for _, s := range plan.skipped(node) {
		skipped[s.Task] = s.Reason
	}
	slices.Sort(placed)
	slices.Sort(run)
	return placed, run, skipped
}

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// checkOrderHolds plays the plan in rounds (in each round every node passes
// the steps whose waits were met in earlier rounds, running at most one
// task) and checks that every edge Nailgun emits between two real nodes'
// tasks holds: the task depended on is done first.
func checkOrderHolds(t *testing.T, plan *frozenPlan, nailgun map[string]nailguntest.Node) {
	t.Helper()
	done := map[planner.StepRef]int{}
	stepOf := map[[2]string]planner.StepRef{}
	next := map[string]int{}
	for node, steps := range plan.Nodes {
		for k, s := range steps {
			stepOf[[2]string{plan.Tasks[s.Task].ID, node}] = planner.StepRef{Node: node, Step: k}
		}
	}
	met := func(s planner.NodeStep, round int) bool {
		for _, r := range s.After {
			if d, ok := done[r]; !ok || d >= round {
				return false
			}
		}
		for _, group := range s.AfterAny {
			if !slices.ContainsFunc(group, func(r planner.StepRef) bool { d, ok := done[r]; return ok && d < round }) {
				return false
			}
		}
		return true
	}
	for round := 1; ; round++ {
		progressed, left := false, false
		for node, steps := range plan.Nodes {
			for next[node] < len(steps) && met(steps[next[node]], round) {
				s := steps[next[node]]
				done[planner.StepRef{Node: node, Step: next[node]}] = round
				next[node]++
				progressed = true
				if plan.handedOut(s) {
					break
				}
			}
			left = left || next[node] < len(steps)
		}
		if !left {
			break
		}
		if !progressed {
			t.Fatalf("the plan does not run to its end: stuck at %v", next)
		}
	}
	checked := 0
	edge := func(before, after [2]string) {
		b, okB := stepOf[before]
		a, okA := stepOf[after]
		if !okB || !okA {
			t.Errorf("nailgun's edge %v -> %v: not in tuningbox's plan", before, after)
			return
		}
		checked++
		if a.Node == b.Node && b.Step >= a.Step || a.Node != b.Node && done[b] >= done[a] {
			t.Errorf("%s on node %s runs before %s on node %s is done", after[0], after[1], before[0], before[1])
		}
	}
	for node, n := range nailgun {
		if node == "master" || node == "null" {
			continue // tuningbox has no master node, and its stages are on every node
		}
		for task, deps := range n.Requires {
			for _, d := range deps {
				if d[1] != nil && nailgun[*d[1]].Placed != nil && *d[1] != "master" {
					edge([2]string{*d[0], *d[1]}, [2]string{task, node})
				}
			}
		}
		for task, deps := range n.RequiredFor {
			for _, d := range deps {
				if d[1] != nil && nailgun[*d[1]].Placed != nil && *d[1] != "master" {
					edge([2]string{task, node}, [2]string{*d[0], *d[1]})
				}
			}
		}
	}
	t.Logf("%d of nailgun's dependency edges between nodes' tasks hold in tuningbox's order", checked)
}
