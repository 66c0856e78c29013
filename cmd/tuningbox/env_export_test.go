package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// TestEnvMoveWithNodes: an environment whose level "nodes" holds registered
// nodes moves to another tuningbox (the Lambda functions over their grants)
// with its nodes, and reads the same there by host name: kept ids where they
// are free, a new id for a node whose id is taken (its documents follow it);
// into a tuningbox where one of its hosts is registered, the import is a
// conflict and nothing is imported.
func TestEnvMoveWithNodes(t *testing.T) {
	source := cliServer(t)
	seedFuel(t, source)
	node := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	for _, v := range []string{"1", "2"} {
		mustCLI(t, source, "", append([]string{"config", "set", "--key", "deployment_id", "--value", v, "--type", "int"}, node...)...)
	}
	mustCLI(t, source, "", "config", "set", "--env", "1", "--resource", "astute", "--key", "region", "--value", "RegionOne")
	export := filepath.Join(t.TempDir(), "env-1.export")
	mustCLI(t, source, "", "env", "export", "1", "--to", export)
	reads := func(url string) string {
		return mustCLI(t, url, "", append([]string{"config", "get", "--explain"}, node...)...) +
			mustCLI(t, url, "", append([]string{"config", "history", "--format", "json"}, node...)...)
	}
	want := reads(source)

	fresh := cliServer(t)
	if out := mustCLI(t, fresh, "", "env", "import", export); !strings.Contains(out, "environment 1 ") || !strings.Contains(out, "2 documents, 3 versions") {
		t.Fatalf("env import: %s", out)
	}
	if got := reads(fresh); got != want {
		t.Fatalf("the moved environment reads otherwise:\n%s\nwant\n%s", got, want)
	}
	if out := mustCLI(t, fresh, "", "node", "show", "node-1.domain.tld", "--format", "json"); !strings.Contains(out, `"id": 7,`) {
		t.Fatalf("node-1 after the move: %s", out)
	}

	// Node id 7 is taken here: the node gets another, its documents follow it.
	taken := cliServer(t)
	mustCLI(t, taken, "", "comp", "create", "--name", "other")
	mustCLI(t, taken, "", "env", "create", "--id", "9", "--components", "other")
	registerNode(t, taken, 7, "other-7.domain.tld", 9)
	mustCLI(t, taken, "", "env", "import", export)
	moved := jsonOut(t, mustCLI(t, taken, "", "node", "show", "node-1.domain.tld", "--format", "json")).(map[string]any)
	id := fmt.Sprint(moved["id"])
	if id == "7" || fmt.Sprint(moved["environment_id"]) != "1" {
		t.Fatalf("node-1 where id 7 was taken: %v", moved)
	}
	// Explain names the level by the node's id.
	if got, want := reads(taken), strings.ReplaceAll(want, "/nodes/7/", "/nodes/"+id+"/"); got != want {
		t.Fatalf("the moved environment reads otherwise where node id 7 was taken:\n%s\nwant\n%s", got, want)
	}

	// A host of the environment is registered here: nothing is imported.
	conflict := cliServer(t)
	mustCLI(t, conflict, "", "comp", "create", "--name", "other")
	mustCLI(t, conflict, "", "env", "create", "--id", "9", "--components", "other")
	registerNode(t, conflict, 70, "node-2.domain.tld", 9)
	if out, err := cli(t, conflict, "", "env", "import", export); !isStatus(err, 409) || !strings.Contains(out+err.Error(), "node-2.domain.tld") {
		t.Fatalf("import with a host taken: %v\n%s", err, out)
	}
	if _, err := cli(t, conflict, "", "env", "show", "1"); !isStatus(err, 404) {
		t.Fatalf("env show 1 after the refused import: %v", err)
	}
}

// TestEnvImportOverTheBodyCap: an export sent uncompressed past the server's
// body cap is a 413 that says what to do, and nothing is imported.
func TestEnvImportOverTheBodyCap(t *testing.T) {
	url := cliServer(t)
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	header := `{"format":"tuningbox-env-export","version":1,"environment":{"id":1,"hierarchy_levels":[],"components":[]},"nodes":[]}` + "\n"
	huge := header + `{"document":{"component":"x","resource":"y","kind":"values","path":[],"versions":[{"version":1,"content":{"pad":"` +
		strings.Repeat("x", httpapi.DefaultMaxBody) + `"}}]}}` + "\n"
	_, err = c.Do(context.Background(), client.Request{Method: "POST", Path: "/api/v1/store/environments/import",
		Header: http.Header{"Content-Type": {"application/x-ndjson"}}, Body: []byte(huge)})
	// Through API Gateway the gateway refuses the body itself (its payload limit), in its own words.
	if !isStatus(err, http.StatusRequestEntityTooLarge) || os.Getenv("TUNINGBOX_TEST_GATEWAY") == "" && !strings.Contains(err.Error(), "gzip") {
		t.Fatalf("import over the body cap: %v", err)
	}
	if _, err := cli(t, url, "", "env", "show", "1"); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("env show 1 after the refused import: %v", err)
	}
}

