package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// TestConsoleThroughTheFunctions: on the stack's functions, the console's
// files answer without credentials (their gateway route skips the
// authorizer), and a node user's console session, opened by the auth
// function, passes the authorizer for its own node only and is deleted on logout.
func TestConsoleThroughTheFunctions(t *testing.T) {
	const admin, password = "admin", "console-functions-password"
	stack := apptest.Functions(t, admin, password, slog.New(slog.DiscardHandler))
	srv := httptest.NewServer(stack.Handler)
	t.Cleanup(srv.Close)
	call := func(method, path, body string, want int, auth func(*http.Request)) string {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if auth != nil {
			auth(req)
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
	basic := func(user, pass string) func(*http.Request) {
		return func(r *http.Request) { r.SetBasicAuth(user, pass) }
	}
	bearer := func(token string) func(*http.Request) {
		return func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) }
	}
	as := basic(admin, password)

	if page := call("GET", "/ui/index.html", "", http.StatusOK, nil); !strings.Contains(page, `src="app.js"`) {
		t.Errorf("the page: %.300s", page)
	}
	call("GET", "/ui/vendor/htm-preact.js", "", http.StatusOK, nil)

	call("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, as)
	call("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`, http.StatusCreated, as)
	for _, id := range []string{"7", "8"} {
		call("POST", "/api/v1/nodes", `{"id":`+id+`,"fqdn":"node-`+id+`.example.com","environment_id":1}`, http.StatusCreated, as)
		call("PUT", "/api/v1/config/environments/1/nodes/"+id+"/resources/astute/values", `{"node":`+id+`}`, http.StatusNoContent, as)
	}
	call("POST", "/api/v1/users", `{"name":"n7","password":"node-7-password","role":"node","node":"node-7.example.com"}`, http.StatusCreated, as)

	var session wire.Session
	if err := json.Unmarshal([]byte(call("POST", "/api/v1/sessions", "", http.StatusCreated, basic("n7", "node-7-password"))), &session); err != nil {
		t.Fatal(err)
	}
	n7 := bearer(session.Token)
	call("GET", "/api/v1/config/environments/1/nodes/7/resources/astute/values?effective", "", http.StatusOK, n7)
	call("GET", "/api/v1/config/environments/1/nodes/8/resources/astute/values?effective", "", http.StatusForbidden, n7)
	// Logout deletes the token; the authorizer, another function, may accept
	// it until its verification cache forgets it (auth.DefaultCacheTTL).
	call("DELETE", "/api/v1/sessions", "", http.StatusNoContent, n7)
	if tokens := call("GET", "/api/v1/tokens?user=n7", "", http.StatusOK, as); tokens != `{"tokens":[]}` {
		t.Errorf("n7's tokens after logout: %s", tokens)
	}
}
