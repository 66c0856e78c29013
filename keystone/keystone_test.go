// Package keystone_test runs tuningbox against a real Keystone that
// keystone/run.sh sets up (Debian's python3-keystone on SQLite, 127.0.0.1).
// Without that Keystone (TUNINGBOX_TEST_KEYSTONE_URL unset) it skips.
package keystone_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/tuningbox/tuningbox/shared/app"
	appserver "github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/keystone"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/authorizer"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// ks talks to the test Keystone as its bootstrap administrator.
type ks struct {
	t             *testing.T
	url           string
	adminPassword string
}

// call sends a Keystone API request with token (none when empty) and decodes a JSON answer into out.
func (k ks) call(method, path, token string, body any, want int, out any) http.Header {
	k.t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			k.t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, k.url+path, rd)
	if err != nil {
		k.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("X-Auth-Token", token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		k.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		k.t.Fatalf("keystone %s %s: HTTP %d %s, want %d", method, path, resp.StatusCode, raw, want)
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			k.t.Fatal(err)
		}
	}
	return resp.Header
}

// token issues a token for user (password) scoped to project, or unscoped when project is empty.
func (k ks) token(user, password, project string) (string, time.Time) {
	k.t.Helper()
	a := map[string]any{"identity": map[string]any{"methods": []string{"password"},
		"password": map[string]any{"user": map[string]any{"name": user, "domain": map[string]string{"id": "default"}, "password": password}}}}
	if project != "" {
		a["scope"] = map[string]any{"project": map[string]any{"name": project, "domain": map[string]string{"id": "default"}}}
	}
	var doc struct {
		Token struct {
			ExpiresAt time.Time `json:"expires_at"`
		} `json:"token"`
	}
	h := k.call("POST", "/auth/tokens?nocatalog", "", map[string]any{"auth": a}, http.StatusCreated, &doc)
	return h.Get("X-Subject-Token"), doc.Token.ExpiresAt
}

func (k ks) admin() string {
	tok, _ := k.token("admin", k.adminPassword, "admin")
	return tok
}

// create makes an entity (projects, users, roles) and returns its id.
func (k ks) create(kind string, fields map[string]any) string {
	k.t.Helper()
	singular := strings.TrimSuffix(kind, "s")
	var out map[string]map[string]any
	k.call("POST", "/"+kind, k.admin(), map[string]any{singular: fields}, http.StatusCreated, &out)
	return out[singular]["id"].(string)
}

func (k ks) roleID(name string) string {
	k.t.Helper()
	var out struct {
		Roles []struct{ ID string } `json:"roles"`
	}
	k.call("GET", "/roles?name="+name, k.admin(), nil, http.StatusOK, &out)
	if len(out.Roles) != 1 {
		k.t.Fatalf("role %s: %v", name, out.Roles)
	}
	return out.Roles[0].ID
}

func (k ks) grant(project, user, role string) {
	k.t.Helper()
	k.call("PUT", "/projects/"+project+"/users/"+user+"/roles/"+role, k.admin(), nil, http.StatusNoContent, nil)
}

