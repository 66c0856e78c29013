package authapi_test

import (
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// registeredPatterns lists every pattern registered on mux. net/http offers no
// API for that, so this reads the mux's routing index (index.segments holds
// every pattern not ending in a multi-segment wildcard, index.multis the
// others) by reflection, read-only. Should a Go release rename those fields,
// the test stops here loudly instead of walking nothing.
func registeredPatterns(t *testing.T, mux *http.ServeMux) []string {
	t.Helper()
	index := reflect.ValueOf(mux).Elem().FieldByName("index")
	if !index.IsValid() {
		t.Fatal("http.ServeMux has no routing index field any more: update registeredPatterns")
	}
	segments, multis := index.FieldByName("segments"), index.FieldByName("multis")
	if segments.Kind() != reflect.Map || multis.Kind() != reflect.Slice {
		t.Fatal("http.ServeMux's routing index changed shape: update registeredPatterns")
	}
	seen := map[string]bool{}
	add := func(list reflect.Value) {
		for i := range list.Len() {
			str := list.Index(i).Elem().FieldByName("str")
			if str.Kind() != reflect.String {
				t.Fatal("http.ServeMux's patterns changed shape: update registeredPatterns")
			}
			seen[str.String()] = true
		}
	}
	for it := segments.MapRange(); it.Next(); {
		add(it.Value())
	}
	add(multis)
	patterns := make([]string, 0, len(seen))
	for p := range seen {
		patterns = append(patterns, p)
	}
	slices.Sort(patterns)
	return patterns
}

// concrete turns a pattern path into a request path: every wildcard gets a value.
func concrete(path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		switch {
		case s == "{$}":
			segs[i] = ""
		case strings.HasSuffix(s, "...}"):
			segs[i] = "a/b"
		case strings.HasPrefix(s, "{"):
			segs[i] = "1"
		}
	}
	return strings.Join(segs, "/")
}

// TestEveryRouteNeedsCredentials walks every route of every endpoint group as
// the server mounts them, so a route added later is covered without touching
// this test: without credentials, with a wrong password and with an unknown
// token each must answer 401 with a challenge (or 429 with Retry-After once
// the failed logins are throttled), the documented public route
// excepted; with the admin's credentials none may answer 401 or 403.
func TestEveryRouteNeedsCredentials(t *testing.T) {
	s := newStack(t)
	mux, err := app.Routes(s.backend, s.cfg)
	if err != nil {
		t.Fatal(err)
	}
	patterns := registeredPatterns(t, mux)
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
		target := concrete(path)
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
