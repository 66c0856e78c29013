package planner_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

// A graph planned on two nodes: each task lands on the nodes of its roles,
// in dependency order, and the compute's task waits for the controller's
// (its cross-depends); a condition false on a node keeps the task there as
// skipped.
func ExamplePlan() {
	tasks, err := planner.ParseTasks(json.RawMessage(`[
		{"id":"database","type":"shell","role":["controller"],"parameters":{"cmd":"true"}},
		{"id":"nova","type":"shell","role":["compute"],"requires":["hosts"],
		 "cross-depends":[{"name":"database","role":["controller"]}],"parameters":{"cmd":"true"}},
		{"id":"hosts","type":"shell","role":"*","condition":{"yaql_exp":"$.hosts"},"parameters":{"cmd":"true"}}]`))
	if err != nil {
		panic(err)
	}
	deps, err := planner.NewDeps(tasks, true)
	if err != nil {
		panic(err)
	}
	nodes := []planner.PlanNode{
		{ClusterNode: planner.ClusterNode{ID: "1", Roles: []string{"controller"}}, Data: map[string]any{"hosts": false}},
		{ClusterNode: planner.ClusterNode{ID: "2", Roles: []string{"compute"}}, Data: map[string]any{"hosts": true}},
	}
	ordered := deps.Ordered()
	plan, err := planner.Plan(context.Background(), ordered, nodes, planner.NewRules(), planner.Options{})
	if err != nil {
		panic(err)
	}
	for _, node := range nodes {
		fmt.Printf("node %s:\n", node.ID)
		for _, step := range plan.Steps[node.ID] {
			fmt.Printf("  %s", ordered[step.Task].ID)
			for _, ref := range step.After {
				fmt.Printf(", after step %d of node %s", ref.Step, ref.Node)
			}
			if step.Skip != "" {
				fmt.Printf(" (skipped: %s)", step.Skip)
			}
			fmt.Println()
		}
	}
	// Output:
	// node 1:
	//   database
	//   hosts (skipped: condition)
	// node 2:
	//   hosts
	//   nova, after step 0 of node 1
}
