package app_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/app/keyspace"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
)

// TestFunctionsStayInTheirGrants walks the paths the CLI suite (which runs on
// apptest.LambdaServer) leaves out, through the stack's functions, each
// behind its grant (apptest.Functions fails the test on a key outside it):
// node users log in through the authorizer, the auth function resolves nodes
// and environments, deploy templates and steps, graphs' registries, deleting
// an environment, and the hourly sweep of the gc function.
func TestFunctionsStayInTheirGrants(t *testing.T) {
	const admin, password = "admin", "grants-test-password"
	stack := apptest.Functions(t, admin, password, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(stack.Handler)
	t.Cleanup(srv.Close)
	do := func(user, pass, method, path, body string, want int, header ...string) string {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.SetBasicAuth(user, pass)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != want {
			t.Fatalf("%s %s = %d %s, want %d", method, path, resp.StatusCode, got, want)
		}
		return string(got)
	}
	as := func(method, path, body string, want int, header ...string) string {
		t.Helper()
		return do(admin, password, method, path, body, want, header...)
	}
	const v11 = "config 1.1"
	as("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, 201)
	var env struct {
		UUID string `json:"uuid"`
	}
	if err := json.Unmarshal([]byte(as("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`, 201)), &env); err != nil || env.UUID == "" {
		t.Fatalf("environment uuid %q: %v", env.UUID, err)
	}
	as("POST", "/api/v1/config/environments", `{"id":2,"components":["fuel"],"hierarchy_levels":["nodes"]}`, 201)
	as("POST", "/api/v1/nodes", `{"id":7,"fqdn":"node-7.example.com","environment_id":1,"traits":["CUSTOM_GRANTS"]}`, 201)
	as("PUT", "/api/v1/config/environments/1/nodes/7/resources/astute/values", `{"own":"value"}`, 204)

	// A node user: the auth function resolves its node, the authorizer its identity.
	as("POST", "/api/v1/users", `{"name":"node7","password":"node-7-password","role":"node","node":"node-7.example.com"}`, 201)
	do("node7", "node-7-password", "GET", "/api/v1/config/environments/1/nodes/7/resources/astute/values?effective", "", 200)
	as("GET", "/api/v1/audit?environment="+env.UUID, "", 200)
	as("POST", "/api/v1/tokens", `{"description":"grants"}`, 201)

	as("PUT", "/api/v1/deploy_steps/defaults/1", `{"steps":[{"interface":"deploy","step":"deploy","priority":100,"args":{}}]}`, 200, "OpenStack-API-Version", v11)
	as("POST", "/api/v1/deploy_templates", `{"name":"CUSTOM_GRANTS","steps":[{"interface":"raid","step":"apply_configuration","priority":10,"args":{}}]}`, 201, "OpenStack-API-Version", v11)
	as("POST", "/api/v1/nodes/7/deploy_steps", `{"instance_traits":["CUSTOM_GRANTS"]}`, 200, "OpenStack-API-Version", v11)

	as("POST", "/api/v1/releases", `{"name":"mitaka","version":"9.0"}`, 201)
	as("DELETE", "/api/v1/config/environments/2", "", 204)
	as("POST", "/api/v1/store/gc?min_age=0s", "", 200)

	// The gc function's hourly sweep, audit records included.
	if err := app.Sweep(context.Background(), apptest.Granted(t, stack.Backend, keyspace.GC), audit.DefaultRetention, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}
}
