package graphs

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// twoNodeCluster is cluster 1 with the role-less nodes n1 and n2.
type twoNodeCluster struct{ oneNodeCluster }

func (twoNodeCluster) Nodes(_ context.Context, id string) ([]planner.ClusterNode, error) {
	if id != "1" {
		return nil, errs.NotFoundf("Cluster %s not found", id)
	}
	return []planner.ClusterNode{{ID: "n1"}, {ID: "n2"}}, nil
}

// replacePlan lets change modify the frozen plan of a transaction's first
// sub-transaction (what the planner will write: Skip steps, Limits).
func replacePlan(t *testing.T, s *Service, tx string, change func(*frozenPlan)) {
	t.Helper()
	ctx := context.Background()
	st, err := s.readTx(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := s.loadPlan(ctx, st.subs[0].Plan)
	if err != nil {
		t.Fatal(err)
	}
	changed := frozenPlan{Tasks: plan.Tasks, Nodes: map[string][]planner.NodeStep{}}
	for n, steps := range plan.Nodes {
		changed.Nodes[n] = slices.Clone(steps)
	}
	change(&changed)
	blob, err := store.PutBlob(ctx, s.idx, s.blobs, mustJSON(changed))
	if err != nil {
		t.Fatal(err)
	}
	st.subs[0].Plan = blob.Hash
	if err := s.idx.Write(ctx, append(blob.Ops, st.subOp(0))...); err != nil {
		t.Fatal(err)
	}
}

func claimFor(t *testing.T, s *Service, tx, node, action, task string) {
	t.Helper()
	c, err := s.Claim(context.Background(), tx, node)
	if err != nil {
		t.Fatal(err)
	}
	if c.Action != action || (task != "" && (c.Task == nil || c.Task.ID() != task)) {
		t.Fatalf("claim of %s = %+v, want %s %s", node, c, action, task)
	}
}

func reportReady(t *testing.T, s *Service, tx, node, task string) {
	t.Helper()
	if _, err := s.Report(context.Background(), tx, node, TaskReport{Task: task, Status: StatusReady}); err != nil {
		t.Fatal(err)
	}
}

// A step the plan marks Skip is passed without being handed out; a task the
// plan limits to one node at a time is handed to one node, the other waits
// until the first reports it.
func TestClaimHonoursSkipAndLimits(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	s := NewService(b.Index, b.Blobs, twoNodeCluster{})
	if _, err := s.CreateGraph(ctx, Owner{Kind: Cluster, ID: 1}, DefaultType, GraphInput{Tasks: []byte(
		`[{"id":"a","type":"shell"},{"id":"b","type":"shell","requires":["a"]}]`)}, false); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	tx, err := s.Execute(ctx, ExecuteRequest{Cluster: &one, Graphs: []GraphRun{{Type: DefaultType}}})
	if err != nil {
		t.Fatal(err)
	}
	replacePlan(t, s, tx.UUID, func(p *frozenPlan) {
		p.Nodes["n1"][0].Skip = "condition"
		p.Limits = map[string]int{"b": 1}
	})
	claimFor(t, s, tx.UUID, "n1", ActionTask, "b")
	claimFor(t, s, tx.UUID, "n2", ActionTask, "a")
	reportReady(t, s, tx.UUID, "n2", "a")
	claimFor(t, s, tx.UUID, "n2", ActionWait, "")
	claimFor(t, s, tx.UUID, "n2", ActionWait, "")
	reportReady(t, s, tx.UUID, "n1", "b")
	claimFor(t, s, tx.UUID, "n1", ActionDone, "")
	claimFor(t, s, tx.UUID, "n2", ActionTask, "b")
	reportReady(t, s, tx.UUID, "n2", "b")

	view, err := s.Transaction(ctx, tx.SubTransactions[0].UUID)
	if err != nil {
		t.Fatal(err)
	}
	if view.Status != StatusReady || len(view.Nodes[0].Results) != 1 || view.Nodes[0].Results[0].Task != "b" || len(view.Nodes[1].Results) != 2 {
		t.Fatalf("sub-transaction = %+v", view)
	}

	// Two nodes claiming the limited task at once: one gets it, the other waits.
	tx, err = s.Execute(ctx, ExecuteRequest{Cluster: &one, Graphs: []GraphRun{{Type: DefaultType}}})
	if err != nil {
		t.Fatal(err)
	}
	replacePlan(t, s, tx.UUID, func(p *frozenPlan) {
		p.Nodes["n1"][0].Skip, p.Nodes["n2"][0].Skip = "filtered", "filtered"
		p.Limits = map[string]int{"b": 1}
	})
	actions := make(chan string, 2)
	var wg sync.WaitGroup
	for _, n := range []string{"n1", "n2"} {
		wg.Go(func() {
			c, err := s.Claim(ctx, tx.UUID, n)
			if err != nil {
				t.Error(err)
			}
			actions <- c.Action
		})
	}
	wg.Wait()
	close(actions)
	var got []string
	for a := range actions {
		got = append(got, a)
	}
	if slices.Sort(got); !slices.Equal(got, []string{ActionTask, ActionWait}) {
		t.Fatalf("concurrent claims of a task limited to one node: %v", got)
	}
}