// server serves the whole tuningbox API configured by env (TUNINGBOX_* variables).
func server(t *testing.T, env map[string]string) string {
	t.Helper()
	cfg, err := app.LoadConfig(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	b := mem.New()
	h, err := appserver.NewHandler(b, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// status sends a request to tuningbox with a Keystone token and returns the status code.
func status(t *testing.T, base, method, path, token, body string) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-Auth-Token", token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// bound is the cache bound of the server under test.
const bound = 8 * time.Second

func TestKeystone(t *testing.T) {
	url := os.Getenv("TUNINGBOX_TEST_KEYSTONE_URL")
	if url == "" {
		t.Skip("no test Keystone: run keystone/run.sh")
	}
	k := ks{t: t, url: url, adminPassword: os.Getenv("TUNINGBOX_TEST_KEYSTONE_ADMIN_PASSWORD")}

	// The cloud: tuningbox's service user in project "service" with the
	// "service" role (what keystonemiddleware's users hold), project
	// "tuningbox" with an admin and a reader, and another project's admin.
	service := k.create("projects", map[string]any{"name": "service", "domain_id": "default"})
	project := k.create("projects", map[string]any{"name": "tuningbox", "domain_id": "default"})
	other := k.create("projects", map[string]any{"name": "other", "domain_id": "default"})
	serviceRole := k.create("roles", map[string]any{"name": "service"})
	svcUser := k.create("users", map[string]any{"name": "tuningbox", "password": "svc-pw", "domain_id": "default"})
	k.grant(service, svcUser, serviceRole)
	alice := k.create("users", map[string]any{"name": "alice", "password": "alice-pw", "domain_id": "default"})
	k.grant(project, alice, k.roleID("admin"))
	bob := k.create("users", map[string]any{"name": "bob", "password": "bob-pw", "domain_id": "default"})
	k.grant(project, bob, k.roleID("reader"))
	carol := k.create("users", map[string]any{"name": "carol", "password": "carol-pw", "domain_id": "default"})
	k.grant(other, carol, k.roleID("admin"))

	env := map[string]string{
		"TUNINGBOX_KEYSTONE_URL": url, "TUNINGBOX_KEYSTONE_USER": "tuningbox", "TUNINGBOX_KEYSTONE_PASSWORD": "svc-pw",
		"TUNINGBOX_KEYSTONE_PROJECT": "tuningbox", "TUNINGBOX_KEYSTONE_ROLES": "admin=admin, reader=observer",
		"TUNINGBOX_KEYSTONE_CACHE": bound.String(),
	}
	tb := server(t, env)
	const components = "/api/v1/config/components"

	t.Run("allow and deny by project and role", func(t *testing.T) {
		for _, c := range []struct {
			what, method, user, project, body string
			want                              int
		}{
			{"admin reads", "GET", "alice", "tuningbox", "", http.StatusOK},
			{"admin writes", "POST", "alice", "tuningbox", `{"name": "fuel"}`, http.StatusCreated},
			{"reader reads", "GET", "bob", "tuningbox", "", http.StatusOK},
			{"reader may not write", "POST", "bob", "tuningbox", `{"name": "nova"}`, http.StatusForbidden},
			{"another project's admin", "GET", "carol", "other", "", http.StatusForbidden},
			{"an unscoped token", "GET", "alice", "", "", http.StatusForbidden},
		} {
			tok, _ := k.token(c.user, c.user+"-pw", c.project)
			if got := status(t, tb, c.method, components, tok, c.body); got != c.want {
				t.Errorf("%s: HTTP %d, want %d", c.what, got, c.want)
			}
		}
		if got := status(t, tb, "GET", components, "gAAAAABnot-a-real-token", ""); got != http.StatusUnauthorized {
			t.Errorf("a token Keystone never issued: HTTP %d, want 401", got)
		}
	})

	t.Run("revoked token refused after the cache bound", func(t *testing.T) {
		admin := k.admin()
		tok, _ := k.token("bob", "bob-pw", "tuningbox")
		validated := time.Now() // the answer is cached from about here, for the bound
		if got := status(t, tb, "GET", components, tok, ""); got != http.StatusOK {
			t.Fatalf("before revocation: %d", got)
		}
		revokeTok(k, admin, tok)
		// Within the bound the cached answer stands (the documented trade-off) ...
		if time.Since(validated) < bound-time.Second {
			if got := status(t, tb, "GET", components, tok, ""); got != http.StatusOK {
				t.Errorf("revoked token refused %v after validation: HTTP %d; want the cached answer within the %v bound", time.Since(validated), got, bound)
			}
		}
		// ... and once it has passed, Keystone is asked again and says no.
		for {
			sent := time.Since(validated)
			if status(t, tb, "GET", components, tok, "") != http.StatusOK {
				t.Logf("revoked token refused by a request sent %v after its validation was cached (bound %v)", sent.Round(10*time.Millisecond), bound)
				break
			}
			if sent > bound+time.Second {
				t.Fatalf("revoked token accepted %v after its validation (bound %v)", sent, bound)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})

	t.Run("expired token refused even within the cache bound", func(t *testing.T) {
		// A server trusting answers for an hour still stops at the token's expiry (15 s here).
		long := map[string]string{}
		for k, v := range env {
			long[k] = v
		}
		long["TUNINGBOX_KEYSTONE_CACHE"] = "1h"
		tbLong := server(t, long)
		tok, expires := k.token("alice", "alice-pw", "tuningbox")
		if got := status(t, tbLong, "GET", components, tok, ""); got != http.StatusOK {
			t.Fatalf("fresh token: %d", got)
		}
		time.Sleep(time.Until(expires) + 500*time.Millisecond)
		if got := status(t, tbLong, "GET", components, tok, ""); got != http.StatusUnauthorized {
			t.Fatalf("token expired at %s: HTTP %d, want 401", expires.Format(time.RFC3339), got)
		}
		// The service token expired too; the validator renewed it for a new token.
		fresh, _ := k.token("alice", "alice-pw", "tuningbox")
		if got := status(t, tbLong, "GET", components, fresh, ""); got != http.StatusOK {
			t.Fatalf("new token after the service token expired: %d", got)
		}
	})

	t.Run("failed tokens throttle their client", func(t *testing.T) {
		// A fresh server: its throttle has seen no failures.
		tbFresh := server(t, env)
		good, _ := k.token("bob", "bob-pw", "tuningbox")
		if got := status(t, tbFresh, "GET", components, good, ""); got != http.StatusOK {
			t.Fatalf("good token: %d", got)
		}
		// Over-long tokens fail without reaching Keystone and fill 127.0.0.1's bucket (30).
		junk := strings.Repeat("x", 5000)
		for i := range 30 {
			if got := status(t, tbFresh, "GET", components, junk, ""); got != http.StatusUnauthorized {
				t.Fatalf("junk token %d: %d", i, got)
			}
		}
		// Past the rate, a token the cache cannot answer is refused before Keystone is asked ...
		fresh, _ := k.token("alice", "alice-pw", "tuningbox")
		if got := status(t, tbFresh, "GET", components, fresh, ""); got != http.StatusTooManyRequests {
			t.Errorf("uncached token after 30 failures: HTTP %d, want 429", got)
		}
		// ... while a token validated before keeps working from its cached answer.
		if got := status(t, tbFresh, "GET", components, good, ""); got != http.StatusOK {
			t.Errorf("cached good token after 30 failures: HTTP %d, want 200", got)
		}
	})

	t.Run("Lambda authorizer", func(t *testing.T) {
		cfg, err := app.LoadConfig(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		v, err := keystone.New(cfg.Keystone, http.DefaultClient, time.Now)
		if err != nil {
			t.Fatal(err)
		}
		b := mem.New()
		m := authapi.New(auth.NewService(b.Index), audit.New(b.Index, nil), nil, slog.New(slog.DiscardHandler))
		m.UseKeystone(v)
		a := authorizer.New(m)
		authorize := func(token string) events.APIGatewayV2CustomAuthorizerSimpleResponse {
			ev, _ := json.Marshal(map[string]any{"version": "2.0", "type": "REQUEST", "routeKey": "$default", "rawPath": components,
				"headers":        map[string]string{"x-auth-token": token},
				"requestContext": map[string]any{"http": map[string]any{"method": "GET", "sourceIp": "198.51.100.7"}}})
			out, err := a.Invoke(context.Background(), ev)
			if err != nil {
				t.Fatal(err)
			}
			return out.(events.APIGatewayV2CustomAuthorizerSimpleResponse)
		}
		bobTok, _ := k.token("bob", "bob-pw", "tuningbox")
		carolTok, _ := k.token("carol", "carol-pw", "other")
		if a := authorize(bobTok); !a.IsAuthorized || a.Context["tuningbox_role"] != "observer" || a.Context["tuningbox_user"] != "keystone:bob" {
			t.Errorf("reader's token: %+v", a)
		}
		if a := authorize(carolTok); a.IsAuthorized {
			t.Errorf("another project's token: %+v", a)
		}
		if a := authorize("gAAAAABnot-a-real-token"); a.IsAuthorized {
			t.Errorf("unknown token: %+v", a)
		}
	})

	t.Run("a server without Keystone refuses X-Auth-Token", func(t *testing.T) {
		tok, _ := k.token("alice", "alice-pw", "tuningbox")
		if got := status(t, server(t, map[string]string{}), "GET", components, tok, ""); got != http.StatusUnauthorized {
			t.Errorf("HTTP %d, want 401", got)
		}
	})
}

// revokeTok revokes a token with Keystone's API (DELETE /v3/auth/tokens).
func revokeTok(k ks, admin, tok string) {
	k.t.Helper()
	req, err := http.NewRequest("DELETE", k.url+"/auth/tokens", nil)
	if err != nil {
		k.t.Fatal(err)
	}
	req.Header.Set("X-Auth-Token", admin)
	req.Header.Set("X-Subject-Token", tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		k.t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		k.t.Fatalf("revoke: HTTP %d", resp.StatusCode)
	}
}
