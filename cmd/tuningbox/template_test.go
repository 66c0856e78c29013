package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi/templatesapitest"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
)

// run executes one CLI command line against url with stdin, returning its output.
func run(t *testing.T, url, stdin string, args ...string) (string, error) {
	t.Helper()
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"--url", url}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), err
}

func mustRun(t *testing.T, url, stdin string, args ...string) string {
	t.Helper()
	out, err := run(t, url, stdin, args...)
	if err != nil {
		t.Fatalf("tuningbox %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func TestTemplateCommands(t *testing.T) {
	url := templatesapitest.NewServer(t).URL
	mirror := `[{"interface":"raid","step":"create_configuration","priority":10,
		"args":{"logical_disks":[{"size_gb":"MAX","raid_level":"1"}],"bmc_password":"pw"}}]`

	out := mustRun(t, url, mirror, "template", "create", "--name", "CUSTOM_RAID_MIRROR", "--steps", "-")
	if !strings.Contains(out, "raid.create_configuration:10") || strings.Contains(out, `"pw"`) {
		t.Errorf("create from stdin:\n%s", out)
	}
	file := writeFile(t, "steps.json", `[{"interface":"bios","step":"apply_configuration","args":{},"priority":"20"}]`)
	mustRun(t, url, "", "template", "create", "--name", "CUSTOM_VMX_ON", "--steps", file, "--uuid", "8221f906-208b-44a5-b575-f8e8a59c4a84")
	mustRun(t, url, "", "template", "create", "--name", "CUSTOM_INLINE", "--steps", `[{"interface":"deploy","step":"x","args":{},"priority":1}]`)

	out = mustRun(t, url, "", "template", "list")
	if !strings.HasPrefix(out, "UUID") || !strings.Contains(out, "CUSTOM_RAID_MIRROR") || !strings.Contains(out, "8221f906-208b-44a5-b575-f8e8a59c4a84  CUSTOM_VMX_ON") {
		t.Errorf("list:\n%s", out)
	}
	out = mustRun(t, url, "", "template", "list", "--limit", "1", "--sort-key", "name", "--detail")
	if !strings.Contains(out, "CUSTOM_INLINE") || strings.Contains(out, "CUSTOM_VMX_ON") || !strings.Contains(out, "deploy.x:1") {
		t.Errorf("list one page:\n%s", out)
	}
	out = mustRun(t, url, "", "template", "show", "8221f906-208b-44a5-b575-f8e8a59c4a84", "--format", "json")
	if !strings.Contains(out, `"priority": 20`) {
		t.Errorf("show json:\n%s", out)
	}
	out = mustRun(t, url, "", "template", "show", "CUSTOM_RAID_MIRROR", "--format", "json")
	if !strings.Contains(out, `"bmc_password": "******"`) {
		t.Errorf("show masks secrets:\n%s", out)
	}
	out = mustRun(t, url, "", "template", "set", "CUSTOM_INLINE", "--name", "CUSTOM_RENAMED", "--steps", file)
	if !strings.Contains(out, "CUSTOM_RENAMED") || !strings.Contains(out, "bios.apply_configuration:20") {
		t.Errorf("set:\n%s", out)
	}
	mustRun(t, url, "", "template", "delete", "CUSTOM_RENAMED", "CUSTOM_VMX_ON")
	_, err := run(t, url, "", "template", "show", "CUSTOM_RENAMED")
	if exitCode(err) != 3 {
		t.Errorf("show deleted: %v (exit %d)", err, exitCode(err))
	}
	_, err = run(t, url, "", "template", "create", "--name", "custom lower", "--steps", file)
	if err == nil || !strings.Contains(err.Error(), "HTTP 400") {
		t.Errorf("invalid name: %v", err)
	}
	_, err = run(t, url, "", "template", "create", "--name", "CUSTOM_X", "--steps", "-")
	if exitCode(err) != 2 {
		t.Errorf("empty stdin: %v", err)
	}
	_, err = run(t, url, "", "template", "set", "CUSTOM_RAID_MIRROR")
	if exitCode(err) != 2 {
		t.Errorf("set without changes: %v", err)
	}
}

func TestNodeCommands(t *testing.T) {
	url := templatesapitest.NewServer(t).URL
	out := mustRun(t, url, "", "node", "create", "--fqdn", "node-1.example.com", "--env", "1", "--role", "compute", "--trait", "CUSTOM_EXAMPLE", "--trait", "CUSTOM_CLASS_A")
	if !strings.Contains(out, "node-1.example.com") || !strings.Contains(out, "CUSTOM_EXAMPLE,CUSTOM_CLASS_A") {
		t.Errorf("create:\n%s", out)
	}
	mustRun(t, url, "", "node", "create", "--fqdn", "node-2.example.com", "--env", nodestest.EnvironmentUUID(2), "--id", "20")

	out = mustRun(t, url, "", "node", "list")
	if !strings.HasPrefix(out, "ID") || !strings.Contains(out, "node-1.example.com") || !strings.Contains(out, "20 ") {
		t.Errorf("list:\n%s", out)
	}
	out = mustRun(t, url, "", "node", "list", "--hostname", "node-2")
	if strings.Contains(out, "node-1") || !strings.Contains(out, "node-2.example.com") {
		t.Errorf("search:\n%s", out)
	}
	if _, err := run(t, url, "", "node", "list", "--hostname", "nowhere"); exitCode(err) != 3 {
		t.Errorf("search without match: %v", err)
	}
	out = mustRun(t, url, "", "node", "set", "node-1.example.com", "--status", "disabled", "--reason", "fan failure", "--maintenance")
	if !strings.Contains(out, "fan failure") || !strings.Contains(out, "disabled") {
		t.Errorf("set:\n%s", out)
	}
	if _, err := run(t, url, "", "node", "set", "1", "--status", "enabled", "--reason", "x"); err == nil || !strings.Contains(err.Error(), "disabled_reason") {
		t.Errorf("reason with enabled: %v", err)
	}
	out = mustRun(t, url, "", "node", "show", "20", "--format", "json")
	if !strings.Contains(out, `"fqdn": "node-2.example.com"`) {
		t.Errorf("show:\n%s", out)
	}

	// The reference's worked example, end to end through the CLI.
	mustRun(t, url, "", "template", "create", "--name", "CUSTOM_EXAMPLE", "--steps",
		`[{"interface":"deploy","step":"deploy_start","args":{},"priority":200},{"interface":"power","step":"power_one","args":{},"priority":100}]`)
	if _, err := run(t, url, "", "node", "steps", "1", "--trait", "CUSTOM_EXAMPLE"); err != nil {
		t.Fatal(err)
	}
	defaults := `{"steps":[{"interface":"deploy","step":"deploy_start","args":{},"priority":50},{"interface":"power","step":"power_one","args":{},"priority":40},
		{"interface":"deploy","step":"deploy_middle","args":{},"priority":40},{"interface":"deploy","step":"deploy_end","args":{},"priority":20}]}`
	c, err := client.New(url, client.WithMicroversion("1.1"))
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Do(context.Background(), client.Request{Method: http.MethodPut, Path: "/api/v1/deploy_steps/defaults/1", Body: []byte(defaults)}); err != nil || resp.Status != http.StatusOK {
		t.Fatalf("set defaults: %v %v", resp, err)
	}
	out = mustRun(t, url, "", "node", "steps", "node-1.example.com", "--trait", "CUSTOM_EXAMPLE", "--trait", "CUSTOM_CLASS_A")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{"200 deploy deploy_start {}", "100 power power_one {}", "40 deploy deploy_middle {}", "20 deploy deploy_end {}"}
	if len(lines) != 5 {
		t.Fatalf("steps:\n%s", out)
	}
	for i, w := range want {
		if got := strings.Join(strings.Fields(lines[i+1]), " "); got != w {
			t.Errorf("line %d = %q, want %q", i+1, got, w)
		}
	}
	if _, err := run(t, url, "", "node", "steps", "1", "--trait", "CUSTOM_NOT_ON_NODE"); err == nil || !strings.Contains(err.Error(), "not a trait of the node") {
		t.Errorf("bad trait: %v", err)
	}
}

func TestNodeValidate(t *testing.T) {
	url := templatesapitest.NewServer(t).URL
	mustRun(t, url, "", "template", "create", "--name", "CUSTOM_RAID", "--steps", `[{"interface":"raid","step":"create_configuration","args":{},"priority":10}]`)
	mustRun(t, url, "", "node", "create", "--fqdn", "node-1.example.com", "--env", "1", "--trait", "CUSTOM_RAID", "--interfaces", `{"raid":["delete_configuration"],"deploy":["*"]}`)
	out, err := run(t, url, "", "--api-version", "latest", "node", "validate", "node-1.example.com")
	if exitCode(err) != 1 || !strings.Contains(err.Error(), "interfaces raid") ||
		!strings.Contains(out, "deploy template CUSTOM_RAID: step raid.create_configuration is not supported by the node") || !strings.Contains(out, "not supported") {
		t.Errorf("invalid node: %v\n%s", err, out)
	}
	mustRun(t, url, "", "node", "set", "node-1.example.com", "--interfaces", `{"raid":["*"],"deploy":["*"]}`)
	if out := mustRun(t, url, "", "node", "validate", "1", "--format", "json"); !strings.Contains(out, `"raid": {`) || strings.Contains(out, "false") {
		t.Errorf("valid node:\n%s", out)
	}
	if out := mustRun(t, url, "", "node", "set", "node-1.example.com", "--interfaces", "null", "--format", "json"); !strings.Contains(out, `"interfaces": null`) {
		t.Errorf("interfaces null:\n%s", out)
	}
	if _, err := run(t, url, "", "node", "set", "1", "--interfaces", "[1]"); exitCode(err) != 2 {
		t.Errorf("bad --interfaces: %v", err)
	}
}
