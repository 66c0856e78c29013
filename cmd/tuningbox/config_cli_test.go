package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"

	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// The CLI tests run as the server's bootstrap administrator.
const (
	testAdmin         = "admin"
	testAdminPassword = "admin-secret"
)

// cliServer serves the whole API over a fresh embedded store; the CLI's
// credentials come from the environment, as a user's would.
func cliServer(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"TUNINGBOX_URL", "TUNINGBOX_TOKEN", "TUNINGBOX_CACERT", "TUNINGBOX_API_VERSION"} {
		t.Setenv(name, "")
	}
	t.Setenv("TUNINGBOX_USER", testAdmin)
	t.Setenv("TUNINGBOX_PASSWORD", testAdminPassword)
	return apptest.LambdaServer(t, testAdmin, testAdminPassword)
}

// cli runs one tuningbox command in-process with stdin and returns its output.
func cli(t *testing.T, url, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"--url", url}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

// mustCLI runs a command that must succeed.
func mustCLI(t *testing.T, url, stdin string, args ...string) string {
	t.Helper()
	out, err := cli(t, url, stdin, args...)
	if err != nil {
		t.Fatalf("tuningbox %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// registerNode adds a node to the registry with a chosen legacy id.
func registerNode(t *testing.T, url string, id int, fqdn string, env int) {
	t.Helper()
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	in := client.NewNode{ID: client.ID(strconv.Itoa(id)), FQDN: fqdn, EnvironmentID: client.ID(strconv.Itoa(env)), Roles: []string{"controller"}}
	if _, err := c.CreateNode(context.Background(), in); err != nil {
		t.Fatalf("register node %s: %v", fqdn, err)
	}
}

// fuelDataSources are the data sources of spec 000 (plus the per-class ones of the Fuel hierarchy).
var fuelDataSources = []string{
	"astute", "globals", "nodes", "deleted_nodes", "override/plugins", "override/common", "override/node",
	"override/configuration/node", "override/configuration/role", "override/configuration/cluster",
}

// seedFuel creates component "fuel" with the Fuel data sources, environment 1
// with the single level "nodes", and nodes 7 and 8.
func seedFuel(t *testing.T, url string) {
	t.Helper()
	args := []string{"comp", "create", "--name", "fuel"}
	for _, d := range fuelDataSources {
		args = append(args, "--definition", d)
	}
	mustCLI(t, url, "", args...)
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	registerNode(t, url, 7, "node-1.domain.tld", 1)
	registerNode(t, url, 8, "node-2.domain.tld", 1)
}

// jsonOut decodes a command's JSON output.
func jsonOut(t *testing.T, out string) any {
	t.Helper()
	v, err := decodeJSON([]byte(out))
	if err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, out)
	}
	return v
}

func assertJSON(t *testing.T, got string, want string) {
	t.Helper()
	g, err := canonicalJSON(jsonOut(t, got))
	if err != nil {
		t.Fatal(err)
	}
	w, err := canonicalJSON(jsonOut(t, want))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(g, w) {
		t.Errorf("got  %s\nwant %s", g, w)
	}
}

const astuteGlobal = `deployment_id: 1
deployment_mode: ha_compact
management_vip: 10.20.0.2
`

const astuteNode1 = `uid: "7"
fqdn: node-1.domain.tld
deployment_id: 5
role: primary-controller
network_scheme:
  endpoints:
    br-mgmt: {IP: [10.20.0.3/24]}
  roles: {management: br-mgmt}
nova: {compute_scheduler_driver: nova.scheduler.filter_scheduler.FilterScheduler, state_path: /var/lib/nova}
`

// Spec 000 use case 1: all deployment data of a node, by FQDN.
func TestConfigUseCase1GetWholeResource(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	mustCLI(t, url, astuteGlobal, "config", "set", "--env", "1", "--resource", "astute", "--format", "yaml")
	mustCLI(t, url, astuteNode1, "config", "set", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--format", "yaml")

	out := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute")
	assertJSON(t, out, `{
		"uid": "7", "fqdn": "node-1.domain.tld", "deployment_id": 5, "role": "primary-controller",
		"deployment_mode": "ha_compact", "management_vip": "10.20.0.2",
		"network_scheme": {"endpoints": {"br-mgmt": {"IP": ["10.20.0.3/24"]}}, "roles": {"management": "br-mgmt"}},
		"nova": {"compute_scheduler_driver": "nova.scheduler.filter_scheduler.FilterScheduler", "state_path": "/var/lib/nova"}}`)

	// The id and the FQDN name the same level value.
	byID := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=7", "--resource", "astute")
	if byID != out {
		t.Errorf("nodes=7 and nodes=node-1.domain.tld differ:\n%s\n%s", byID, out)
	}

	// YAML output has the shape of /etc/hiera/astute.yaml and reads back to the same data.
	yamlOut := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--format", "yaml")
	if !strings.Contains(yamlOut, "deployment_id: 5\n") || !strings.Contains(yamlOut, "uid: \"7\"\n") {
		t.Errorf("yaml output:\n%s", yamlOut)
	}
	back, err := puppetyaml.Decode([]byte(yamlOut))
	if err != nil {
		t.Fatal(err)
	}
	if !sameJSON(back, jsonOut(t, out)) {
		t.Errorf("yaml output does not read back to the json output:\n%s", yamlOut)
	}

	// The other node sees only the environment-wide values.
	assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=node-2.domain.tld", "--resource", "astute"),
		`{"deployment_id": 1, "deployment_mode": "ha_compact", "management_vip": "10.20.0.2"}`)
}

// Spec 000 use case 2: one key of a resource, in every output format.
func TestConfigUseCase2GetKey(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	mustCLI(t, url, astuteNode1, "config", "set", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--format", "yaml")
	get := []string{"config", "get", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--key", "deployment_id"}

	assertJSON(t, mustCLI(t, url, "", get...), `{"deployment_id": 5}`)
	if out := mustCLI(t, url, "", append(get, "--format", "plain")...); out != "5\n" {
		t.Errorf("plain = %q, want 5", out)
	}
	if out := mustCLI(t, url, "", append(get, "--format", "yaml")...); out != "deployment_id: 5\n" {
		t.Errorf("yaml = %q", out)
	}
	nested := []string{"config", "get", "--env", "1", "--level", "nodes=7", "--resource", "astute", "--key", "network_scheme.endpoints.br-mgmt.IP.0", "--format", "plain"}
	if out := mustCLI(t, url, "", nested...); out != "10.20.0.3/24\n" {
		t.Errorf("nested key = %q", out)
	}
}

// Spec 000 use case 3: override one key at a node, look it up again.
func TestConfigUseCase3OverrideKey(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	node := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	mustCLI(t, url, astuteNode1, append([]string{"config", "set", "--format", "yaml"}, node...)...)
	get := append(append([]string{"config", "get"}, node...), "--key", "deployment_id")
	assertJSON(t, mustCLI(t, url, "", get...), `{"deployment_id": 5}`)

	mustCLI(t, url, "", append(append([]string{"config", "override"}, node...), "--key", "deployment_id", "--value", "2")...)
	assertJSON(t, mustCLI(t, url, "", get...), `{"deployment_id": 2}`)

	// The uploaded values are untouched; --show-lookup names where the value comes from.
	values := mustCLI(t, url, "", "config", "history", "--env", "1", "--level", "nodes=7", "--resource", "astute", "--format", "json")
	if n := len(jsonOut(t, values).([]any)); n != 1 {
		t.Errorf("values versions = %d, want 1 (override must not write values)", n)
	}
	assertJSON(t, mustCLI(t, url, "", append(get, "--show-lookup")...), `{"deployment_id": [2, "/nodes/7/"]}`)

	// A second override key goes through keys/set on the existing overrides document.
	mustCLI(t, url, "", append(append([]string{"config", "override"}, node...), "--key", "role", "--value", "compute", "--type", "str")...)
	out := mustCLI(t, url, "", append(append([]string{"config", "get"}, node...), "--format", "json")...)
	doc := jsonOut(t, out).(map[string]any)
	if doc["role"] != "compute" || doc["deployment_id"] != json.Number("2") || doc["fqdn"] != "node-1.domain.tld" {
		t.Errorf("effective after two overrides: %s", out)
	}

	// Deleting the override brings the uploaded value back.
	mustCLI(t, url, "", append(append([]string{"config", "delete", "--override"}, node...), "--key", "deployment_id")...)
	assertJSON(t, mustCLI(t, url, "", get...), `{"deployment_id": 5}`)
}

func TestConfigSetKeyTypes(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	doc := []string{"--env", "1", "--resource", "globals"}
	set := func(stdin string, args ...string) {
		mustCLI(t, url, stdin, append(append([]string{"config", "set"}, doc...), args...)...)
	}
	set("", "--key", "count", "--value", "3", "--type", "int")
	set("", "--key", "name", "--value", "3", "--type", "str")
	set("", "--key", "debug", "--value", "true", "--type", "bool")
	set("", "--key", "nothing", "--type", "null")
	set(`{"a": [1, {"b": null}]}`, "--key", "json_from_stdin", "--type", "json")
	set("x: 1\ny: [a, b]\n", "--key", "yaml_from_stdin", "--type", "yaml")
	set("", "--key", "json_value", "--value", `[1, "2"]`, "--type", "json")
	set("", "--key", "yaml_from_stdin.x", "--value", "10")
	assertJSON(t, mustCLI(t, url, "", append([]string{"config", "get"}, doc...)...), `{
		"count": 3, "name": "3", "debug": true, "nothing": null,
		"json_from_stdin": {"a": [1, {"b": null}]}, "yaml_from_stdin": {"x": 10, "y": ["a", "b"]},
		"json_value": [1, "2"]}`)

	mustCLI(t, url, "", append(append([]string{"config", "delete"}, doc...), "--key", "yaml_from_stdin.y")...)
	if out := mustCLI(t, url, "", append(append([]string{"config", "get"}, doc...), "--key", "yaml_from_stdin", "--format", "plain")...); out != "{\n  \"x\": 10\n}\n" {
		t.Errorf("after delete: %q", out)
	}
}

func TestConfigErrors(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	tests := []struct {
		name     string
		args     []string
		stdin    string
		wantExit int
		wantMsg  string
	}{
		{"missing --env", []string{"config", "get", "--resource", "astute"}, "", 2, "--env is required"},
		{"bad --level", []string{"config", "get", "--env", "1", "--level", "nodes", "--resource", "astute"}, "", 2, "want name=value"},
		{"unknown flag", []string{"config", "get", "--env", "1", "--bogus"}, "", 2, "unknown flag"},
		{"unknown FQDN", []string{"config", "get", "--env", "1", "--level", "nodes=node-9.domain.tld", "--resource", "astute"}, "", 3, "node node-9.domain.tld not found"},
		{"FQDN must match exactly", []string{"config", "get", "--env", "1", "--level", "nodes=node-1.domain", "--resource", "astute"}, "", 3, "node node-1.domain not found"},
		{"unknown environment", []string{"config", "get", "--env", "99", "--resource", "astute"}, "", 3, ""},
		{"unknown resource", []string{"config", "get", "--env", "1", "--resource", "nope"}, "", 3, ""},
		{"missing key", []string{"config", "get", "--env", "1", "--resource", "astute", "--key", "nope"}, "", 1, "HTTP 409"},
		{"value without key", []string{"config", "set", "--env", "1", "--resource", "astute", "--value", "1"}, "", 2, "go with --key"},
		{"document not JSON", []string{"config", "set", "--env", "1", "--resource", "astute"}, "{", 2, "invalid JSON"},
		{"document not an object", []string{"config", "set", "--env", "1", "--resource", "astute"}, "[1]", 1, "HTTP 400"},
		{"plain without key", []string{"config", "get", "--env", "1", "--resource", "astute", "--format", "plain"}, "", 2, "give --key"},
		{"delete without key", []string{"config", "delete", "--env", "1", "--resource", "astute"}, "", 2, "--key is required"},
		{"unknown version", []string{"config", "get", "--env", "1", "--resource", "astute", "--version", "5"}, "", 3, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := cli(t, url, tt.stdin, tt.args...)
			if err == nil {
				t.Fatalf("succeeded, want exit %d\n%s", tt.wantExit, out)
			}
			if got := exitCode(err); got != tt.wantExit {
				t.Errorf("exit %d (%v), want %d", got, err, tt.wantExit)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error %q does not say %q", err, tt.wantMsg)
			}
		})
	}
}

func TestConfigHistoryDiffRollback(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	doc := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	with := func(cmd string, args ...string) []string {
		return append(append([]string{"config", cmd}, doc...), args...)
	}
	mustCLI(t, url, `{"deployment_id": 5, "debug": false, "nova": {"workers": 4, "state_path": "/var/lib/nova"}, "gone": 1}`, with("set")...)
	mustCLI(t, url, "", with("set", "--key", "debug", "--value", "true")...)
	mustCLI(t, url, `{"deployment_id": 6, "debug": true, "nova": {"workers": 8, "state_path": "/var/lib/nova", "api": true}, "new": [1, 2]}`, with("set")...)

	history := mustCLI(t, url, "", with("history")...)
	lines := strings.Split(strings.TrimSpace(history), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "VERSION") || !strings.HasPrefix(lines[1], "3 ") || !strings.HasPrefix(lines[3], "1 ") {
		t.Errorf("history table:\n%s", history)
	}

	diff := mustCLI(t, url, "", with("diff", "--from", "1", "--to", "3")...)
	wantDiff := `--- astute of environment 1 at nodes=node-1.domain.tld values, version 1
+++ astute of environment 1 at nodes=node-1.domain.tld values, version 3
~ debug: false -> true
~ deployment_id: 5 -> 6
- gone: 1
+ new: [1,2]
+ nova.api: true
~ nova.workers: 4 -> 8
3 changed, 2 added, 1 removed
`
	if diff != wantDiff {
		t.Errorf("diff:\n%s\nwant:\n%s", diff, wantDiff)
	}
	if latest := mustCLI(t, url, "", with("diff", "--from", "2")...); !strings.Contains(latest, "version 3\n") || !strings.Contains(latest, "~ deployment_id: 5 -> 6\n") {
		t.Errorf("diff --from 2 (to the latest):\n%s", latest)
	}
	if same := mustCLI(t, url, "", with("diff", "--from", "3", "--to", "3")...); !strings.HasSuffix(same, "no differences\n") {
		t.Errorf("diff of a version with itself:\n%s", same)
	}

	out := mustCLI(t, url, "", with("rollback", "--to", "1")...)
	if out != "astute of environment 1 at nodes=node-1.domain.tld values: version 1 written as version 4\n" {
		t.Errorf("rollback output %q", out)
	}
	assertJSON(t, mustCLI(t, url, "", with("get")...), `{"deployment_id": 5, "debug": false, "nova": {"workers": 4, "state_path": "/var/lib/nova"}, "gone": 1}`)
	if d := mustCLI(t, url, "", with("diff", "--from", "1", "--to", "4")...); !strings.HasSuffix(d, "no differences\n") {
		t.Errorf("version 4 differs from version 1:\n%s", d)
	}
	// Versions after the rolled-back-to one stay readable.
	assertJSON(t, mustCLI(t, url, "", with("get", "--version", "3", "--key", "deployment_id")...), `{"deployment_id": 6}`)

	// Overrides have their own history.
	mustCLI(t, url, "", with("override", "--key", "debug", "--value", "false")...)
	mustCLI(t, url, "", with("override", "--key", "debug", "--value", "true")...)
	mustCLI(t, url, "", with("rollback", "--override", "--to", "1")...)
	assertJSON(t, mustCLI(t, url, "", with("get", "--key", "debug")...), `{"debug": false}`)

	for _, bad := range [][]string{with("diff"), with("rollback"), with("diff", "--from", "1", "--to", "-1")} {
		if _, err := cli(t, url, "", bad...); exitCode(err) != 2 {
			t.Errorf("%v: err %v, want a usage error", bad, err)
		}
	}
	if _, err := cli(t, url, "", with("rollback", "--to", "9")...); exitCode(err) != 3 {
		t.Errorf("rollback to a missing version: %v, want not found", err)
	}
}

func TestEnvCompDefLvlCommands(t *testing.T) {
	url := cliServer(t)
	out := mustCLI(t, url, "", "comp", "create", "--name", "fuel", "--definition", "astute", "--definition", "override/plugins")
	if !strings.Contains(out, "astute,override/plugins") {
		t.Errorf("comp create:\n%s", out)
	}
	mustCLI(t, url, "", "comp", "create", "--name", "extra")
	list := mustCLI(t, url, "", "comp", "list")
	if lines := strings.Split(strings.TrimSpace(list), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "fuel") {
		t.Errorf("comp list:\n%s", list)
	}

	def := jsonOut(t, mustCLI(t, url, "", "def", "create", "--name", "globals", "--component", "1", "--content", "schema: {}", "--content-format", "yaml", "--format", "json")).(map[string]any)
	defID := def["id"].(json.Number).String()
	mustCLI(t, url, "", "def", "update", defID, "--name", "globals2")
	if show := mustCLI(t, url, "", "def", "show", defID); !strings.Contains(show, "globals2") {
		t.Errorf("def show after rename:\n%s", show)
	}
	if defs := mustCLI(t, url, "", "def", "list", "--component", "1"); strings.Count(defs, "\n") != 4 {
		t.Errorf("def list --component 1:\n%s", defs)
	}

	mustCLI(t, url, "", "env", "create", "--id", "3", "--components", "fuel", "--levels", "role,nodes")
	envs := mustCLI(t, url, "", "env", "list")
	if !strings.Contains(envs, "role,nodes") {
		t.Errorf("env list:\n%s", envs)
	}
	mustCLI(t, url, "", "env", "update", "3", "--components", "fuel,extra")
	show := jsonOut(t, mustCLI(t, url, "", "env", "show", "3", "--format", "json")).(map[string]any)
	if got := fmt.Sprint(show["components"]); got != "[1 2]" {
		t.Errorf("components after update = %v", got)
	}

	mustCLI(t, url, `{"x": 1}`, "config", "set", "--env", "3", "--level", "role=controller", "--resource", "astute")
	lvls := mustCLI(t, url, "", "lvl", "list", "--env", "3")
	if lines := strings.Split(strings.TrimSpace(lvls), "\n"); len(lines) != 3 || !strings.Contains(lines[1], "role") || !strings.Contains(lines[1], "controller") {
		t.Errorf("lvl list:\n%s", lvls)
	}
	if lvl := mustCLI(t, url, "", "lvl", "show", "--env", "3", "nodes", "--format", "yaml"); !strings.Contains(lvl, "name: nodes") {
		t.Errorf("lvl show:\n%s", lvl)
	}

	if out := mustCLI(t, url, "", "env", "delete", "3"); out != "deleted environments/3\n" {
		t.Errorf("env delete: %q", out)
	}
	if _, err := cli(t, url, "", "env", "show", "3"); exitCode(err) != 3 {
		t.Errorf("env show of a deleted environment: %v", err)
	}
	if _, err := cli(t, url, "", "env", "show"); exitCode(err) != 2 {
		t.Errorf("env show without id: %v", err)
	}
	if _, err := cli(t, url, "", "env", "update", "3"); exitCode(err) != 2 {
		t.Errorf("env update without changes: %v", err)
	}
	mustCLI(t, url, "", "comp", "delete", "extra")
	if _, err := cli(t, url, "", "comp", "show", "extra"); exitCode(err) != 3 {
		t.Errorf("comp show of a deleted component: %v", err)
	}
}

// TestConfigNodeForms: --level nodes=ID, nodes=FQDN, nodes=UUID and spec 000's
// node=FQDN address one document, its history included; in a [role, nodes]
// environment the node's placement (node create --levels) gives the short form.
func TestConfigNodeForms(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	var node struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, url, "", "node", "show", "7", "--format", "json")), &node); err != nil || node.UUID == "" {
		t.Fatalf("node 7: %v", err)
	}
	forms := []string{"nodes=7", "nodes=NODE-1.domain.tld", "nodes=" + node.UUID, "node=node-1.domain.tld"}
	for i, form := range forms {
		mustCLI(t, url, "", "config", "set", "--env", "1", "--level", form, "--resource", "astute", "--key", "set_by", "--value", fmt.Sprint(i), "--type", "int")
	}
	var histories []string
	for _, form := range forms {
		assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "1", "--level", form, "--resource", "astute"), `{"set_by": 3}`)
		histories = append(histories, mustCLI(t, url, "", "config", "history", "--env", "1", "--level", form, "--resource", "astute", "--format", "json"))
	}
	for _, h := range histories[1:] {
		if h != histories[0] {
			t.Errorf("histories differ:\n%s\n%s", h, histories[0])
		}
	}
	if n := strings.Count(histories[0], `"version"`); n != len(forms) {
		t.Errorf("history has %d versions, want %d:\n%s", n, len(forms), histories[0])
	}

	mustCLI(t, url, "", "env", "create", "--id", "2", "--components", "fuel", "--levels", "role,nodes")
	mustCLI(t, url, "", "node", "create", "--fqdn", "node-3.domain.tld", "--env", "2", "--id", "9", "--levels", "role=compute")
	mustCLI(t, url, `{"role": "compute"}`, "config", "set", "--env", "2", "--level", "role=compute", "--resource", "astute")
	mustCLI(t, url, `{"node": 9}`, "config", "set", "--env", "2", "--level", "role=compute,nodes=9", "--resource", "astute")
	assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "2", "--level", "nodes=node-3.domain.tld", "--resource", "astute"), `{"node": 9, "role": "compute"}`)
	// A repeated --level adds a level, as a comma does (it used to replace the
	// first): this full path is not the node's placement, and reads nothing.
	assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "2", "--level", "role=controller", "--level", "nodes=9", "--resource", "astute"), `{}`)
	mustCLI(t, url, "", "node", "set", "node-3.domain.tld", "--levels", "role=controller")
	assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "2", "--level", "nodes=node-3.domain.tld", "--resource", "astute"), `{}`)
	if _, err := cli(t, url, "", "config", "get", "--env", "2", "--level", "nodes=node-1.domain.tld", "--resource", "astute"); exitCode(err) != 3 || !strings.Contains(err.Error(), "not assigned to environment 2") {
		t.Errorf("node of another environment: %v", err)
	}
}

