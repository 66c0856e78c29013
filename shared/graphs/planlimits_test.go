package graphs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store/mem"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// clusterOf returns a service whose cluster 1 has n compute nodes and the graph
// of type default with tasks (a JSON list).
func clusterOf(t *testing.T, n int, tasks any, opts ...graphs.Option) *graphs.Service {
	t.Helper()
	b := mem.New()
	nodes := make([]planner.ClusterNode, n)
	for i := range nodes {
		nodes[i] = planner.ClusterNode{ID: fmt.Sprint(i + 1), Roles: []string{"compute"}}
	}
	s := graphs.NewService(b.Index, b.Blobs, graphstest.EmptyData{Clusters: graphstest.Clusters{"1": nodes}}, opts...)
	raw, err := json.Marshal(tasks)
	if err != nil {
		t.Fatal(err)
	}
	must[graphs.Graph](t)(s.CreateGraph(context.Background(), graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(string(raw)), false))
	return s
}

// planned plans cluster 1's default graph as serialized_tasks does, and as an
// execution does, and checks both fail alike, quickly.
func planned(t *testing.T, s *graphs.Service, kind errs.Kind, msg string) {
	t.Helper()
	one := int64(1)
	for name, plan := range map[string]func() error{
		"serialized_tasks": func() error {
			_, err := s.SerializedTasks(context.Background(), 1, "default", nil, false, false)
			return err
		},
		"execute": func() error {
			_, err := s.Execute(context.Background(), graphs.ExecuteRequest{Cluster: &one, Graphs: []graphs.GraphRun{{Type: "default"}}})
			return err
		},
	} {
		err := plan()
		if !errs.Is(err, kind) || !strings.Contains(errs.Message(err), msg) {
			t.Errorf("%s: %v (kind %d), want kind %d with %q", name, err, errs.KindOf(err), kind, msg)
		}
	}
}

func task(id string, fields map[string]any) map[string]any {
	t := map[string]any{"id": id, "type": "shell", "roles": []string{"compute"}}
	for k, v := range fields {
		t[k] = v
	}
	return t
}

// Issue 35's 411-byte condition: 33 doublings of a string ran the server out of
// memory; each evaluation's byte budget now refuses it (400).
func TestDoublingConditionRefused(t *testing.T) {
	doubling := "['a']" + strings.Repeat(".select($+$)", 33) + ".len() > 0"
	s := clusterOf(t, 4, []any{task("t", map[string]any{"condition": map[string]any{"yaql_exp": doubling}})})
	planned(t, s, errs.Invalid, `task "t" on node 1: condition: yaql: expression exceeded its byte budget`)
}

// The evaluations of one request share its budget: each condition is cheap, all
// of them together are not (413, naming the budget).
func TestPlanStepBudget(t *testing.T) {
	var tasks []any
	for i := range 50 {
		tasks = append(tasks, task(fmt.Sprint("t", i), map[string]any{"condition": map[string]any{"yaql_exp": "[1, 2, 3, 4, 5].where($ > 2).len() > 0"}}))
	}
	s := clusterOf(t, 4, tasks, graphs.WithPlanLimits(graphs.PlanLimits{Budget: yaql.BudgetLimits{Steps: 2000}}))
	planned(t, s, errs.TooLarge, "exceeded their step budget (2000 together)")
	// The same plan within the default budget.
	s = clusterOf(t, 4, tasks)
	must[graphs.ClusterTasks](t)(s.SerializedTasks(context.Background(), 1, "default", nil, false, false))
}

// Planning past the budget's time is a 503 naming the budget, for reads,
// executions and uploads with ?validate alike; never a 400 quoting the
// context's error.
func TestPlanTimeBudget(t *testing.T) {
	tasks := []any{task("t", map[string]any{"condition": map[string]any{"yaql_exp": "true"}})}
	s := clusterOf(t, 2, tasks, graphs.WithPlanLimits(graphs.PlanLimits{Budget: yaql.BudgetLimits{Time: time.Nanosecond}}))
	planned(t, s, errs.Unavailable, "time budget (1ns")
	_, err := s.UpdateGraphOf(context.Background(), graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default", tasksInput(`[{"id":"u","type":"shell","condition":{"yaql_exp":"true"}}]`), true)
	if !errs.Is(err, errs.Unavailable) || !strings.Contains(errs.Message(err), "time budget") {
		t.Errorf("upload with ?validate: %v", err)
	}
}

// Issue 35: a cross-depends expression of 100,000 entries on 3 tasks took 26.6 s
// and 1.24 GB; it is refused at the first node (400).
func TestCrossDependsBombRefused(t *testing.T) {
	bomb := map[string]any{"yaql_exp": "[dict(name=>'/a/', role=>'/.*/')] * 100000"}
	s := clusterOf(t, 4, []any{task("a", map[string]any{"cross-depends": bomb}), task("b", nil), task("c", nil)})
	planned(t, s, errs.Invalid, "100000 cross dependencies, over the limit of 1000")
}

// Issue 35: a 3 KB graph whose tasks each wait for every task on every node
// made 1.24 GB of plan on 1,000 nodes; it is refused before any wait is made (413).
func TestFanOutRefused(t *testing.T) {
	var tasks []any
	for i := range 30 {
		tasks = append(tasks, task(fmt.Sprint("t", i), map[string]any{"cross-depends": []any{map[string]any{"name": "/.*/", "role": "/.*/"}}}))
	}
	s := clusterOf(t, 1000, tasks)
	planned(t, s, errs.TooLarge, "cross-node waits or more, over the limit of 4000000")
}

// Issue 35: 1,000 tasks on "/.*/" on 1,000 nodes took 53 s for a 125 MB answer;
// it is refused once the tasks are placed, before anything is evaluated (413).
func TestEveryTaskOnEveryNodeRefused(t *testing.T) {
	var tasks []any
	for i := range 1000 {
		tasks = append(tasks, map[string]any{"id": fmt.Sprint("t", i), "type": "shell", "roles": "/.*/"})
	}
	s := clusterOf(t, 1000, tasks)
	planned(t, s, errs.TooLarge, "the plan would have 1000000 node tasks, over the limit of 500000")
	s = clusterOf(t, 2001, tasks)
	planned(t, s, errs.TooLarge, "2001000 task x node pairs (1000 tasks, 2001 nodes), over the limit of 2000000")
}

// A plan stops when its client leaves: the request's context ends, and the
// answer is the context's error (499), not a 400.
func TestPlanStopsWhenTheClientLeaves(t *testing.T) {
	tasks := []any{task("t", map[string]any{"condition": map[string]any{"yaql_exp": "true"}})}
	s := clusterOf(t, 2, tasks)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.SerializedTasks(ctx, 1, "default", nil, false, false); !errors.Is(err, context.Canceled) || errs.KindOf(err) != errs.Internal {
		t.Errorf("a cancelled read: %v", err)
	}
}
