package planner

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
)

func TestParseTasksRejects(t *testing.T) {
	tests := []struct {
		name  string
		tasks string
		want  string
	}{
		{"not a list", `{"id":"a"}`, "tasks: must be a list"},
		{"task not an object", `["a"]`, "tasks[0]: must be an object"},
		{"missing id", `[{"type":"puppet"}]`, "tasks[0].id: is required"},
		{"empty id", `[{"id":"","type":"puppet"}]`, "tasks[0].id: must not be empty"},
		{"id not a string", `[{"id":1,"type":"puppet"}]`, "tasks[0].id: must be a string"},
		{"id with comma", `[{"id":"a,b","type":"puppet"}]`, "tasks[0].id: must not contain a comma"},
		{"missing type", `[{"id":"a"}]`, `tasks[0].type (task "a"): is required`},
		{"null type", `[{"id":"a","type":null}]`, "tasks[0].type (task \"a\"): must be a string"},
		{"unknown type", `[{"id":"a","type":"ansible"}]`, `tasks[0].type (task "a"): "ansible" is not one of puppet`},
		{"bad version", `[{"id":"ok","type":"puppet"},{"id":"a","type":"puppet","version":"1.0"}]`,
			`tasks[1].version (task "a"): "1.0" does not match ^\d+\.\d+\.\d+$`},
		{"requires not a list", `[{"id":"a","type":"puppet","requires":"b"}]`, `tasks[0].requires (task "a"): must be a list of strings`},
		{"requires item", `[{"id":"a","type":"puppet","requires":["b",3]}]`, `tasks[0].requires[1] (task "a"): must be a string`},
		{"groups object", `[{"id":"a","type":"puppet","groups":{}}]`, `tasks[0].groups (task "a"): must be a string or a list of strings`},
		{"groups bad regex", `[{"id":"a","type":"puppet","groups":["/(/"]}]`, `tasks[0].groups[0] (task "a"): invalid regular expression /(/`},
		{"parameters not object", `[{"id":"a","type":"puppet","parameters":[]}]`, `tasks[0].parameters (task "a"): must be an object`},
		{"strategy type", `[{"id":"a","type":"puppet","parameters":{"strategy":{"type":"all"}}}]`,
			`tasks[0].parameters.strategy.type (task "a"): "all" is not one of parallel, one_by_one`},
		{"strategy amount", `[{"id":"a","type":"puppet","parameters":{"strategy":{"type":"parallel","amount":0}}}]`,
			`tasks[0].parameters.strategy.amount (task "a"): must be a positive integer`},
		{"strategy without type", `[{"id":"a","type":"puppet","parameters":{"strategy":{"amount":2}}}]`,
			`tasks[0].parameters.strategy.type (task "a"): is required`},
		{"cross-depends policy", `[{"id":"a","type":"puppet","cross-depends":[{"name":"b","policy":"some"}]}]`,
			`tasks[0].cross-depends[0].policy (task "a"): "some" is not one of all, any`},
		{"cross-depends name", `[{"id":"a","type":"puppet","cross-depended-by":[{"role":"x"}]}]`,
			`tasks[0].cross-depended-by[0].name (task "a"): is required`},
		{"cross-depends unknown field", `[{"id":"a","type":"puppet","cross-depends":[{"name":"b","when":1}]}]`,
			`tasks[0].cross-depends[0].when (task "a"): unknown field`},
		{"stage not a string", `[{"id":"a","type":"puppet","stage":1}]`, `tasks[0].stage (task "a"): must be a string`},
		// Issue 35: 1e12 seconds overflowed every run's deadline ("timed out after -2562047h").
		{"timeout overflowing", `[{"id":"a","type":"shell","parameters":{"timeout":1e12}}]`,
			`tasks[0].parameters.timeout (task "a"): must be a number of seconds above 0, at most 604800`},
		{"timeout zero", `[{"id":"a","type":"shell","parameters":{"timeout":0}}]`, `tasks[0].parameters.timeout (task "a"): must be a number of seconds above 0`},
		{"timeout a string", `[{"id":"a","type":"shell","parameters":{"timeout":"600"}}]`, `tasks[0].parameters.timeout (task "a"): must be a number`},
		{"retries a century", `[{"id":"a","type":"shell","parameters":{"retries":1000000,"timeout":3600}}]`,
			`tasks[0].parameters.retries (task "a"): must be a whole number at least 0, at most 100`},
		{"retries fractional", `[{"id":"a","type":"shell","parameters":{"retries":1.5}}]`, `tasks[0].parameters.retries (task "a"): must be a whole number`},
		{"interval negative", `[{"id":"a","type":"shell","parameters":{"interval":-1}}]`,
			`tasks[0].parameters.interval (task "a"): must be a number of seconds at least 0, at most 86400`},
		{"duplicates sorted", `[{"id":"z","type":"puppet"},{"id":"b","type":"shell"},{"id":"z","type":"shell"},{"id":"b","type":"sync"},{"id":"z","type":"sync"}]`,
			"Tasks duplication found: b, z"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTasks(json.RawMessage(tt.tasks))
			if !errs.Is(err, errs.Invalid) {
				t.Fatalf("err = %v, want an Invalid error", err)
			}
			if !strings.HasPrefix(errs.Message(err), tt.want) {
				t.Fatalf("message = %q, want prefix %q", errs.Message(err), tt.want)
			}
		})
	}
}

