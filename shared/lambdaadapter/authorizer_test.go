package lambdaadapter_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// The context API Gateway's request authorizer answered reaches the handler
// from either payload version; headers of the same names do not.
func TestAuthorizerContextReachesTheHandler(t *testing.T) {
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, ok := httpapi.AuthorizerContext(r.Context())
		httpapi.JSON(w, http.StatusOK, map[string]any{"passed": ok, "context": c})
	})
	type seen struct {
		Passed  bool           `json:"passed"`
		Context map[string]any `json:"context"`
	}
	run := func(name string, ev map[string]any) seen {
		t.Helper()
		raw, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		resp, _ := invoke(t, &bytes.Buffer{}, echo, raw)
		var got seen
		if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(resp.Body), &got) != nil {
			t.Fatalf("%s: %d %s", name, resp.StatusCode, resp.Body)
		}
		return got
	}
	authorizer := map[string]any{"tuningbox_user": "alice", "tuningbox_role": "observer"}

	v2 := run("HTTP API", map[string]any{"version": "2.0", "rawPath": "/x", "headers": map[string]string{},
		"requestContext": map[string]any{"http": map[string]any{"method": "GET"}, "stage": "$default",
			"authorizer": map[string]any{"lambda": authorizer}}})
	if !v2.Passed || v2.Context["tuningbox_user"] != "alice" || v2.Context["tuningbox_role"] != "observer" {
		t.Errorf("HTTP API authorizer context: %+v", v2)
	}
	v1 := run("REST API", map[string]any{"httpMethod": "GET", "path": "/x", "headers": map[string]string{},
		"requestContext": map[string]any{"httpMethod": "GET", "stage": "prod",
			"authorizer": map[string]any{"principalId": "alice", "tuningbox_user": "alice", "tuningbox_role": "observer"}}})
	if !v1.Passed || v1.Context["tuningbox_user"] != "alice" || v1.Context["tuningbox_role"] != "observer" {
		t.Errorf("REST API authorizer context: %+v", v1)
	}

	forged := map[string]string{"tuningbox_user": "mallory", "tuningbox_role": "admin", "authorizer": `{"tuningbox_user":"mallory"}`}
	for name, ev := range map[string]map[string]any{
		"HTTP API": {"version": "2.0", "rawPath": "/x", "headers": forged,
			"requestContext": map[string]any{"http": map[string]any{"method": "GET"}, "stage": "$default"}},
		"REST API": {"httpMethod": "GET", "path": "/x", "headers": forged, "requestContext": map[string]any{"httpMethod": "GET", "stage": "prod"}},
	} {
		if got := run(name, ev); got.Passed {
			t.Errorf("%s: headers became the authorizer context: %+v", name, got)
		}
	}
}
