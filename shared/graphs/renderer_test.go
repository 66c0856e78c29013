package graphs

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// A yaql_exp in parameters that fails on a node's data is the request's
// error (400), naming the node, the task and the expression, not a 500.
func TestParameterExpressionFailsOnData(t *testing.T) {
	tasks, err := planner.ParseTasks(json.RawMessage(`[{"id":"t","type":"shell","parameters":{"n":{"yaql_exp":"$.uid + 1"}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	plan := &frozenPlan{Tasks: tasks}
	r := newNodeRenderer(plan, func(context.Context, string, bool) (yaql.Env, error) {
		return yaql.Env{New: map[string]any{"uid": "five"}}, nil
	})
	_, err = r.body(context.Background(), "7", 0)
	if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.Message(err), `node 7: task t: yaql_exp "$.uid + 1"`) {
		t.Fatalf("err = %v (%q)", err, errs.Message(err))
	}
}
