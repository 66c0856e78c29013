package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// TestMuxAnswersJSON: a path no route matches (404) and a method no route of
// the path takes (405, with Allow) get the JSON error body every route answers with.
func TestMuxAnswersJSON(t *testing.T) {
	c := newClient(t)
	c.wantError("GET", "/api/v1/no/such/route", "", http.StatusNotFound, "no route")
	c.wantError("DELETE", "/api/v1/config/components", "", http.StatusMethodNotAllowed, "not allowed")
}

// TestInvalidUTF8Refused: bytes that are not UTF-8 inside a JSON string are a
// 400 naming the offset, not silently replaced by U+FFFD.
func TestInvalidUTF8Refused(t *testing.T) {
	c := newClient(t)
	c.wantError("POST", "/api/v1/config/components", "{\"name\":\"ab\xff\xfecd\"}", http.StatusBadRequest, "not valid UTF-8 (at byte 11)")
	// An escaped lone surrogate is no character either (it was stored as U+FFFD).
	c.wantError("POST", "/api/v1/config/components", `{"name":"ab\ud800"}`, http.StatusBadRequest, "not valid UTF-8 (at byte 11: ")
	c.do("GET", "/api/v1/config/components", "", http.StatusOK, "[]")
}

// TestBodyNestingBound: a JSON body nested deeper than the ConfigDB keeps its
// documents is a 400 before any handler decodes it; one level less is read.
func TestBodyNestingBound(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "astute")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":[]}`, http.StatusCreated, "")
	const doc = "/api/v1/config/environments/1/resources/astute/values"
	nested := func(levels int) string { // an object holding arrays: levels in all
		return `{"x":` + strings.Repeat("[", levels-1) + strings.Repeat("]", levels-1) + "}"
	}
	c.wantError("PUT", doc, nested(configdb.MaxDocumentDepth+1), http.StatusBadRequest,
		fmt.Sprintf("nests deeper than %d levels", configdb.MaxDocumentDepth))
	c.do("GET", doc, "", http.StatusOK, "{}")
	c.do("PUT", doc, nested(configdb.MaxDocumentDepth), http.StatusNoContent, "")
	c.do("GET", doc, "", http.StatusOK, `"x"`)
}

// wantError checks the status, that the body is the JSON error body with that
// code, and that its message contains want; a 405 must name the allowed methods.
func (c *client) wantError(method, path, body string, status int, want string) {
	c.t.Helper()
	got := c.do(method, path, body, status, want)
	var e httpapi.ErrorBody
	if err := json.Unmarshal([]byte(got), &e); err != nil || e.Error.Code != status {
		c.t.Fatalf("%s %s: body %s is not the JSON error body of %d", method, path, got, status)
	}
}

// TestOneJSONLogFormat: every line the handler logs, a client cancellation included, is one JSON object from the injected logger;
// the cancellation is logged as such (499), not as a failure.
func TestOneJSONLogFormat(t *testing.T) {
	var buf syncBuffer
	stack := apptest.New(t, "admin", "log-test-password", slog.New(slog.NewJSONHandler(&buf, nil)))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	req := httptest.NewRequestWithContext(ctx, "GET", "/api/v1/config/environments/1/resources/x/values", nil)
	req.SetBasicAuth("admin", "log-test-password")
	stack.Handler.ServeHTTP(httptest.NewRecorder(), req)

	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var sawCancel bool
	for _, line := range lines {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if rec["msg"] == "request cancelled by the client" {
			sawCancel = true
		}
		if rec["msg"] == "request" && rec["status"] != float64(httpapi.StatusClientClosedRequest) {
			t.Errorf("request line of the cancelled request: %s", line)
		}
		if rec["msg"] == "request failed" {
			t.Errorf("a cancelled request is logged as a failure: %s", line)
		}
	}
	if !sawCancel {
		t.Fatalf("no cancellation line in %q", lines)
	}
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
