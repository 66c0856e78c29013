package app

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// An invocation's EMF lines carry its request (route, method, code) and, once
// a minute, what the counters did since they were last written; an
// invocation with nothing to write writes nothing.
func TestFlushEMFWritesWhatAnInvocationChanged(t *testing.T) {
	m := newMetrics(nil)
	m.EnableEMF("tuningbox-config")
	calls := m.registry.Counter(storeCalls, storeCallsHelp, []string{"kind"}, "index_batch_get")
	gets := m.registry.Counter(storeCalls, storeCallsHelp, []string{"kind"}, "index_get")
	start := time.UnixMilli(1700000000000)
	flush := func(at time.Duration) []map[string]any {
		t.Helper()
		var buf bytes.Buffer
		if err := m.FlushEMF(&buf, start.Add(at)); err != nil {
			t.Fatal(err)
		}
		var lines []map[string]any
		for line := range strings.Lines(buf.String()) {
			var doc map[string]any
			if err := json.Unmarshal([]byte(line), &doc); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			lines = append(lines, doc)
		}
		return lines
	}
	flush(0) // the registrations' starting values

	r := routes.WithMatch(httptest.NewRequest("GET", "/api/v1/config/components", nil))
	calls.Add(2)
	gets.Inc()
	m.observe(r, 200, 3*time.Millisecond)
	if lines := flush(time.Second); len(lines) != 1 || lines[0][storeCalls] != nil || lines[0][RequestsTotal] != 1.0 {
		t.Fatalf("within the minute: %v, want the request's line only", lines)
	}
	m.observe(r, 200, 3*time.Millisecond)
	lines := flush(time.Minute)
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2 (two store kinds changed): %v", len(lines), lines)
	}
	first := lines[0]
	want := map[string]any{"function": "tuningbox-config", "route": "config.components.list", "method": "GET", "code": "200",
		RequestsTotal: 1.0, RequestDuration: 0.003, "kind": "index_batch_get", storeCalls: 2.0}
	for k, v := range want {
		if first[k] != v {
			t.Errorf("first line's %s = %v, want %v", k, first[k], v)
		}
	}
	meta := first["_aws"].(map[string]any)
	if meta["Timestamp"] != 1700000060000.0 {
		t.Errorf("Timestamp = %v", meta["Timestamp"])
	}
	directives := meta["CloudWatchMetrics"].([]any)
	if len(directives) != 3 {
		t.Fatalf("%d metric directives, want 3: %v", len(directives), directives)
	}
	for i, want := range []string{
		`{"Dimensions":[["function","route","method","code"]],"Metrics":[{"Name":"tuningbox_requests_total","Unit":"Count"}],"Namespace":"tuningbox"}`,
		`{"Dimensions":[["function","route"]],"Metrics":[{"Name":"tuningbox_request_duration_seconds","Unit":"Seconds"}],"Namespace":"tuningbox"}`,
		`{"Dimensions":[["function","kind"]],"Metrics":[{"Name":"tuningbox_store_calls_total","Unit":"Count"}],"Namespace":"tuningbox"}`,
	} {
		if !equalJSON(directives[i], want) {
			t.Errorf("directive %d = %v, want %s", i, directives[i], want)
		}
	}
	if second := lines[1]; second["kind"] != "index_get" || second[storeCalls] != 1.0 {
		t.Errorf("second line %v", second)
	}
	if lines := flush(2 * time.Minute); len(lines) != 0 {
		t.Errorf("a flush with nothing changed wrote %v", lines)
	}
}

func equalJSON(v any, want string) bool {
	b, _ := json.Marshal(v)
	return string(b) == want
}
