package graphs

import (
	"context"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// A plan stored before tasks were resolved per node is a bare task list:
// every node runs all of it, and nothing waits across nodes.
func TestLegacyPlanRunsWholeOnEveryNode(t *testing.T) {
	b := mem.New()
	s := NewService(b.Index, b.Blobs, oneNodeCluster{})
	hash, err := b.Blobs.Put(context.Background(), []byte(`[{"id":"a","type":"shell"},{"id":"g","type":"group"},{"id":"b","type":"shell"}]`))
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.loadPlan(context.Background(), hash)
	if err != nil {
		t.Fatal(err)
	}
	steps := plan.steps("any-node")
	if len(steps) != 3 || steps[2].Task != 2 || steps[0].Waits() || plan.nextRunnable(steps, 1) != 2 {
		t.Fatalf("steps = %+v", steps)
	}
	got, err := serialize(context.Background(), plan, "n", s.pinnedRenderer(1, plan))
	if err != nil || len(got) != 2 || got[1].Task.ID() != "b" {
		t.Fatalf("serialized = %+v, %v", got, err)
	}
}
