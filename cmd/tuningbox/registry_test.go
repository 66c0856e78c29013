package main

import (
	"context"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
)

func TestReleaseAndPluginCommands(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	out := mustCLI(t, url, "", "release", "create", "--name", "mitaka", "--version", "9.0")
	if !strings.Contains(out, "mitaka") || !strings.Contains(out, "9.0") {
		t.Errorf("release create:\n%s", out)
	}
	mustCLI(t, url, "", "release", "create", "--name", "newton", "--version", "10.0")
	mustCLI(t, url, "", "release", "create", "--name", "newton", "--version", "10.1")
	mustCLI(t, url, "", "plugin", "create", "--name", "ldap", "--version", "3.0.0")
	if out := mustCLI(t, url, "", "release", "list"); !strings.HasPrefix(out, "ID") || strings.Count(out, "\n") != 4 || !strings.Contains(out, "newton") {
		t.Errorf("release list:\n%s", out)
	}
	if out := mustCLI(t, url, "", "--api-version", "latest", "plugin", "show", "ldap", "--format", "json"); !strings.Contains(out, `"version": "3.0.0"`) {
		t.Errorf("plugin show:\n%s", out)
	}
	mustCLI(t, url, "", "release", "show", "newton-10.1")
	if _, err := cli(t, url, "", "release", "show", "newton"); exitCode(err) != 1 || !strings.Contains(err.Error(), "newton-10.0, newton-10.1") {
		t.Errorf("ambiguous name: %v", err)
	}

	// An environment's release and plugins, by name at every microversion.
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	for _, version := range []string{"1.0", "latest"} {
		mustCLI(t, url, "", "--api-version", version, "env", "update", "1", "--release", "mitaka", "--plugin", "ldap-3.0.0")
		cluster, err := c.Cluster(context.Background(), "1")
		if err != nil || cluster.ReleaseID == nil || *cluster.ReleaseID != "1" || len(cluster.Plugins) != 1 || cluster.Plugins[0] != "1" {
			t.Errorf("cluster at %s: %+v %v", version, cluster, err)
		}
		mustCLI(t, url, "", "--api-version", version, "env", "update", "1", "--plugin", "")
		if cluster, err := c.Cluster(context.Background(), "1"); err != nil || len(cluster.Plugins) != 0 || cluster.ReleaseID == nil {
			t.Errorf("no plugins at %s: %+v %v", version, cluster, err)
		}
	}
	mustCLI(t, url, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "default", "-f", writeFile(t, "t.yaml", "- {id: a, type: shell}\n"))
	if out := mustCLI(t, url, "", "plugin", "delete", "ldap"); !strings.Contains(out, "deleted plugin ldap") {
		t.Errorf("plugin delete: %s", out)
	}
	if _, err := cli(t, url, "", "plugin", "show", "ldap"); exitCode(err) != 3 {
		t.Errorf("deleted plugin: %v", err)
	}
	if _, err := cli(t, url, "", "release", "create", "--name", "x"); exitCode(err) != 2 {
		t.Errorf("create without --version: %v", err)
	}
}

// release create --metadata takes Fuel's release-metadata.yaml (testdata/fuel
// at the repository root) as it is; release update replaces the metadata.
func TestReleaseMetadataCommands(t *testing.T) {
	url := cliServer(t)
	metadata := "../../testdata/fuel/release/release-metadata.yaml"
	mustCLI(t, url, "", "release", "create", "--name", "mitaka", "--version", "9.0", "--metadata", metadata)
	show := jsonOut(t, mustCLI(t, url, "", "release", "show", "mitaka", "--format", "json")).(map[string]any)
	roles, _ := show["roles_metadata"].(map[string]any)
	controller, _ := roles["controller"].(map[string]any)
	tags, _ := show["tags_metadata"].(map[string]any)
	if controller["name"] != "Controller" || controller["public_ip_required"] != true || len(tags) != 13 {
		t.Fatalf("release show: %v", show)
	}
	mustCLI(t, url, "", "release", "update", "mitaka-9.0", "--version", "9.1",
		"--metadata", writeFile(t, "m.yaml", "roles_metadata: {compute: {tags: [compute, virt]}}\ndeployment_info_resource: facts\n"))
	show = jsonOut(t, mustCLI(t, url, "", "release", "show", "mitaka-9.1", "--format", "json")).(map[string]any)
	roles, _ = show["roles_metadata"].(map[string]any)
	if len(roles) != 1 || show["deployment_info_resource"] != "facts" || len(show["tags_metadata"].(map[string]any)) != 13 {
		t.Fatalf("release after update: %v", show)
	}
	if _, err := cli(t, url, "", "release", "create", "--name", "m", "--version", "1", "--metadata", writeFile(t, "x.yaml", "other: 1\n")); exitCode(err) != 2 {
		t.Errorf("metadata without roles or tags: %v", err)
	}
	if _, err := cli(t, url, "", "release", "update", "mitaka"); exitCode(err) != 2 {
		t.Errorf("update without a change: %v", err)
	}
}

func TestTemplateDefaultsCommands(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	steps := `[{"interface":"deploy","step":"deploy_start","args":{},"priority":50},{"interface":"power","step":"power_one","args":{},"priority":40}]`
	if out := mustCLI(t, url, "", "template", "defaults", "set", "-e", "1", "--steps", steps); !strings.Contains(out, "deploy_start") || !strings.Contains(out, "power_one") {
		t.Errorf("set:\n%s", out)
	}
	for _, version := range []string{"1.1", "latest"} {
		out := mustCLI(t, url, "", "--api-version", version, "template", "defaults", "show", "-e", "1", "--format", "json")
		if !strings.Contains(out, `"step": "power_one"`) {
			t.Errorf("show at %s:\n%s", version, out)
		}
	}
	mustCLI(t, url, "", "node", "steps", "node-1.domain.tld")
	if out := mustCLI(t, url, "", "template", "defaults", "delete", "-e", "1"); !strings.Contains(out, "deleted") {
		t.Errorf("delete: %s", out)
	}
	if _, err := cli(t, url, "", "template", "defaults", "show", "-e", "1"); exitCode(err) != 3 {
		t.Errorf("after delete: %v", err)
	}
	if _, err := cli(t, url, "", "template", "defaults", "show"); exitCode(err) != 2 {
		t.Errorf("without --env: %v", err)
	}
}
