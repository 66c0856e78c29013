package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
)

// TestTimeoutBoundsWrites: a request that may write runs under Options.Timeout
// (its retries stop there and no write starts after it); a read has no
// deadline of the middleware's.
func TestTimeoutBoundsWrites(t *testing.T) {
	const timeout = 30 * time.Second
	var deadline time.Time
	var bounded bool
	h := httpapi.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		deadline, bounded = r.Context().Deadline()
		httpapi.NoContent(w)
	}), httpapi.Options{Timeout: timeout})
	for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"} {
		start := time.Now()
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(method, "/x", nil))
		if writes := !httpapi.IsSafeMethod(method); bounded != writes {
			t.Errorf("%s: deadline %v, want one: %v", method, bounded, writes)
		}
		if bounded && (deadline.Before(start.Add(timeout)) || deadline.After(time.Now().Add(timeout))) {
			t.Errorf("%s: deadline %v, want %v after the request came", method, deadline.Sub(start), timeout)
		}
	}
}

// TestBudgetNamedIn503: a request past a plain deadline gets the generic 503;
// one that ran out of a budget of the domain (errs.Unavailable) gets 503 with
// the message naming it, never a 400 quoting "context deadline exceeded".
func TestBudgetNamedIn503(t *testing.T) {
	for _, c := range []struct {
		err     error
		message string
	}{
		{context.DeadlineExceeded, "the request did not finish in time; read back what it changes before repeating it"},
		{errs.Wrap(errs.Unavailable, context.DeadlineExceeded, "planning ran out of its time budget (30s)"), "planning ran out of its time budget (30s)"},
	} {
		rec := httptest.NewRecorder()
		httpapi.Error(rec, httptest.NewRequest("GET", "/x", nil), c.err)
		var body httpapi.ErrorBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusServiceUnavailable || body.Error.Message != c.message {
			t.Errorf("%v: %d %s, want 503 %q", c.err, rec.Code, rec.Body, c.message)
		}
	}
}
