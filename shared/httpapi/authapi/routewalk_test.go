package authapi_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
)

// TestEveryRouteNeedsCredentials walks every route of every endpoint group as
// the server mounts them, so a route added later is covered without touching
// this test: without credentials, with a wrong password and with an unknown
// token each must answer 401 with a challenge (or 429 with Retry-After once
// the failed logins are throttled), the documented public route
// excepted; with the admin's credentials none may answer 401 or 403.
func TestEveryRouteNeedsCredentials(t *testing.T) {
	s := newStack(t)
	router, err := app.Routes(s.backend, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	patterns := router.Patterns()
	var public []string
	for _, r := range routes.Table {
		if r.Access == routes.Public {
			public = append(public, r.Patterns()...)
		}
	}
	if len(public) == 0 || !slices.Contains(patterns, public[0]) || len(patterns) < 30 {
		t.Fatalf("the walk found only %d patterns: %v", len(patterns), patterns)
	}
	t.Logf("walking %d route patterns of groups %v", len(patterns), app.GroupNames())
	anonymous := map[string]credential{
		"no credentials": nil,
		"wrong password": basicAuth(adminUser, adminPassword+"x"),
		"unknown user":   basicAuth("mallory", adminPassword),
		"unknown token":  bearer("tbx_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"),
		"garbage header": func(r *http.Request) { r.Header.Set("Authorization", "Basic %%%") },
	}
	requests := 0
	for _, pattern := range patterns {
		method, path, hasMethod := strings.Cut(pattern, " ")
		if !hasMethod {
			path, method = method, ""
		}
		methods := []string{method}
		if method == "" {
			methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}
		}
		target := routestest.Target(path)
		for _, m := range methods {
			for name, cred := range anonymous {
				a := s.do(t, cred, m, target, nil)
				requests++
				if slices.Contains(public, pattern) {
					if a.status != http.StatusOK {
						t.Errorf("public %s %s (%s): %d", m, target, name, a.status)
					}
					continue
				}
				if a.status == http.StatusTooManyRequests && a.header.Get("Retry-After") != "" {
					continue // failed logins of one user and address are throttled after a few
				}
				if a.status != http.StatusUnauthorized || !strings.HasPrefix(a.header.Get("WWW-Authenticate"), "Basic ") {
					t.Errorf("%s %s (pattern %q, %s): %d %q, want 401 with WWW-Authenticate", m, target, pattern, name, a.status, a.body)
				}
			}
			if a := s.do(t, admin, m, target, nil); a.status == http.StatusUnauthorized || a.status == http.StatusForbidden {
				t.Errorf("%s %s as admin: %d %s", m, target, a.status, a.body)
			}
		}
	}
	t.Logf("%d unauthenticated requests over %d patterns", requests, len(patterns))
}
