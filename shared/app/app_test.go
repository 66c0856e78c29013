package app_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	api "github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
)

// These tests go through the wiring of every group on the embedded store: what
// the groups' own tests fake (clusters, effective values) is the real thing here.

type client struct {
	t   *testing.T
	url string
	api *api.Client
}

func newClient(t *testing.T) *client {
	url := apptest.Server(t, "admin", "wiring-test-password")
	return &client{t: t, url: url, api: login(t, url, "admin", "wiring-test-password")}
}

// login is the API client of user at url.
func login(t *testing.T, url, user, password string) *api.Client {
	t.Helper()
	c, err := api.New(url, api.WithBasicAuth(user, password))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// send sends body (JSON, or none) through c, whatever the answer, and returns its status and body.
func (c *client) send(through *api.Client, method, path, body string) (int, string) {
	c.t.Helper()
	req := api.Request{Method: method, Path: path}
	if body != "" {
		req.Body = []byte(body)
	}
	resp, err := through.Do(c.t.Context(), req)
	if apiErr := (*api.Error)(nil); err != nil && !errors.As(err, &apiErr) {
		c.t.Fatal(err)
	}
	return resp.Status, string(resp.Body)
}

// do sends body (JSON, or none) as the administrator and checks the status and
// that the response body contains want.
func (c *client) do(method, path, body string, status int, want string) string {
	c.t.Helper()
	got, answer := c.send(c.api, method, path, body)
	if got != status || !strings.Contains(answer, want) {
		c.t.Fatalf("%s %s = %d %s, want %d containing %q", method, path, got, answer, status, want)
	}
	return answer
}

func TestOverrideDataValidatedAndAppliedFromConfigDB(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components",
		`{"name":"puppet","resource_definitions":[{"name":"override/configuration","content":{"validator":"puppet-resource-overrides"}}]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["puppet"],"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/nodes", `{"id":7,"fqdn":"node-7.example.com","environment_id":1}`, 201, "")
	doc := "/api/v1/config/environments/1/nodes/7/resources/override/configuration/values"

	c.do("PUT", doc, `{"configuration":{"package":{"mc":"absent"}}}`, 400, "configuration.package.mc")
	c.do("GET", doc+"/versions", "", 200, "[]")

	c.do("PUT", "/api/v1/config/environments/1/resources/override/configuration/values",
		`{"configuration":{"package":{"mc":{"ensure":"absent"}}},"configuration_options":{"create":false}}`, 204, "")
	c.do("PUT", doc, `{"configuration":{"package":{"htop":{"ensure":"latest"}}}}`, 204, "")

	out := c.do("POST", "/api/v1/config/overrides/apply", `{
	  "catalog":[{"type":"package","title":"mc","parameters":{"ensure":"installed"}}],
	  "source":{"env":1,"levels":{"nodes":"7"},"resource":"override/configuration"}}`, 200, "")
	var res struct {
		Catalog []struct {
			Title      string         `json:"title"`
			Parameters map[string]any `json:"parameters"`
		} `json:"catalog"`
		Report struct {
			Skipped []struct {
				Title string `json:"title"`
			} `json:"skipped"`
		} `json:"report"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	// The node level replaced the top-level `configuration` key, so mc is left alone
	// and htop, not in the catalog, is skipped (create is false at the global level).
	if len(res.Catalog) != 1 || res.Catalog[0].Parameters["ensure"] != "installed" ||
		len(res.Report.Skipped) != 1 || res.Report.Skipped[0].Title != "htop" {
		t.Errorf("apply = %s", out)
	}
	c.do("POST", "/api/v1/config/overrides/apply",
		`{"catalog":[],"source":{"env":9,"resource":"override/configuration"}}`, 404, "")
}

func TestGraphsRunOnEnvironmentsAndRegisteredNodes(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/environments", `{"id":1,"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 201, "")
	c.do("PUT", "/api/v1/clusters/1", `{"release_id":1}`, 200, "")
	c.do("POST", "/api/v1/releases/1/deployment_graphs/default",
		`{"tasks":[{"id":"hiera","type":"puppet"},{"id":"ntp","type":"puppet","requires":["hiera"]}]}`, 201, "")
	c.do("POST", "/api/v1/clusters/1/deployment_graphs/default",
		`{"tasks":[{"id":"ntp","type":"shell","requires":["hiera"]}]}`, 201, "")
	c.do("GET", "/api/v1/clusters/1/deployment_tasks", "", 200, `"type":"shell"`)
	c.do("GET", "/api/v1/clusters/2/deployment_tasks", "", 404, "")

	c.do("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 400, "has no nodes")
	c.do("POST", "/api/v1/nodes", `{"id":5,"fqdn":"node-5.example.com","environment_id":1}`, 201, "")
	out := c.do("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 202, "")
	var tx struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(out), &tx); err != nil || tx.UUID == "" {
		t.Fatalf("execute = %s (%v)", out, err)
	}
	c.do("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/5/claim", "", 200, `"id":"hiera"`)
	c.do("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/5/result", `{"task":"hiera","status":"ready"}`, 200, "")
	c.do("POST", "/api/v1/transactions/"+tx.UUID+"/nodes/5/claim", "", 200, `"id":"ntp"`)
	c.do("POST", "/api/v1/graphs/execute", `{"cluster":1,"graphs":[{"type":"default"}]}`, 409, "")
}

// Deleting an environment deletes its cluster graphs and settings in the
// same atomic write, and is refused while the cluster runs a transaction.
func TestDeletingAnEnvironmentDeletesItsGraphs(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"c","resource_definitions":[{"name":"r","content":{}}]}`, 201, "")
	c.do("POST", "/api/v1/config/environments", `{"id":30,"components":["c"],"hierarchy_levels":["nodes"]}`, 201, "")
	c.do("POST", "/api/v1/nodes", `{"fqdn":"n1.example.com","environment_id":30,"roles":["controller"]}`, 201, "")
	c.do("POST", "/api/v1/releases", `{"name":"r","version":"1"}`, 201, "")
	c.do("PUT", "/api/v1/clusters/30", `{"release_id":1}`, 200, "")
	c.do("POST", "/api/v1/releases/1/deployment_graphs/default", `{"tasks":[{"id":"r","type":"shell"}]}`, 201, "")
	c.do("POST", "/api/v1/clusters/30/deployment_graphs/default", `{"tasks":[{"id":"a","type":"shell"}]}`, 201, `"id":2`)
	c.do("POST", "/api/v1/clusters/30/deployment_graphs/upgrade", `{"tasks":[{"id":"u","type":"shell"}]}`, 201, `"id":3`)

	var tx struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(c.do("PUT", "/api/v1/clusters/30/deploy?graph_type=upgrade", "", 202, "")), &tx); err != nil {
		t.Fatal(err)
	}
	c.do("DELETE", "/api/v1/config/environments/30", "", 409, "already runs transaction "+tx.UUID)
	c.do("GET", "/api/v1/graphs/2", "", 200, "")
	c.do("POST", "/api/v1/transactions/"+tx.UUID+"/stop", "", 200, "")

	c.do("DELETE", "/api/v1/config/environments/30", "", 204, "")
	c.do("GET", "/api/v1/graphs/2", "", 404, "")
	c.do("GET", "/api/v1/graphs/3", "", 404, "")
	c.do("GET", "/api/v1/graphs/1", "", 200, `"model":"release"`)
	c.do("GET", "/api/v1/graphs", "", 200, `"id":1`)
	c.do("GET", "/api/v1/transactions/"+tx.UUID, "", 200, `"status":"error"`)
	// The release is no longer used by the cluster.
	c.do("DELETE", "/api/v1/releases/1", "", 204, "")
}
