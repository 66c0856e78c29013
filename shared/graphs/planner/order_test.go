package planner

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// mustTasks parses a JSON task list for a test.
func mustTasks(t testing.TB, raw string) []Task {
	t.Helper()
	tasks, err := ParseTasks(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("parse tasks: %v", err)
	}
	return tasks
}

func ids(tasks []Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func TestOrder(t *testing.T) {
	tests := []struct {
		name  string
		tasks string
		want  []string
	}{
		{"independent tasks by id", `[{"id":"c","type":"shell"},{"id":"a","type":"shell"},{"id":"b","type":"shell"}]`,
			[]string{"a", "b", "c"}},
		{"requires", `[{"id":"a","type":"shell","requires":["b"]},{"id":"b","type":"shell"}]`,
			[]string{"b", "a"}},
		{"required_for", `[{"id":"a","type":"shell"},{"id":"b","type":"shell","required_for":["a"]}]`,
			[]string{"b", "a"}},
		{"tasks field", `[{"id":"a","type":"group","tasks":["z"]},{"id":"z","type":"shell"}]`,
			[]string{"z", "a"}},
		{"stage", `[{"id":"post","type":"stage"},{"id":"a","type":"shell","stage":"post"}]`,
			[]string{"a", "post"}},
		{"tie-break among ready tasks by id", `[{"id":"root","type":"shell"},` +
			`{"id":"y","type":"shell","requires":["root"]},{"id":"b","type":"shell","requires":["root"]},{"id":"a0","type":"shell"}]`,
			[]string{"a0", "root", "b", "y"}},
		{"groups literal and regex", `[{"id":"primary-controller","type":"group"},{"id":"controller","type":"group"},` +
			`{"id":"compute","type":"group"},{"id":"all","type":"shell","groups":["/.*controller/"]},{"id":"c","type":"shell","groups":"compute"}]`,
			[]string{"all", "c", "compute", "controller", "primary-controller"}},
		{"regex matches whole id only", `[{"id":"controller-extra","type":"group"},{"id":"z","type":"shell","groups":["/controller/"]}]`,
			[]string{"controller-extra", "z"}},
		{"regex edge orders the task first", `[{"id":"controller-extra","type":"group"},{"id":"z","type":"shell","groups":["/controller.*/"]}]`,
			[]string{"z", "controller-extra"}},
		{"regex matching no group adds no edge", `[{"id":"b","type":"shell","requires":["a"]},{"id":"a","type":"shell","groups":["/nothing/"]}]`,
			[]string{"a", "b"}},
		{"regex ignores non-group tasks", `[{"id":"x-node","type":"shell","requires":["a"]},{"id":"a","type":"shell","groups":["/x-.*/"]}]`,
			[]string{"a", "x-node"}},
		{"repeated edges", `[{"id":"b","type":"shell","requires":["a","a"]},{"id":"a","type":"shell","required_for":["b"]}]`,
			[]string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Order(mustTasks(t, tt.tasks))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(got), tt.want) {
				t.Fatalf("order = %v, want %v", ids(got), tt.want)
			}
		})
	}
}

func TestOrderErrors(t *testing.T) {
	tests := []struct {
		name  string
		tasks string
		want  string
	}{
		{"self loop", `[{"id":"a","type":"shell","requires":["a"]}]`, `Tasks form a cycle: "a" -> "a"`},
		{"cycle named from its smallest id", `[{"id":"c","type":"shell","requires":["b"]},{"id":"b","type":"shell","requires":["a"]},` +
			`{"id":"a","type":"shell","requires":["c"]},{"id":"0","type":"shell","required_for":["b"]},{"id":"d","type":"shell","requires":["c"]}]`,
			`Tasks form a cycle: "a" -> "b" -> "c" -> "a"`},
		{"cycle through a group regex", `[{"id":"g1","type":"group","required_for":["t"]},{"id":"t","type":"shell","groups":["/g.*/"]}]`,
			`Tasks form a cycle: "g1" -> "t" -> "g1"`},
		{"missing dependencies named with both tasks", `[{"id":"a","type":"shell","requires":["x"],"required_for":["y"]},` +
			`{"id":"b","type":"shell","groups":["grp"],"stage":"st","tasks":["z"]}]`,
			`Tasks depend on tasks that are not in the graph: "a" is required for "y"; "a" requires "x"; ` +
				`"b" depends on (tasks) "z"; "b" is in stage "st"`},
		{"duplicates", `[{"id":"a","type":"shell"},{"id":"a","type":"shell"}]`, "Tasks duplication found: a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tasks []Task
			if err := json.Unmarshal([]byte(tt.tasks), &tasks); err != nil {
				t.Fatal(err)
			}
			_, err := Order(tasks)
			if !errs.Is(err, errs.Invalid) || errs.Message(err) != tt.want {
				t.Fatalf("err = %v\nwant %s", err, tt.want)
			}
		})
	}
}

// As in Nailgun, a dependency on a task that is not in the graph depends on
// nothing: the graph orders, and the warning names both tasks (groups is a
// placement field: a name that is no group task is not a dependency at all).
func TestMissingDependenciesAreWarnings(t *testing.T) {
	g, err := NewDeps(mustTasks(t, `[{"id":"a","type":"shell","requires":["x"],"required_for":["y"]},`+
		`{"id":"b","type":"shell","groups":["grp"],"stage":"st","tasks":["z","a"]}]`), false)
	if err != nil {
		t.Fatal(err)
	}
	want := `Tasks depend on tasks that are not in the graph: "a" is required for "y"; "a" requires "x"; ` +
		`"b" depends on (tasks) "z"; "b" is in stage "st"`
	if !slices.Equal(g.warnings, []string{want}) {
		t.Fatalf("warnings = %q\nwant %q", g.warnings, want)
	}
	if !slices.Equal(ids(g.Ordered()), []string{"a", "b"}) {
		t.Fatalf("order = %v: the edges that exist still hold", ids(g.Ordered()))
	}
}

func TestOrderIsStableUnderInputPermutation(t *testing.T) {
	tasks := mustTasks(t, `[{"id":"d","type":"shell","requires":["a"]},{"id":"c","type":"shell","requires":["a"]},`+
		`{"id":"a","type":"shell"},{"id":"b","type":"shell"},{"id":"e","type":"shell","requires":["c","d"]}]`)
	want, err := Order(tasks)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		shuffled := slices.Clone(tasks)
		// a deterministic rotation and reversal of the input
		shuffled = append(shuffled[i%len(shuffled):], shuffled[:i%len(shuffled)]...)
		if i%2 == 1 {
			slices.Reverse(shuffled)
		}
		got, err := Order(shuffled)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(ids(got), ids(want)) {
			t.Fatalf("order of %v = %v, want %v", ids(shuffled), ids(got), ids(want))
		}
	}
	if strings.Join(ids(want), ",") != "a,b,c,d,e" {
		t.Fatalf("order = %v", ids(want))
	}
}