// config set adds facts under keys that do not exist yet (spec 000), names
// the key it cannot follow, and every write says which version it created.
func TestConfigSetNewNestedKey(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	doc := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	config := func(args ...string) []string {
		return append(append([]string{"config"}, args[0]), append(doc, args[1:]...)...)
	}
	if out := mustCLI(t, url, "", config("set", "--key", "debug", "--value", "true")...); out != "version 1\n" {
		t.Errorf("first set: %q", out)
	}
	if out := mustCLI(t, url, "", config("set", "--key", "storage.backend", "--value", "ceph")...); out != "version 2\n" {
		t.Errorf("set of a new nested key: %q", out)
	}
	if out := mustCLI(t, url, "", config("get", "--key", "storage", "--format", "json")...); !strings.Contains(out, `"backend": "ceph"`) {
		t.Errorf("after set: %s", out)
	}
	_, err := cli(t, url, "", config("set", "--key", "storage.backend.pool", "--value", "rbd")...)
	if err == nil || !strings.Contains(err.Error(), "Keys path storage.backend.pool doesn't exist: storage.backend is a string, not an object or a list") {
		t.Errorf("set through a string: %v", err)
	}
	_, err = cli(t, url, "", config("delete", "--key", "storage.missing")...)
	if err == nil || !strings.Contains(err.Error(), "there is no key storage.missing") {
		t.Errorf("delete of a missing key: %v", err)
	}
	if out := mustCLI(t, url, "", config("override", "--key", "storage.backend", "--value", "lvm")...); out != "version 1\n" {
		t.Errorf("override: %q", out)
	}
	if out := mustCLI(t, url, "", config("delete", "--key", "storage.backend")...); out != "version 3\n" {
		t.Errorf("delete: %q", out)
	}
	if out := mustCLI(t, url, "", config("set", "--key", "net.mtu", "--value", "9000", "--api-version", "latest", "--dry-run")...); !strings.Contains(out, "would become version 4") || !strings.Contains(out, "node node-1.domain.tld:") || !strings.Contains(out, "net.mtu") {
		t.Errorf("dry run: %s", out)
	}
}
