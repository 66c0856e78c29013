package graphs

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os/exec"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// The differential test of the planner: fuel-library's default graph, its
// release metadata and a cluster of real nodes' astute.yaml (testdata/
// nailgun_cluster.py builds them from testdata/fuel at the repository root), planned by tuningbox
// and by testdata/nailgun_plan.py, an independent port of Nailgun's LCM
// serializer on Debian's python3-yaql. Both must place, run and skip the same
// tasks on every node, and tuningbox's order must hold every dependency edge
// Nailgun emits (requires and cross-depends, across nodes).

// nailgunInput is nailgun_plan.py's input.
type nailgunInput struct {
	Tasks         json.RawMessage            `json:"tasks"`
	RolesMetadata map[string]json.RawMessage `json:"roles_metadata"`
	TagsMetadata  map[string]json.RawMessage `json:"tags_metadata"`
	Nodes         []struct {
		UID   string   `json:"uid"`
		Roles []string `json:"roles"`
		Data  any      `json:"data"`
		Old   any      `json:"old"`
	} `json:"nodes"`
}

// nailgunNode is nailgun_plan.py's output for one node.
type nailgunNode struct {
	Placed   []string          `json:"placed"`
	Run      []string          `json:"run"`
	Skipped  map[string]string `json:"skipped"`
	Strategy map[string]struct {
		Type   string
		Amount *int
	} `json:"strategy"`
	Requires    map[string][][2]*string `json:"requires"`
	RequiredFor map[string][][2]*string `json:"required_for"`
}

func python(t testing.TB, stdin []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("/usr/bin/python3", args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3 %v: %v\n%s\n(the reference needs Debian's python3-yaql: apt-get install -y --no-install-recommends python3-yaql)", args, err, stderr.Bytes())
	}
	return out
}

// The reference runs Nailgun's own unit tests, ported, before it is trusted.
func TestNailgunReferenceSelfTest(t *testing.T) {
	t.Parallel()
	python(t, nil, "-m", "unittest", "discover", "-s", "testdata", "-p", "nailgun_*_test.py")
}

func TestPlanAgreesWithNailgun(t *testing.T) {
	t.Parallel()
	for _, state := range []string{"first", "same", "glance"} {
		t.Run(state, func(t *testing.T) {
			raw := python(t, nil, "testdata/nailgun_cluster.py", "--old", state)
			var in nailgunInput
			if err := json.Unmarshal(raw, &in); err != nil {
				t.Fatal(err)
			}
			var want struct {
				Nodes                map[string]nailgunNode `json:"nodes"`
				FaultToleranceGroups []FaultToleranceGroup  `json:"fault_tolerance_groups"`
			}
			if err := json.Unmarshal(python(t, raw, "testdata/nailgun_plan.py"), &want); err != nil {
				t.Fatal(err)
			}
			tasks, err := ParseTasks(in.Tasks)
			if err != nil {
				t.Fatal(err)
			}
			g, err := newDepGraph(tasks, false)
			if err != nil {
				t.Fatal(err)
			}
			ordered := g.ordered()
			nodes := make([]PlanNode, len(in.Nodes))
			for n, node := range in.Nodes {
				nodes[n] = PlanNode{ClusterNode: ClusterNode{ID: node.UID, Roles: node.Roles}, Data: node.Data, Old: node.Old}
				if node.Old == nil {
					nodes[n].Old = map[string]any{}
				}
			}
			rules := newTagRules(EntryMetadata{RolesMetadata: in.RolesMetadata, TagsMetadata: in.TagsMetadata})
			p, err := place(context.Background(), ordered, make([]bool, len(ordered)), nodes, rules, false)
			if err != nil {
				t.Fatal(err)
			}
			steps, every, err := resolveNodes(ordered, p, DefaultPlanEdges)
			if err != nil {
				t.Fatal(err)
			}
			plan := &frozenPlan{Tasks: ordered, Nodes: steps, Every: every, Limits: p.limits}
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
					case st.Type == StrategyOneByOne:
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
			byName := func(a, b FaultToleranceGroup) int { return strings.Compare(a.Name, b.Name) }
			groups := faultToleranceGroups(ordered, p)
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
		if t.Type == TypeGroup || t.Type == TypeStage {
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
func checkOrderHolds(t *testing.T, plan *frozenPlan, nailgun map[string]nailgunNode) {
	t.Helper()
	done := map[StepRef]int{}
	stepOf := map[[2]string]StepRef{}
	next := map[string]int{}
	for node, steps := range plan.Nodes {
		for k, s := range steps {
			stepOf[[2]string{plan.Tasks[s.Task].ID, node}] = StepRef{Node: node, Step: k}
		}
	}
	met := func(s NodeStep, round int) bool {
		for _, r := range s.After {
			if d, ok := done[r]; !ok || d >= round {
				return false
			}
		}
		for _, group := range s.AfterAny {
			if !slices.ContainsFunc(group, func(r StepRef) bool { d, ok := done[r]; return ok && d < round }) {
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
				done[StepRef{Node: node, Step: next[node]}] = round
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

// fuelCluster returns fuel-library's default graph in dependency order, its
// role rules, and count nodes of the shared roles (3 controllers, the primary
// among them, then computes and Ceph OSDs in turn), each with its own copy of
// its role's astute.yaml and no old data.
func fuelCluster(t testing.TB, count int) ([]Task, tagRules, []PlanNode) {
	raw := python(t, nil, "testdata/nailgun_cluster.py", "--old", "first")
	var in nailgunInput
	if err := json.Unmarshal(raw, &in); err != nil {
		t.Fatal(err)
	}
	tasks, err := ParseTasks(in.Tasks)
	if err != nil {
		t.Fatal(err)
	}
	g, err := newDepGraph(tasks, false)
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
	return g.ordered(), newTagRules(EntryMetadata{RolesMetadata: in.RolesMetadata, TagsMetadata: in.TagsMetadata}), nodes
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
		if err := r.collectWaits(DefaultPlanEdges); err != nil {
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

func benchmarkPlanFuel(b *testing.B, ordered []Task, nodes []PlanNode, rules tagRules) {
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
func benchmarkPlan(b *testing.B, ordered []Task, nodes []PlanNode, rules tagRules, explain bool) {
	b.ReportAllocs()
	var plan frozenPlan
	for b.Loop() {
		p, err := place(context.Background(), ordered, make([]bool, len(ordered)), nodes, rules, explain)
		if err != nil {
			b.Fatal(err)
		}
		steps, every, err := resolveNodes(ordered, p, DefaultPlanEdges)
		if err != nil {
			b.Fatal(err)
		}
		plan = frozenPlan{Tasks: ordered, Nodes: steps, Every: every, Limits: p.limits}
	}
	// What a run keeps of it: the frozen plan, stored as one blob.
	b.ReportMetric(float64(len(mustJSON(plan)))/1e6, "plan-MB")
}
