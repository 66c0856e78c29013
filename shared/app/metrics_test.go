package app_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/schema"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store/mem"
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

// A handler without a Scraper (a Lambda function's) answers GET /metrics
// with a 404, its metrics being EMF lines; and the config group, which
// writes documents, does not start without a JSON Schema compiler.
func TestHandlerWithoutOptions(t *testing.T) {
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = "admin", "options-test-password"
	if _, err := app.NewHandler(mem.New(), cfg, slog.New(slog.DiscardHandler), app.Options{}, routes.GroupConfig); err == nil {
		t.Fatal("the config group started without a JSON Schema compiler")
	}
	h, err := app.NewHandler(mem.New(), cfg, slog.New(slog.DiscardHandler), app.Options{Schemas: configdb.WithSchemas(schema.Compile)}, routes.GroupConfig)
	if err != nil {
		t.Fatal(err)
	}
	r := httptest.NewRequest("GET", routes.MetricsPath, nil)
	r.SetBasicAuth("admin", "options-test-password")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "EMF") {
		t.Fatalf("GET /metrics without a scraper = %d %s, want a 404 that says why", w.Code, w.Body)
	}
}
