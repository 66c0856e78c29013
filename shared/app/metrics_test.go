package app_test

import (
	"net/http"
	"strings"
	"testing"
)

// GET /metrics is Prometheus text for admins and observers: the requests the
// handler answered by route, method and code, their durations, the caches,
// the store's calls by kind and the waiters; nodes and anonymous callers may not read it.
func TestMetricsServePrometheusText(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "fuel")
	c.do("GET", "/api/v1/config/components", "", http.StatusOK, "fuel")
	c.do("GET", "/api/v1/config/components", "", http.StatusOK, "fuel")
	c.do("GET", "/api/v1/config/components/nothing", "", http.StatusNotFound, "")
	c.do("POST", "/api/v1/users", `{"name":"watcher","password":"watcher-password","role":"observer"}`, http.StatusCreated, "watcher")

	observer := login(t, c.url, "watcher", "watcher-password")
	status, text := c.send(observer, "GET", "/metrics", "")
	if status != http.StatusOK {
		t.Fatalf("GET /metrics as an observer = %d %s", status, text)
	}
	for _, want := range []string{
		`tuningbox_requests_total{code="200",method="GET",route="config.components.list"} 2`,
		`tuningbox_requests_total{code="201",method="POST",route="config.components.create"} 1`,
		`tuningbox_requests_total{code="404",method="GET",route="config.components.get"} 1`,
		`tuningbox_request_duration_seconds_count{route="config.components.list"} 2`,
		`tuningbox_cache_hits_total{cache="configdb.docs"}`,
		`tuningbox_cache_misses_total{cache="routes.matches"}`,
		`tuningbox_store_calls_total{kind="index_write"}`,
		`tuningbox_store_conditional_check_failures_total 0`,
		`tuningbox_watchers_waiting{kind="document"} 0`,
		`tuningbox_watchers_waiting{kind="claim"} 0`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("GET /metrics lacks %s", want)
		}
	}
	if status, _ := c.send(login(t, c.url, "nobody", "wrong-password"), "GET", "/metrics", ""); status != http.StatusUnauthorized {
		t.Errorf("GET /metrics with wrong credentials = %d, want 401", status)
	}
}
