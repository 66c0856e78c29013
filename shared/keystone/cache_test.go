package keystone

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth"
)

// The cached answers are bounded in bytes (Config.CacheBytes): the longer
// the principals' names, the fewer answers are kept; a token still cached is
// answered without asking Keystone.
func TestAnswersCountBytes(t *testing.T) {
	const budget = 64 << 10
	expires := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	var validations atomic.Int64
	keystone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			w.Header().Set("X-Subject-Token", "service-token")
			w.WriteHeader(http.StatusCreated)
			fmt.Fprintf(w, `{"token":{"expires_at":%q}}`, expires)
			return
		}
		validations.Add(1)
		// The subject token names its user: user=NAME.
		user := strings.TrimPrefix(r.Header.Get("X-Subject-Token"), "user=")
		fmt.Fprintf(w, `{"token":{"expires_at":%q,"user":{"name":%q},"project":{"id":"p"},"roles":[{"name":"admin"}]}}`, expires, user)
	}))
	defer keystone.Close()
	kept := func(nameBytes int) int {
		v, err := New(Config{URL: keystone.URL, User: "svc", Password: "pw", ServiceProject: "service", Project: "p",
			Roles: map[string]auth.Role{"admin": auth.Admin}, CacheBound: time.Minute, CacheBytes: budget}, keystone.Client(), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		var last string
		for i := range 1000 {
			last = fmt.Sprintf("user=%0*d", nameBytes, i)
			if _, err := v.Verify(context.Background(), last); err != nil {
				t.Fatal(err)
			}
		}
		if cost := v.answers.Cost(); cost > budget {
			t.Fatalf("answers take %d bytes, over %d", cost, budget)
		}
		before := validations.Load()
		if p, err := v.Verify(context.Background(), last); err != nil || p.User != "keystone:"+strings.TrimPrefix(last, "user=") {
			t.Fatalf("the latest token again: %+v, %v", p, err)
		}
		if validations.Load() != before {
			t.Error("the latest token's answer was forgotten: Keystone was asked again")
		}
		return v.answers.Len()
	}
	short, long := kept(8), kept(1000)
	if short >= 1000 || long == 0 || 3*long > short {
		t.Errorf("%d answers of 8-byte names and %d of 1,000-byte names kept: want a bound in bytes", short, long)
	}
}
