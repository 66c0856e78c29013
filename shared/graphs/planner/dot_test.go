package planner

import (
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

const dotTasks = `[
 {"id":"deploy_start","type":"stage"},
 {"id":"controller","type":"group","requires":["deploy_start"]},
 {"id":"hiera","type":"puppet","groups":["/controller/"],"requires":["deploy_start"]},
 {"id":"netconfig","type":"puppet","groups":["controller"],"requires":["hiera"]},
 {"id":"ntp","type":"shell","requires":["deploy_start"],"required_for":["netconfig"]},
 {"id":"old","type":"skipped","requires":["deploy_start"]}
]`

func TestRenderDOT(t *testing.T) {
	const header = "digraph \"default\" {\n  node [shape=box, style=\"rounded,filled\", fillcolor=white];\n"
	tests := []struct {
		name string
		opts DOTOptions
		want string
	}{
		{"whole graph", DOTOptions{}, header +
			`  "deploy_start" [shape=diamond, fillcolor=lightblue];
  "hiera";
  "ntp";
  "netconfig";
  "controller" [shape=ellipse, fillcolor=yellowgreen];
  "old" [fillcolor=gray95, fontcolor=gray50];
  "deploy_start" -> "controller";
  "deploy_start" -> "hiera";
  "deploy_start" -> "ntp";
  "deploy_start" -> "old";
  "hiera" -> "controller";
  "hiera" -> "netconfig";
  "ntp" -> "netconfig";
  "netconfig" -> "controller";
}
`},
		{"tasks filter shows the rest as skipped", DOTOptions{Tasks: []string{"ntp"}, Remove: []string{"stage", "group"}}, header +
			`  "hiera" [fillcolor=gray95, fontcolor=gray50];
  "ntp";
  "netconfig" [fillcolor=gray95, fontcolor=gray50];
  "old" [fillcolor=gray95, fontcolor=gray50];
  "hiera" -> "netconfig";
  "ntp" -> "netconfig";
}
`},
		{"parents_for", DOTOptions{ParentsFor: "netconfig"}, header +
			`  "deploy_start" [shape=diamond, fillcolor=lightblue];
  "hiera";
  "ntp";
  "netconfig";
  "deploy_start" -> "hiera";
  "deploy_start" -> "ntp";
  "hiera" -> "netconfig";
  "ntp" -> "netconfig";
}
`},
		{"remove skipped after the tasks filter", DOTOptions{Tasks: []string{"hiera"}, Remove: []string{"skipped"}, ParentsFor: "controller"}, header +
			`  "deploy_start" [shape=diamond, fillcolor=lightblue];
  "hiera";
  "controller" [shape=ellipse, fillcolor=yellowgreen];
  "deploy_start" -> "controller";
  "deploy_start" -> "hiera";
  "hiera" -> "controller";
}
`},
	}
	g, err := NewDeps(mustTasks(t, dotTasks), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DOT("default", g, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Fatalf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRenderDOTRejects(t *testing.T) {
	tests := []struct {
		name string
		opts DOTOptions
		want string
	}{
		{"unknown tasks", DOTOptions{Tasks: []string{"zz", "ntp", "aa", "zz"}}, "Tasks aa, zz are not present in deployment graph"},
		{"unknown parents_for", DOTOptions{ParentsFor: "nope"}, "Task nope is not present in graph"},
		{"remove of a runnable type", DOTOptions{Remove: []string{"group", "puppet"}}, "Task types puppet do not exist"},
	}
	g, err := NewDeps(mustTasks(t, dotTasks), true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DOT("default", g, tt.opts)
			if !errs.Is(err, errs.Invalid) || !strings.HasPrefix(errs.Message(err), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDOTQuote(t *testing.T) {
	if got := dotQuote(`a "b" \c`); got != `"a \"b\" \\c"` {
		t.Fatalf("dotQuote = %s", got)
	}
}
