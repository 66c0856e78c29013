package planner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Placeholders format as Python's str.format, and a string Python could not
// format stays as it is (Nailgun's text_format_safe).
func TestFormatPlaceholders(t *testing.T) {
	vars := map[string]string{"CLUSTER_ID": "7", "MASTER_IP": "10.20.0.2"}
	for in, want := range map[string]string{
		"rsync://{MASTER_IP}:/puppet/":                             "rsync://10.20.0.2:/puppet/",
		"/etc/fuel/cluster/{CLUSTER_ID}/node.yaml":                 "/etc/fuel/cluster/7/node.yaml",
		"{CLUSTER_ID!s}-{{literal}}":                               "7-{literal}",
		"no braces":                                                "no braces",
		"{OPENSTACK_VERSION} is missing: {CLUSTER_ID}":             "{OPENSTACK_VERSION} is missing: {CLUSTER_ID}",
		`awk '{print $1}' /etc/{CLUSTER_ID}`:                       `awk '{print $1}' /etc/{CLUSTER_ID}`,
		"positional {}":                                            "positional {}",
		"lone } brace {CLUSTER_ID}":                                "lone } brace {CLUSTER_ID}",
		"unclosed {CLUSTER_ID":                                     "unclosed {CLUSTER_ID",
		`{"old_access" => old($).get("access", {})}.toYaml()`:      `{"old_access" => old($).get("access", {})}.toYaml()`,
		"{{CLUSTER_ID}} is escaped, {CLUSTER_ID} is not":           "{CLUSTER_ID} is escaped, 7 is not",
		"attribute {CLUSTER_ID.real} is not formatted {MASTER_IP}": "attribute {CLUSTER_ID.real} is not formatted {MASTER_IP}",
	} {
		if got := formatPlaceholders(in, vars); got != want {
			t.Errorf("formatPlaceholders(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlaceholderValues(t *testing.T) {
	data := map[string]any{
		"cluster": map[string]any{"id": float64(12)}, "openstack_version": "newton-10.0",
		"public_ssl": map[string]any{"hostname": "public.fuel.local"}, "master_ip": "10.109.15.2",
	}
	got := PlaceholderValues(data, "")
	want := map[string]string{"CLUSTER_ID": "12", "OPENSTACK_VERSION": "newton-10.0", "CN_HOSTNAME": "public.fuel.local", "MASTER_IP": "10.109.15.2"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if got := PlaceholderValues(data, "192.0.2.1")[PlaceholderMasterIP]; got != "192.0.2.1" {
		t.Errorf("the cluster's master_ip setting wins over the data's: %q", got)
	}
	if got := PlaceholderValues(map[string]any{}, ""); len(got) != 0 {
		t.Errorf("no data, no values: %v", got)
	}
}

// A task's body: every {yaql_exp} of its parameters and free-form fields
// evaluated with the node's data, strings formatted except under regex,
// cwd and fail_on_error defaulted unless given.
func TestTaskBody(t *testing.T) {
	var task Task
	if err := json.Unmarshal([]byte(`{"id":"upload","type":"upload_file","role":["/.*/"],"retries_hint":"{CLUSTER_ID}",
		"parameters":{"path":"/etc/fuel/cluster/{CLUSTER_ID}/node.yaml","timeout":180,
			"data":{"yaql_exp":"$node.toYaml()"},
			"files":[{"src":"/keys/{CLUSTER_ID}/a","dst":"/a"}],
			"nested":{"regex":"^{CLUSTER_ID}$","who":{"yaql_exp":"$.uid"},"was":{"yaql_exp":"old($.uid)"},"all":{"yaql_exp":"$common.name"}}}}`), &task); err != nil {
		t.Fatal(err)
	}
	raw, err := task.Body(context.Background(), map[string]string{"CLUSTER_ID": "3"}, yaql.Env{
		New: map[string]any{"uid": "5"}, Old: map[string]any{"uid": "4"},
		Vars: map[string]any{"node": map[string]any{"uid": "5", "size": float64(3757668)}, "common": map[string]any{"name": "env"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		FailOnError bool   `json:"fail_on_error"`
		Hint        string `json:"retries_hint"`
		Parameters  struct {
			Path    string `json:"path"`
			Cwd     string `json:"cwd"`
			Timeout int    `json:"timeout"`
			Data    string `json:"data"`
			Files   []struct{ Src string }
			Nested  map[string]string `json:"nested"`
		} `json:"parameters"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	p := got.Parameters
	switch {
	case !got.FailOnError, p.Cwd != "/", p.Timeout != 180:
		t.Errorf("defaults and numbers: %s", raw)
	case p.Path != "/etc/fuel/cluster/3/node.yaml", p.Files[0].Src != "/keys/3/a", got.Hint != "3":
		t.Errorf("placeholders: %s", raw)
	case p.Data != "size: 3757668\nuid: \"5\"\n":
		t.Errorf("$node.toYaml() = %q", p.Data)
	case p.Nested["regex"] != "^{CLUSTER_ID}$", p.Nested["who"] != "5", p.Nested["was"] != "4", p.Nested["all"] != "env":
		t.Errorf("nested: %v", p.Nested)
	}

	// What the task says wins over the defaults.
	if err := json.Unmarshal([]byte(`{"id":"x","type":"shell","fail_on_error":false,"parameters":{"cmd":"true","cwd":"/tmp"}}`), &task); err != nil {
		t.Fatal(err)
	}
	if raw, err = task.Body(context.Background(), nil, yaql.Env{}); err != nil || !strings.Contains(string(raw), `"fail_on_error":false`) || !strings.Contains(string(raw), `"cwd":"/tmp"`) {
		t.Errorf("given values: %s, %v", raw, err)
	}
}

// A yaql_exp in parameters that does not compile is refused when the task is read.
func TestParameterExpressionsCompileOnUpload(t *testing.T) {
	for _, params := range []string{`{"data":{"yaql_exp":"$.("}}`, `{"data":{"yaql_exp":"$.a","other":1}}`, `{"l":[{"yaql_exp":7}]}`} {
		_, err := ParseTasks(json.RawMessage(`[{"id":"t","type":"shell","parameters":` + params + `}]`))
		if err == nil || !strings.Contains(err.Error(), "parameters.") {
			t.Errorf("%s: %v", params, err)
		}
	}
}

// The Fuel master (a node with the role master) takes only the tasks that
// name it; "*", patterns and unplaced tasks leave it out, as Nailgun's
// master was no cluster node. Without one, the plan says what will not run.
func TestMasterPlacement(t *testing.T) {
	tasks, err := ParseTasks(json.RawMessage(`[
		{"id":"generate_keys","type":"shell","role":"master","parameters":{"cmd":"true"}},
		{"id":"copy_keys","type":"copy_files","role":["/.*/"],"requires":["generate_keys"],
		 "cross-depends":[{"name":"generate_keys","role":"master"}],"parameters":{"files":[{"src":"/a","dst":"/b"}]}},
		{"id":"everywhere","type":"shell","role":"*","parameters":{"cmd":"true"}},
		{"id":"unplaced","type":"shell","parameters":{"cmd":"true"}}]`))
	if err != nil {
		t.Fatal(err)
	}
	nodes := []PlanNode{{ClusterNode: ClusterNode{ID: "m", Roles: []string{MasterRole}}}, {ClusterNode: ClusterNode{ID: "1", Roles: []string{"compute"}}}}
	p, err := place(context.Background(), tasks, make([]bool, len(tasks)), nodes, NewRules(), false)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]bool{{true, false, false, false}, {false, true, true, true}}
	for n := range nodes {
		for i := range tasks {
			if p.applies[n][i] != want[n][i] {
				t.Errorf("node %s, task %s: placed %v", nodes[n].ID, tasks[i].ID, p.applies[n][i])
			}
		}
	}
	if w := masterWarnings(tasks, p); w != nil {
		t.Errorf("with a master: %v", w)
	}
	p, err = place(context.Background(), tasks, make([]bool, len(tasks)), nodes[1:], NewRules(), false)
	if err != nil {
		t.Fatal(err)
	}
	w := masterWarnings(tasks, p)
	if len(w) != 1 || !strings.Contains(w[0], "generate_keys will not run") || !strings.Contains(w[0], "copy_keys, which wait for them") {
		t.Errorf("without a master: %v", w)
	}
}