// seedDeployment gives environment 1 of url (id 1, level nodes, nodes 7 and
// 8) everything it deploys with: documents with history in component fuel,
// Puppet resource overrides (component puppet, validated), Fuel's release
// (its metadata and default and provision graphs, testdata/fuel), a plugin
// with a graph, a graph of the cluster's own, default deploy steps and a
// deploy template named by a trait of node 7. It returns an instant between
// the first and the second version of every document.
func seedDeployment(t *testing.T, url string) string {
	t.Helper()
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, body := range []string{
		`{"name":"fuel","resource_definitions":[{"name":"astute","content":{}}]}`,
		`{"name":"puppet","resource_definitions":[{"name":"override/configuration","content":{"validator":"puppet-resource-overrides"}}]}`,
	} {
		if _, err := c.Do(ctx, client.Request{Method: http.MethodPost, Path: "/api/v1/config/components", Body: []byte(body)}); err != nil {
			t.Fatal(err)
		}
	}
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel,puppet", "--levels", "nodes")
	registerNode(t, url, 7, "node-1.domain.tld", 1)
	registerNode(t, url, 8, "node-2.domain.tld", 1)
	mustCLI(t, url, "", "node", "set", "7", "--traits", "CUSTOM_RAID,CUSTOM_GPU")

	node7 := []string{"--env", "1", "--level", "nodes=7"}
	set := func(level []string, resource, key, value string) {
		mustCLI(t, url, "", append([]string{"config", "set", "--resource", resource, "--key", key, "--value", value, "--type", "json"}, level...)...)
	}
	set([]string{"--env", "1"}, "astute", "deployment_id", "1")
	set(node7, "astute", "deployment_id", "2")
	set([]string{"--env", "1"}, "override/configuration", "configuration", `{"package":{"mc":{"ensure":"absent"}}}`)
	between := time.Now().UTC().Format(time.RFC3339Nano)
	set([]string{"--env", "1"}, "astute", "deployment_id", "3")
	set(node7, "astute", "fqdn", `"node-1.domain.tld"`)
	set(node7, "override/configuration", "configuration", `{"package":{"htop":{"ensure":"latest"}}}`)

	release := "../../testdata/fuel/release/"
	mustCLI(t, url, "", "release", "create", "--name", "mitaka", "--version", "9.0", "--metadata", release+"release-metadata.yaml")
	mustCLI(t, url, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "default", "-f", release+"tasks-default.yaml", "--yes")
	mustCLI(t, url, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "provision", "-f", release+"tasks-provision.yaml", "--yes")
	mustCLI(t, url, "", "plugin", "create", "--name", "ldap", "--version", "3.0.0")
	mustCLI(t, url, `{"name":"LDAP","tasks":[{"id":"ldap","type":"shell","requires":["netconfig"]}]}`, "graph", "upload", "-p", "ldap-3.0.0", "-t", "default", "-f", "-", "--yes")
	mustCLI(t, url, "", "env", "update", "1", "--release", "mitaka-9.0", "--plugin", "ldap-3.0.0")
	mustCLI(t, url, "", "graph", "upload", "-e", "1", "-t", "default", "-f", writeFile(t, "cluster.yaml", "- {id: fixes, type: shell, requires: [ldap], parameters: {cmd: /bin/true}}\n"), "--yes")
	mustCLI(t, url, "", "template", "create", "--name", "CUSTOM_RAID", "--steps", `[{"interface":"raid","step":"create_configuration","args":{"raid":"1"},"priority":10}]`)
	mustCLI(t, url, "", "template", "create", "--name", "CUSTOM_UNUSED", "--steps", `[{"interface":"bios","step":"apply_configuration","args":{},"priority":5}]`)
	mustCLI(t, url, "", "template", "defaults", "set", "-e", "1", "--steps", `[{"interface":"deploy","step":"deploy_start","args":{},"priority":50}]`)
	return between
}

