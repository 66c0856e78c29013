package httpapi_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// TestRequestID: every answer names its request in X-Openstack-Request-Id,
// errors of the middleware and a panic included; the handler and the log
// line see the same id; a gateway's id is taken as it is, else a new
// OpenStack-style one is made per request.
func TestRequestID(t *testing.T) {
	var logs bytes.Buffer
	var seen string
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = httpapi.RequestID(r.Context())
		switch r.URL.Path {
		case "/panic":
			panic("boom")
		case "/denied":
			httpapi.Error(w, r, errs.New(errs.Forbidden, "no"))
		default:
			httpapi.NoContent(w)
		}
	}), httpapi.Options{Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	serve := func(r *http.Request) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	generated := regexp.MustCompile(`^req-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

	ids := map[string]bool{}
	for _, tc := range []struct {
		name   string
		req    *http.Request
		status int
	}{
		{"ok", httptest.NewRequest("GET", "/ok", nil), http.StatusNoContent},
		{"handler error", httptest.NewRequest("GET", "/denied", nil), http.StatusForbidden},
		{"panic", httptest.NewRequest("GET", "/panic", nil), http.StatusInternalServerError},
		{"bad path", httptest.NewRequest("GET", "/a/%2e%2e/b", nil), http.StatusBadRequest},
		{"bad microversion", func() *http.Request {
			r := httptest.NewRequest("GET", "/ok", nil)
			r.Header.Set("OpenStack-API-Version", "config 9.9")
			return r
		}(), http.StatusNotAcceptable},
	} {
		logs.Reset()
		w := serve(tc.req)
		id := w.Header().Get(httpapi.RequestIDHeader)
		if w.Code != tc.status || !generated.MatchString(id) || ids[id] {
			t.Errorf("%s: %d, request id %q (new and of the form req-<uuid4>?), want %d", tc.name, w.Code, id, tc.status)
		}
		ids[id] = true
		if !strings.Contains(logs.String(), `"request_id":"`+id+`"`) {
			t.Errorf("%s: the log line does not name request %s: %s", tc.name, id, logs.String())
		}
	}
	if !ids[seen] {
		t.Errorf("the handler saw request id %q, answered none of %v", seen, ids)
	}

	const gateway = "JKJaXmPLvHcESHA="
	r := httptest.NewRequest("GET", "/ok", nil)
	w := serve(r.WithContext(httpapi.WithUpstreamRequestID(r.Context(), gateway)))
	if got := w.Header().Get(httpapi.RequestIDHeader); got != gateway || seen != gateway {
		t.Errorf("behind a gateway: answered %q, handler saw %q, want the gateway's %q", got, seen, gateway)
	}
}
