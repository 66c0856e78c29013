package graphs_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/metrics"
)

// Transactions and tasks are counted by the state they entered, once per
// committed change: a repeated claim or report counts nothing.
func TestRunsAndTasksAreCountedByState(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	reg := metrics.NewRegistry()
	s.RegisterMetrics(reg)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default"}}}))
	wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	drive(t, s, tx.UUID, "n1", "a", "ready")
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: "ready"})) // a repeat
	drive(t, s, tx.UUID, "n1", "b", "ready")
	drive(t, s, tx.UUID, "n2", "a", "ready")
	drive(t, s, tx.UUID, "n2", "b", "skipped")
	stopped := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "upgrade"}}}))
	must[graphs.Transaction](t)(s.Stop(ctx, stopped.UUID))

	var got []string
	reg.Each(func(f metrics.Family, series metrics.Series, v float64) {
		if f.Name == "tuningbox_runs_total" || f.Name == "tuningbox_tasks_total" {
			got = append(got, fmt.Sprint(f.Name, series.Values, v))
		}
	})
	slices.Sort(got)
	want := []string{"tuningbox_runs_total[ready] 1", "tuningbox_runs_total[running] 2", "tuningbox_runs_total[stopped] 1",
		"tuningbox_tasks_total[ready] 3", "tuningbox_tasks_total[running] 4", "tuningbox_tasks_total[skipped] 1"}
	if !slices.Equal(got, want) {
		t.Errorf("counted %v, want %v", got, want)
	}
}
