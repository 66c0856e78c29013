package graphs

import (
	"encoding/json"
	"reflect"
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
)

// mustTasks parses a JSON task list for a test.
func mustTasks(t testing.TB, raw string) []planner.Task {
	t.Helper()
	tasks, err := planner.ParseTasks(json.RawMessage(raw))
	if err != nil {
		t.Fatalf("parse tasks: %v", err)
	}
	return tasks
}

func ids(tasks []planner.Task) []string {
	out := make([]string, len(tasks))
	for i, t := range tasks {
		out[i] = t.ID
	}
	return out
}

func graphOf(t *testing.T, kind OwnerKind, id int64, tasks string, md Metadata) *Graph {
	t.Helper()
	return &Graph{Type: DefaultType, Owner: Owner{Kind: kind, ID: id}, Metadata: md, Tasks: mustTasks(t, tasks)}
}

func plugin(t *testing.T, id int64, name, tasks string, md Metadata) pluginGraph {
	return pluginGraph{plugin: Entry{ID: id, Name: name, Version: "1.0.0"}, graph: *graphOf(t, Plugin, id, tasks, md)}
}

func TestMerge(t *testing.T) {
	release := `[{"id":"a","type":"puppet","parameters":{"from":"release"}},{"id":"b","type":"puppet"},{"id":"c","type":"shell","requires":["a"]}]`
	tests := []struct {
		name      string
		src       sources
		wantIDs   []string
		wantTypes map[string]string // task id -> type after merge
		wantParam map[string]string // task id -> parameters after merge
	}{
		{
			name:    "release alone",
			src:     sources{release: graphOf(t, Release, 1, release, Metadata{})},
			wantIDs: []string{"a", "b", "c"},
		},
		{
			name: "cluster replaces the whole task, cluster tasks first",
			src: sources{
				release: graphOf(t, Release, 1, release, Metadata{}),
				cluster: graphOf(t, Cluster, 9, `[{"id":"z","type":"shell"},{"id":"a","type":"shell"}]`, Metadata{}),
			},
			wantIDs:   []string{"z", "a", "b", "c"},
			wantTypes: map[string]string{"a": "shell"},
			wantParam: map[string]string{"a": ""},
		},
		{
			name: "plugins between cluster and release, in plugin order",
			src: sources{
				release: graphOf(t, Release, 1, release, Metadata{}),
				plugins: []pluginGraph{
					plugin(t, 2, "p2", `[{"id":"b","type":"shell","parameters":{"from":"p2"}},{"id":"p2-only","type":"shell"}]`, Metadata{}),
					plugin(t, 3, "p3", `[{"id":"a","type":"shell","parameters":{"from":"p3"}},{"id":"p3-only","type":"shell"}]`, Metadata{}),
				},
				cluster: graphOf(t, Cluster, 9, `[{"id":"a","type":"sync"}]`, Metadata{}),
			},
			wantIDs:   []string{"a", "b", "p2-only", "p3-only", "c"},
			wantTypes: map[string]string{"a": "sync", "b": "shell"},
			wantParam: map[string]string{"a": "", "b": `{"from":"p2"}`},
		},
		{
			name:    "cluster alone",
			src:     sources{cluster: graphOf(t, Cluster, 9, `[{"id":"x","type":"shell"}]`, Metadata{})},
			wantIDs: []string{"x"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := merge(tt.src)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ids(m.Tasks), tt.wantIDs) {
				t.Fatalf("ids = %v, want %v", ids(m.Tasks), tt.wantIDs)
			}
			for _, task := range m.Tasks {
				if typ, ok := tt.wantTypes[task.ID]; ok && task.Type != typ {
					t.Errorf("%s: type %s, want %s", task.ID, task.Type, typ)
				}
				if p, ok := tt.wantParam[task.ID]; ok && string(task.Parameters) != p {
					t.Errorf("%s: parameters %s, want %q", task.ID, task.Parameters, p)
				}
			}
		})
	}
}

func TestMergePluginOverlap(t *testing.T) {
	src := sources{
		plugins: []pluginGraph{
			plugin(t, 2, "ldap", `[{"id":"x","type":"shell"},{"id":"shared","type":"shell"}]`, Metadata{}),
			plugin(t, 5, "contrail", `[{"id":"shared","type":"shell"}]`, Metadata{}),
		},
		// The cluster overriding the task does not lift the conflict between the plugins.
		cluster: graphOf(t, Cluster, 9, `[{"id":"shared","type":"shell"}]`, Metadata{}),
	}
	_, err := merge(src)
	want := "Plugin contrail-1.0.0 is overlapping with plugin ldap-1.0.0 by introducing the same deployment task with id shared"
	if !errs.Is(err, errs.Invalid) || errs.Message(err) != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func TestMergeMetadata(t *testing.T) {
	hook := func(raw string) *Hook {
		var attrs map[string]any
		if err := json.Unmarshal([]byte(raw), &attrs); err != nil {
			t.Fatal(err)
		}
		return &Hook{NodeAttributes: attrs}
	}
	src := sources{
		release: graphOf(t, Release, 1, `[]`, Metadata{NodeFilter: "$.status = ready", OnSuccess: hook(`{"status":"ready","meta":{"a":1,"b":{"x":1}}}`), OnError: hook(`{"status":"error"}`)}),
		plugins: []pluginGraph{plugin(t, 2, "p", `[]`, Metadata{OnSuccess: hook(`{"meta":{"b":{"y":2}}}`)})},
		cluster: graphOf(t, Cluster, 9, `[]`, Metadata{NodeFilter: "$.pending_addition", OnSuccess: hook(`{"meta":{"a":3}}`), OnStop: hook(`{"status":"stopped"}`)}),
	}
	m, err := merge(src)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m.Metadata)
	want := `{"node_filter":"$.pending_addition","on_success":{"node_attributes":{"meta":{"a":3,"b":{"x":1,"y":2}},"status":"ready"}},` +
		`"on_error":{"node_attributes":{"status":"error"}},"on_stop":{"node_attributes":{"status":"stopped"}}}`
	var gotV, wantV any
	_ = json.Unmarshal(got, &gotV)
	_ = json.Unmarshal([]byte(want), &wantV)
	if !reflect.DeepEqual(gotV, wantV) {
		t.Fatalf("metadata = %s\nwant       %s", got, want)
	}
	if m.OnSuccess.NodeAttributes["meta"].(map[string]any)["b"].(map[string]any)["y"] == nil ||
		src.release.OnSuccess.NodeAttributes["meta"].(map[string]any)["b"].(map[string]any)["y"] != nil {
		t.Fatal("deep merge must not modify the release's metadata")
	}
}
