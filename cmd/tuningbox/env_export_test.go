package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/httpapi"
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
