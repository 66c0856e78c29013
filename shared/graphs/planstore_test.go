package graphs

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// A plan whose steps pass planPartBytes is stored split: the head alone
// has no node's steps, each node's are read back from its part as planned,
// with those of the nodes they wait for when asked, and the parts never
// outnumber what the execution's write can reference.
func TestSplitPlanReadsBackByNode(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	s := NewService(b.Index, b.Blobs, oneNodeCluster{})
	plan := &frozenPlan{Tasks: []planner.Task{{ID: "a", Type: planner.TypeShell}, {ID: "b", Type: planner.TypeShell}}, Nodes: map[string][]planner.NodeStep{}, Limits: map[string]int{"b": 3}}
	var order []string
	for n := range 2000 {
		id := fmt.Sprintf("n%d", n)
		order = append(order, id)
		wait := planner.NodeStep{Task: 1}
		for k := range 30 { // each node waits for "a" on 30 others: ~750 bytes of steps
			wait.After = append(wait.After, planner.StepRef{Node: fmt.Sprintf("n%d", (n+k+1)%2000), Step: 0})
		}
		plan.Nodes[id] = []planner.NodeStep{{Task: 0}, wait}
	}
	for _, maxParts := range []int{4, 1} {
		var parts, ops int
		counted := func(ctx context.Context, data []byte) (string, []store.Op, error) {
			hash, refs, err := s.referencedBlob(ctx, data)
			parts, ops = parts+1, ops+len(refs)
			return hash, refs, err
		}
		hash, refs, err := storePlan(ctx, plan, order, maxParts, counted)
		if err != nil {
			t.Fatal(err)
		}
		if parts--; parts < 2 && maxParts > 1 || parts > maxParts || len(refs) != ops || ops != planBlobOps*(parts+1) {
			t.Fatalf("max %d parts: %d parts and a head, %d operations returned of %d", maxParts, parts, len(refs), ops)
		}
		s.plans.Remove(hash) // read the head back from its blob
		head, err := s.loadPlan(ctx, hash)
		if err != nil {
			t.Fatal(err)
		}
		if len(head.Nodes) != 0 || head.Limits["b"] != 3 || len(head.Tasks) != 2 {
			t.Fatalf("the head: %d nodes' steps, limits %v, %d tasks", len(head.Nodes), head.Limits, len(head.Tasks))
		}
		some, err := s.loadPlan(ctx, hash, "n0", "n1999", "unknown")
		if err != nil {
			t.Fatal(err)
		}
		if len(some.Nodes) != 2 || !slices.EqualFunc(some.steps("n1999"), plan.Nodes["n1999"], stepsEqual) || !slices.EqualFunc(some.steps("n0"), plan.Nodes["n0"], stepsEqual) {
			t.Fatalf("steps read back: %+v", some.Nodes)
		}
		showing, err := s.loadPlanShowing(ctx, hash, []string{"n7"})
		if err != nil {
			t.Fatal(err)
		}
		listed, err := serialize(ctx, showing, "n7", s.pinnedRenderer(1, showing))
		if err != nil || len(showing.Nodes) != 31 || listed[1].WaitFor[29] != (NodeTaskRef{Node: "n37", Task: "a"}) {
			t.Fatalf("n7 and the 30 nodes it waits for: %d nodes (%v)", len(showing.Nodes), err)
		}
	}
	blobs := 0
	small := &frozenPlan{Tasks: plan.Tasks, Nodes: map[string][]planner.NodeStep{"n0": plan.Nodes["n0"]}}
	if _, _, err := storePlan(ctx, small, []string{"n0"}, 4, func(context.Context, []byte) (string, []store.Op, error) {
		blobs++
		return "", nil, nil
	}); err != nil || blobs != 1 {
		t.Errorf("a small plan takes %d blobs (%v)", blobs, err)
	}
}

func stepsEqual(a, b planner.NodeStep) bool { return fmt.Sprint(a) == fmt.Sprint(b) }

// An explained plan keeps each node's explanations beside its steps in the
// parts, not in the head: a page reads its own nodes' only.
func TestSplitPlanKeepsExplanationsByNode(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	s := NewService(b.Index, b.Blobs, oneNodeCluster{})
	plan := &frozenPlan{Tasks: []planner.Task{{ID: "a", Type: planner.TypeShell}}, Nodes: map[string][]planner.NodeStep{}, Why: map[string][]*wire.Why{}}
	var order []string
	for n := range 2000 {
		id := fmt.Sprintf("n%d", n)
		order = append(order, id)
		plan.Nodes[id] = []planner.NodeStep{{Task: 0}}
		plan.Why[id] = []*wire.Why{{Placed: "every node " + id, Decision: "runs: it has no condition " + strings.Repeat("x", 600)}}
	}
	hash, _, err := storePlan(ctx, plan, order, 4, s.referencedBlob)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := b.Blobs.Get(ctx, hash)
	if err != nil || bytes.Contains(raw, []byte("every node n7")) || len(raw) > 1<<20 {
		t.Fatalf("the head holds explanations (%d bytes, %v)", len(raw), err)
	}
	s.plans.Remove(hash)
	some, err := s.loadPlan(ctx, hash, "n7")
	if err != nil {
		t.Fatal(err)
	}
	if len(some.Why) != 1 || some.Why["n7"][0].Placed != "every node n7" {
		t.Fatalf("explanations read back: %d nodes, %+v", len(some.Why), some.Why["n7"])
	}
}

// Nodes with the same steps (waits for a task on every node name no node)
// can fill parts alike: such a part is one blob, referenced once in the
// write that stores the plan (5,000 of fuel-library's nodes made the write
// name one blob twice and fail).
func TestSplitPlanOfNodesAlike(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	s := NewService(b.Index, b.Blobs, oneNodeCluster{})
	plan := &frozenPlan{Tasks: []planner.Task{{ID: "a", Type: planner.TypeShell}}, Nodes: map[string][]planner.NodeStep{}}
	var order []string
	steps := slices.Repeat([]planner.NodeStep{{Task: 0, AfterEvery: []int{0}}}, 100)
	for n := range 2000 {
		id := fmt.Sprintf("n%d", n)
		order = append(order, id)
		plan.Nodes[id] = steps
	}
	hash, ops, err := storePlan(ctx, plan, order, 8, s.referencedBlob)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.idx.Write(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	head, err := s.planHead(ctx, hash)
	if err != nil || len(slices.Compact(slices.Clone(head.Parts))) >= len(head.Parts)-1 {
		t.Fatalf("parts %v (%v), want several the same blob", head.Parts, err)
	}
	some, err := s.loadPlan(ctx, hash, "n1999")
	if err != nil || !slices.EqualFunc(some.steps("n1999"), steps, stepsEqual) {
		t.Fatalf("n1999's steps read back: %v (%v)", some.steps("n1999"), err)
	}
}