func TestParseTasksNormalises(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"default version", `{"id":"a","type":"puppet"}`, `{"id":"a","type":"puppet","version":"1.0.0"}`},
		{"string groups and role become lists", `{"id":"a","type":"group","role":"controller","groups":"primary"}`,
			`{"groups":["primary"],"id":"a","role":["controller"],"type":"group","version":"1.0.0"}`},
		{"unknown fields kept", `{"id":"a","type":"shell","condition":{"yaql_exp":"changed($)"},"x-owner":"ops"}`,
			`{"condition":{"yaql_exp":"changed($)"},"id":"a","type":"shell","version":"1.0.0","x-owner":"ops"}`},
		{"null optional fields are absent", `{"id":"a","type":"puppet","requires":null,"parameters":null}`,
			`{"id":"a","type":"puppet","version":"1.0.0"}`},
		{"known fields echoed", `{"id":"a","type":"puppet","version":"2.1.0","requires":["b"],"required_for":["c"],"tasks":["d"],"stage":"s",` +
			`"cross-depends":[{"name":"e","role":"self","policy":"any"}],"parameters":{"puppet_manifest":"x.pp","strategy":{"type":"one_by_one","amount":1}},` +
			`"reexecute_on":["deploy_changes"],"refresh_on":["nova_config"]}`,
			`{"cross-depends":[{"name":"e","role":["self"],"policy":"any"}],"id":"a","parameters":{"puppet_manifest":"x.pp","strategy":{"type":"one_by_one","amount":1}},` +
				`"reexecute_on":["deploy_changes"],"refresh_on":["nova_config"],"required_for":["c"],"requires":["b"],"stage":"s","tasks":["d"],"type":"puppet","version":"2.1.0"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tasks, err := ParseTasks(json.RawMessage("[" + tt.in + "]"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(tasks[0])
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			var again Task
			if err := json.Unmarshal(got, &again); err != nil {
				t.Fatalf("normalised task does not parse again: %v", err)
			}
		})
	}
}

// The largest run parameters accepted make a deadline a Duration holds, and
// Seconds saturates rather than overflow (issue 35).
func TestRunLimitBounded(t *testing.T) {
	tasks, err := ParseTasks(json.RawMessage(`[{"id":"a","type":"shell","parameters":{"timeout":604800,"retries":100,"interval":86400}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := tasks[0].RunLimit(), 101*MaxTaskTimeout+100*MaxTaskInterval; got != want {
		t.Errorf("runLimit = %v, want %v", got, want)
	}
	for s, want := range map[float64]time.Duration{1e12: math.MaxInt64, math.Inf(1): math.MaxInt64, -5: 0, math.NaN(): 0, 1.5: 1500 * time.Millisecond} {
		if got := wire.Seconds(s); got != want {
			t.Errorf("Seconds(%v) = %v, want %v", s, got, want)
		}
	}
}