// deploymentReads is every answer the move of environment 1 must keep:
// documents (effective, explained, as of an instant, their histories), the
// overrides applied from them, the cluster's settings, graphs (its own and
// merged) and deployment tasks, the release and plugin, the default deploy
// steps, the template a node's trait names, and the steps a deployment runs.
func deploymentReads(t *testing.T, url, asOf string) string {
	t.Helper()
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, level := range [][]string{{"--env", "1"}, {"--env", "1", "--level", "nodes=7"}} {
		for _, resource := range []string{"astute", "override/configuration"} {
			doc := append(slices.Clone(level), "--resource", resource, "--format", "json")
			out.WriteString(mustCLI(t, url, "", append([]string{"config", "get", "--explain"}, doc...)...))
			out.WriteString(mustCLI(t, url, "", append([]string{"config", "get", "--as-of", asOf}, doc...)...))
			out.WriteString(mustCLI(t, url, "", append([]string{"config", "history"}, doc...)...))
		}
	}
	out.WriteString(mustCLI(t, url, "", "override", "apply", "--catalog", writeFile(t, "catalog.json", cliCatalog), "--env", "1", "--level", "nodes=7", "--resource", "override/configuration"))
	for _, get := range []string{
		"/api/v1/clusters/1",
		"/api/v1/graphs?clusters_ids=1&fetch_related=1",
		"/api/v1/clusters/1/deployment_graphs/default",
		"/api/v1/releases/1/deployment_graphs/provision",
		"/api/v1/clusters/1/deployment_tasks",
		"/api/v1/releases/1",
		"/api/v1/plugins/1",
	} {
		resp, err := c.Do(context.Background(), client.Request{Method: http.MethodGet, Path: get})
		if err != nil {
			t.Fatalf("GET %s: %v", get, err)
		}
		fmt.Fprintf(&out, "GET %s\n%s\n", get, resp.Body)
	}
	out.WriteString(mustCLI(t, url, "", "template", "defaults", "show", "-e", "1", "--format", "json"))
	out.WriteString(mustCLI(t, url, "", "template", "show", "CUSTOM_RAID", "--format", "json"))
	out.WriteString(mustCLI(t, url, "", "node", "steps", "7", "--trait", "CUSTOM_RAID", "--format", "json"))
	return out.String()
}

