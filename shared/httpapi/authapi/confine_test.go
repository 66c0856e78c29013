package authapi_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/lambdatest"
)

// TestNodeUserConfined: a node user reads its own documents by every path form
// (short or full path, node by id, FQDN or UUID, environment by id or UUID)
// and gets 403 for any other environment, role or node, on the local server and
// on the AWS path (the request authorizer's context handed to the route's function).
func TestNodeUserConfined(t *testing.T) {
	s := newStack(t)
	const api = "/api/v1/config"
	s.must(t, admin, "POST", api+"/components", map[string]any{"name": "fuel", "resource_definitions": []any{map[string]any{"name": "astute"}}}, http.StatusCreated)
	var env1 struct {
		UUID string `json:"uuid"`
	}
	a := s.must(t, admin, "POST", api+"/environments", map[string]any{"id": 1, "components": []string{"fuel"}, "hierarchy_levels": []string{"role", "nodes"}}, http.StatusCreated)
	if err := json.Unmarshal([]byte(a.body), &env1); err != nil || env1.UUID == "" {
		t.Fatalf("environment: %s", a.body)
	}
	s.must(t, admin, "POST", api+"/environments", map[string]any{"id": 2, "components": []string{"fuel"}, "hierarchy_levels": []string{"role", "nodes"}}, http.StatusCreated)
	var node7 struct {
		Node struct {
			UUID string `json:"uuid"`
		} `json:"node"`
	}
	a = s.must(t, admin, "POST", "/api/v1/nodes", map[string]any{"id": 7, "fqdn": "node-7.example.com", "environment_id": 1, "levels": map[string]string{"role": "compute"}}, http.StatusCreated)
	if err := json.Unmarshal([]byte(a.body), &node7); err != nil {
		t.Fatal(err)
	}
	s.must(t, admin, "POST", "/api/v1/nodes", map[string]any{"id": 8, "fqdn": "node-8.example.com", "environment_id": 1, "levels": map[string]string{"role": "compute"}}, http.StatusCreated)
	s.must(t, admin, "POST", "/api/v1/nodes", map[string]any{"id": 9, "fqdn": "node-9.example.com", "environment_id": 2, "levels": map[string]string{"role": "compute"}}, http.StatusCreated)
	for path, doc := range map[string]string{
		"1":                         `{"scope":"global-1"}`,
		"1/role/compute":            `{"role":"compute"}`,
		"1/role/controller":         `{"secret":"CONTROLLER"}`,
		"1/role/compute/nodes/7":    `{"node":"SEVEN"}`,
		"1/role/compute/nodes/8":    `{"node":"EIGHT"}`,
		"1/role/controller/nodes/7": `{"node":"SEVEN-AS-CONTROLLER"}`,
		"2":                         `{"scope":"ENV-2"}`,
		"2/role/compute/nodes/9":    `{"node":"NINE"}`,
	} {
		s.must(t, admin, "PUT", api+"/environments/"+path+"/resources/astute/values", doc, http.StatusNoContent)
	}
	s.must(t, admin, "POST", "/api/v1/users", map[string]any{"name": "n7", "password": "node-7-password", "role": "node", "node": "node-7.example.com"}, http.StatusCreated)
	n7 := basicAuth("n7", "node-7-password")

	const res = "/resources/astute/values"
	env := api + "/environments/"
	own := []string{
		env + "1/nodes/7" + res + "?effective",
		env + "1/nodes/node-7.example.com" + res + "?effective",
		env + "1/nodes/NODE-7.Example.COM" + res + "?effective&show_lookup",
		env + "1/node/" + node7.Node.UUID + res + "?effective",
		env + env1.UUID + "/nodes/node-7.example.com" + res + "?effective",
		env + "1/role/compute/nodes/7" + res + "?effective",
		env + "1/role/compute/nodes/node-7.example.com" + res,
		env + "1/role/compute/nodes/7" + res + "/versions",
	}
	forbidden := []string{
		env + "2/nodes/7" + res + "?effective",                   // other environment, short path
		env + "2/role/compute/nodes/7" + res + "?effective",      // other environment, full path
		env + "2/role/compute/nodes/9" + res + "?effective",      // other environment's node
		env + "1/role/controller/nodes/7" + res + "?effective",   // other role
		env + "1/role/controller/nodes/node-7.example.com" + res, // other role, by FQDN
		env + "1/role/controller" + res,                          // a role level alone
		env + "1/role/compute" + res,                             // its own role level alone
		env + "1" + res,                                          // global
		env + "1/nodes/8" + res + "?effective",                   // other node, short path
		env + "1/role/compute/nodes/node-8.example.com" + res,    // other node, full path
		env + "1/nodes/node-7.example.com.other" + res,           // a name that only starts like its own
		env + "1/hierarchy_levels",                               // the environment's structure
		env + "2/nodes/node-9.example.com" + res + "?effective",  // another environment's node by FQDN
		env + "1/nodes/77" + res + "?effective",                  // a node that does not exist: 403 too
		env + "99/nodes/7" + res + "?effective",                  // an environment that does not exist
	}

	// check runs every path through call and asserts the answers.
	check := func(t *testing.T, call func(method, path string) (int, string)) {
		for _, p := range own {
			status, body := call("GET", p)
			// The document, or its version list (one version, written by the admin).
			ownData := strings.Contains(body, `"SEVEN"`) || strings.HasSuffix(p, "/versions") && strings.Contains(body, `"version":1`)
			if status != http.StatusOK || !ownData || strings.Contains(body, "CONTROLLER") {
				t.Errorf("own %s: %d %s", p, status, body)
			}
		}
		for _, p := range forbidden {
			if status, body := call("GET", p); status != http.StatusForbidden {
				t.Errorf("foreign %s: %d %s, want 403", p, status, body)
			}
		}
		if status, _ := call("PUT", env+"1/nodes/7"+res); status != http.StatusForbidden {
			t.Errorf("write own document: %d, want 403", status)
		}
	}

	t.Run("server", func(t *testing.T) {
		check(t, func(method, path string) (int, string) {
			var body any
			if method == "PUT" {
				body = map[string]any{"a": 1}
			}
			a := s.do(t, n7, method, path, body)
			return a.status, a.body
		})
	})

	t.Run("authorizer", func(t *testing.T) {
		authorize, err := app.Authorizer(s.backend, s.cfg, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		ev := map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": own[0],
			"headers":        map[string]string{"authorization": lambdatest.BasicHeader("n7", "node-7-password")},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"}}}
		out, err := authorize(ctx, lambdatest.RoundTrip[json.RawMessage](t, ev))
		if err != nil {
			t.Fatal(err)
		}
		// API Gateway caches this answer for the credentials and reuses it on every route.
		// The events and answers are written as API Gateway's JSON (HTTP API,
		// payload 2.0), which keeps this package's tests free of the Lambda event types.
		answer := lambdatest.RoundTrip[struct {
			IsAuthorized bool           `json:"isAuthorized"`
			Context      map[string]any `json:"context"`
		}](t, out)
		if !answer.IsAuthorized || answer.Context["tuningbox_node_environment"] == nil || answer.Context["tuningbox_node_levels"] == nil {
			t.Fatalf("authorizer answer: %+v", answer)
		}
		function := lambdaadapter.New(s.handler, slog.New(slog.DiscardHandler))
		check(t, func(method, path string) (int, string) {
			rawPath, query, _ := strings.Cut(path, "?")
			req := map[string]any{"version": "2.0", "routeKey": "$default", "rawPath": rawPath, "rawQueryString": query,
				"requestContext": map[string]any{"http": map[string]any{"method": method}, "stage": "$default",
					"authorizer": map[string]any{"lambda": answer.Context}}}
			if method == "PUT" {
				req["body"], req["headers"] = `{"a":1}`, map[string]string{"content-type": "application/json"}
			}
			out, err := function.Invoke(ctx, lambdatest.RoundTrip[json.RawMessage](t, req))
			if err != nil {
				t.Fatal(err)
			}
			resp := lambdatest.RoundTrip[struct {
				StatusCode int    `json:"statusCode"`
				Body       string `json:"body"`
			}](t, out)
			return resp.StatusCode, resp.Body
		})
	})
}
