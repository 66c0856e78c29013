package planner

import (
	"context"
	"encoding/json"
	"slices"
	"testing"
)

// A placement name that matches no node is a warning only when the release's
// metadata does not define it: a cluster without Cinder nodes is normal, a
// misspelt tag is not.
func TestPlacementWarnings(t *testing.T) {
	tasks := mustTasks(t, `[{"id":"a","type":"shell","tags":["cinder"]},{"id":"b","type":"shell","tags":["cindr"]},`+
		`{"id":"c","type":"shell","tags":["primary-controller"]},{"id":"d","type":"shell","role":["/^nothing$/"]}]`)
	rules := NewRules(EntryMetadata{
		RolesMetadata: map[string]json.RawMessage{"controller": json.RawMessage(`{"tags":["controller"]}`), "cinder": json.RawMessage(`{"tags":["cinder"]}`)},
		TagsMetadata:  map[string]json.RawMessage{"controller": json.RawMessage(`{"has_primary":true}`)},
	})
	nodes := []PlanNode{{ClusterNode: ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	p, err := place(context.Background(), tasks, make([]bool, len(tasks)), nodes, rules, false)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`tags "cindr" matches no node (tasks b)`}; !slices.Equal(p.warnings, want) {
		t.Fatalf("warnings = %q, want %q", p.warnings, want)
	}
	if want := []string{"a", "b", "c", "d"}; !slices.Equal(p.unplaced, want) {
		t.Fatalf("unplaced = %q, want %q", p.unplaced, want)
	}
}