// TestEnvMoveWithDeployment: an environment with documents with history,
// overrides, a release, a plugin, graphs, default deploy steps and a
// template moves to a fresh tuningbox and every read of it is the same
// there, ids and UUIDs included. Into a tuningbox that has the release with
// the same graphs, the import reuses it; into one whose release of that name
// and version differs, the import is a conflict that names it, and nothing
// is imported.
func TestEnvMoveWithDeployment(t *testing.T) {
	source := cliServer(t)
	asOf := seedDeployment(t, source)
	export := filepath.Join(t.TempDir(), "env-1.export")
	mustCLI(t, source, "", "env", "export", "1", "--to", export)
	want := deploymentReads(t, source, asOf)

	fresh := cliServer(t)
	if out := mustCLI(t, fresh, "", "env", "import", export); !strings.Contains(out, "environment 1 ") || !strings.Contains(out, "4 documents, 6 versions") {
		t.Fatalf("env import: %s", out)
	}
	if got := deploymentReads(t, fresh, asOf); got != want {
		t.Fatalf("the moved environment reads otherwise:\n%s\nwant\n%s", got, want)
	}
	if out := mustCLI(t, fresh, "", "template", "list"); strings.Contains(out, "CUSTOM_UNUSED") {
		t.Fatalf("a template no node of the environment names moved with it:\n%s", out)
	}

	// The same release here already (its graphs uploaded alike): reused, not registered twice.
	same := cliServer(t)
	release := "../../testdata/fuel/release/"
	mustCLI(t, same, "", "release", "create", "--name", "mitaka", "--version", "9.0", "--metadata", release+"release-metadata.yaml")
	mustCLI(t, same, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "default", "-f", release+"tasks-default.yaml", "--yes")
	mustCLI(t, same, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "provision", "-f", release+"tasks-provision.yaml", "--yes")
	mustCLI(t, same, "", "env", "import", export)
	if out := mustCLI(t, same, "", "release", "list"); strings.Count(out, "mitaka") != 1 {
		t.Fatalf("releases after importing one registered here:\n%s", out)
	}
	if cluster := mustCLI(t, same, "", "graph", "list", "-e", "1"); !strings.Contains(cluster, "fixes") {
		t.Fatalf("the cluster's graphs where its release was reused:\n%s", cluster)
	}

	// Release id 1 and graph ids 1-2 are taken here: the release and its graphs get new ids, the cluster follows.
	taken := cliServer(t)
	mustCLI(t, taken, "", "release", "create", "--name", "newton", "--version", "10.0")
	mustCLI(t, taken, "", "graph", "upload", "-r", "newton-10.0", "-t", "default", "-f", writeFile(t, "newton.yaml", "- {id: newton, type: shell}\n"), "--yes")
	mustCLI(t, taken, "", "graph", "upload", "-r", "newton-10.0", "-t", "provision", "-f", writeFile(t, "newton.yaml", "- {id: newton, type: shell}\n"), "--yes")
	mustCLI(t, taken, "", "env", "import", export)
	c, err := client.New(taken, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	if cluster, err := c.Cluster(context.Background(), "1"); err != nil || cluster.ReleaseID == nil || *cluster.ReleaseID != "2" {
		t.Fatalf("the cluster where release id 1 was taken: %+v, %v; want release 2", cluster, err)
	}
	if got, want := deploymentTasks(t, taken), deploymentTasks(t, source); got != want {
		t.Fatalf("the deployment tasks where the release's id was taken:\n%s\nwant\n%s", got, want)
	}

	// A release of the same name and version whose default graph differs: nothing is imported.
	differs := cliServer(t)
	mustCLI(t, differs, "", "release", "create", "--name", "mitaka", "--version", "9.0", "--metadata", release+"release-metadata.yaml")
	mustCLI(t, differs, "", "graph", "upload", "-r", "mitaka-9.0", "-t", "default", "-f", writeFile(t, "other.yaml", "- {id: other, type: shell}\n"), "--yes")
	if out, err := cli(t, differs, "", "env", "import", export); !isStatus(err, http.StatusConflict) || !strings.Contains(err.Error(), "mitaka-9.0") {
		t.Fatalf("import over a differing release: %v\n%s", err, out)
	}
	if _, err := cli(t, differs, "", "env", "show", "1"); !isStatus(err, http.StatusNotFound) {
		t.Fatalf("env show 1 after the refused import: %v", err)
	}
	for _, list := range [][]string{{"plugin", "list"}, {"template", "list"}, {"node", "list"}} {
		if out := mustCLI(t, differs, "", list...); strings.Contains(out, "ldap") || strings.Contains(out, "CUSTOM_RAID") || strings.Contains(out, "node-1") {
			t.Fatalf("%s after the refused import:\n%s", strings.Join(list, " "), out)
		}
	}
}

// TestEnvImportIntoStore: `env import --backend embedded --data DIR` writes
// the import straight into a stopped server's store, with the services the
// server uses: exported from there, the environment is the same file, to
// the byte. --backend aws without a table or bucket is a usage error.
func TestEnvImportIntoStore(t *testing.T) {
	source := cliServer(t)
	seedDeployment(t, source)
	export := filepath.Join(t.TempDir(), "env-1.export")
	mustCLI(t, source, "", "env", "export", "1", "--to", export)
	file, err := os.ReadFile(export)
	if err != nil {
		t.Fatal(err)
	}

	dataDir := t.TempDir()
	out, _, err := runCLI(t, "", "env", "import", export, "--backend", "embedded", "--data", dataDir)
	if err != nil || !strings.Contains(out, "environment 1 ") || !strings.Contains(out, "4 documents, 6 versions") {
		t.Fatalf("env import --backend embedded: %q, %v", out, err)
	}
	b, err := bolt.Open(dataDir)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	svc, err := server.EnvironmentServices(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	h, _, err := envexport.Read(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	again, docs, err := envexport.Source(context.Background(), svc, "1", h.ExportedAt)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := envexport.Write(&buf, again, docs); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(buf.Bytes(), file) {
		t.Fatalf("the environment imported into the store exports otherwise:\n%s\nwant\n%s", buf.Bytes(), file)
	}

	if _, _, err := runCLI(t, "", "env", "import", export, "--backend", "aws", "--bucket", "b"); exitCode(err) != 2 {
		t.Fatalf("--backend aws without a table: %v (exit %d)", err, exitCode(err))
	}
}

// deploymentTasks is the merged default graph of cluster 1 at url.
func deploymentTasks(t *testing.T, url string) string {
	t.Helper()
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(context.Background(), client.Request{Method: http.MethodGet, Path: "/api/v1/clusters/1/deployment_tasks"})
	if err != nil {
		t.Fatal(err)
	}
	return string(resp.Body)
}
