package main

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// Every command names nodes, environments, releases and plugins by id, UUID
// or name, and sends what the microversion takes (spec 004: UUIDs from 1.2 on).
func TestNamesAtEveryMicroversion(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	c, err := client.New(url, client.WithBasicAuth(testAdmin, testAdminPassword))
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []client.Request{
		{Method: http.MethodPost, Path: "/api/v1/releases", Body: []byte(`{"name":"mitaka","version":"9.0"}`)},
		{Method: http.MethodPost, Path: "/api/v1/plugins", Body: []byte(`{"name":"ldap","version":"3.0.0"}`)},
		{Method: http.MethodPut, Path: "/api/v1/clusters/1", Body: []byte(`{"release_id":1,"plugins":[1]}`)},
	} {
		if _, err := c.Do(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	tasks := writeFile(t, "tasks.yaml", "- {id: hiera, type: shell, roles: [controller], parameters: {cmd: 'true'}}\n")
	for _, version := range []string{"1.0", "1.2", "latest"} {
		at := func(args ...string) []string { return append([]string{"--api-version", version}, args...) }
		t.Run(version, func(t *testing.T) {
			out := mustCLI(t, url, "", at("node", "show", "node-2.domain.tld", "--format", "json")...)
			node := jsonOut(t, out).(map[string]any)
			if id, _ := node["id"].(string); version != "1.0" && !ident.IsUUID(id) || node["fqdn"] != "node-2.domain.tld" {
				t.Errorf("node show: %s", out)
			}
			mustCLI(t, url, "", at("node", "set", "node-2.domain.tld", "--traits", "CUSTOM_V"+strings.ToUpper(strings.ReplaceAll(version, ".", "_")), "--env", "1")...)
			mustCLI(t, url, "", at("node", "show", "8")...)
			mustCLI(t, url, "", at("env", "show", "1")...)
			mustCLI(t, url, "", at("env", "update", "1", "--components", "fuel")...)
			mustCLI(t, url, "", at("lvl", "list", "--env", "1")...)
			mustCLI(t, url, "", at("comp", "show", "1")...)
			mustCLI(t, url, "", at("config", "set", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--key", "debug", "--value", "true")...)
			if out := mustCLI(t, url, "", at("config", "get", "--env", "1", "--level", "nodes=7", "--resource", "astute", "--key", "debug", "--format", "plain")...); strings.TrimSpace(out) != "true" {
				t.Errorf("config get: %q", out)
			}
			mustCLI(t, url, "", at("graph", "upload", "-r", "mitaka", "-t", "default", "-f", tasks)...)
			mustCLI(t, url, "", at("graph", "upload", "-p", "ldap-3.0.0", "-t", "extra", "-f", tasks)...)
			if out := mustCLI(t, url, "", at("graph", "list", "-e", "1")...); !strings.Contains(out, "hiera") {
				t.Errorf("graph list: %s", out)
			}
			mustCLI(t, url, "", at("graph", "download", "-e", "1", "-a", "-f", "-")...)
			// The node list of an execution is the registry's integer ids, whatever the user named.
			out = mustCLI(t, url, "", at("graph", "execute", "-e", "1", "--node", "node-1.domain.tld", "--format", "json")...)
			tx := jsonOut(t, out).(map[string]any)
			sub := tx["sub_transactions"].([]any)[0].(map[string]any)["uuid"].(string)
			plan, err := c.Do(context.Background(), client.Request{Method: http.MethodGet, Path: "/api/v1/transactions/" + sub + "/plan"})
			if err != nil || !strings.Contains(string(plan.Body), `"nodes":["7"]`) {
				t.Errorf("plan of an execution on node-1.domain.tld: %v %s", err, plan.Body)
			}
			if _, err := c.StopTransaction(context.Background(), tx["uuid"].(string)); err != nil {
				t.Fatal(err)
			}
		})
	}
	if _, err := cli(t, url, "", "--api-version", "latest", "node", "show", "node-9.domain.tld"); exitCode(err) != 3 {
		t.Errorf("unknown FQDN: %v", err)
	}
	if _, err := cli(t, url, "", "graph", "upload", "-r", "nowhere", "-t", "x", "-f", tasks); exitCode(err) != 3 || !strings.Contains(err.Error(), "no release is named nowhere") {
		t.Errorf("unknown release: %v", err)
	}
}
