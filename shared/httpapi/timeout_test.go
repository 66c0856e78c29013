package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

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
