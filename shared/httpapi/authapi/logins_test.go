package authapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// TestFailedLoginsAreLogged: user, remote address and a running count, never the password.
func TestFailedLoginsAreLogged(t *testing.T) {
	s := newStack(t)
	for i := range 3 {
		s.must(t, basicAuth("mallory", "guess-"+string(rune('a'+i))), "GET", "/api/v1/config/components", nil, http.StatusUnauthorized)
	}
	s.must(t, bearer("tbx_guessedtoken"), "GET", "/api/v1/config/components", nil, http.StatusUnauthorized)
	var failures []map[string]any
	for line := range strings.Lines(s.logs.String()) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == "login failed" {
			failures = append(failures, rec)
		}
	}
	if len(failures) != 4 {
		t.Fatalf("%d failed logins logged: %s", len(failures), s.logs.String())
	}
	if f := failures[2]; f["user"] != "mallory" || f["remote"] != "192.0.2.10:4242" || f["failed_logins_total"] != 3.0 || f["scheme"] != "Basic" {
		t.Fatalf("third failure logged as %v", f)
	}
	if f := failures[3]; f["scheme"] != "Bearer" || f["failed_logins_total"] != 4.0 {
		t.Fatalf("token failure logged as %v", f)
	}
	if strings.Contains(s.logs.String(), "guess-") || strings.Contains(s.logs.String(), "guessedtoken") {
		t.Fatal("a secret reached the log")
	}
}
