package app_test

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/core"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestStoreGCRoute: POST /api/v1/store/gc sweeps and answers what it found;
// a bad min_age is a 400, and only admins may run it (authapi's policy, walked
// for every route by authapi's route-walk test).
func TestStoreGCRoute(t *testing.T) {
	c := newClient(t)
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role"]}`, http.StatusCreated, "")
	c.do("PUT", "/api/v1/config/environments/1/role/a/resources/astute/values", `{"a":1}`, http.StatusNoContent, "")
	c.do("POST", "/api/v1/store/gc?min_age=0s", "", http.StatusOK, `{"referenced":1,"unreferenced":0,"removed":0}`)
	c.do("POST", "/api/v1/store/gc", "", http.StatusOK, `"referenced":1`)
	c.wantError("POST", "/api/v1/store/gc?min_age=soon", "", http.StatusBadRequest, "min_age")
	c.wantError("POST", "/api/v1/store/gc?age=1h", "", http.StatusBadRequest, "unknown query parameter")
}

// TestSweepAtStartUp: the periodic sweep's first run is at once, not one
// interval after start-up, so orphans of a previous short run are collected;
// it deletes the audit records older than the retention too.
func TestSweepAtStartUp(t *testing.T) { synctest.Test(t, testSweepAtStartUp) }

func testSweepAtStartUp(t *testing.T) {
	b := mem.New()
	const retention = 90 * 24 * time.Hour
	for _, age := range []time.Duration{retention + time.Hour, retention - time.Hour} {
		written := audit.New(b.Index, func() time.Time { return time.Now().Add(-age) })
		if _, err := written.Append(t.Context(), audit.Record{Method: "POST", Path: "/api/v1/nodes", Status: 201}); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.CollectGarbageEvery(ctx, b, time.Hour, retention, slog.New(slog.NewJSONHandler(&logs, nil)))
	}()
	synctest.Wait() // the first sweep is done and the next waits for its interval
	if !strings.Contains(logs.String(), `"msg":"blob garbage collection"`) || !strings.Contains(logs.String(), `"msg":"audit records expired","deleted":1`) {
		t.Fatalf("no sweep at start-up (interval 1 h); log: %s", logs.String())
	}
	cancel()
	<-done
	left, err := audit.New(b.Index, nil).List(t.Context(), audit.Query{})
	if err != nil || len(left) != 1 || time.Since(left[0].Time) > retention {
		t.Fatalf("audit records left: %+v, %v; want the one within the retention", left, err)
	}
}

// panickyBlobs panics when listed, as a broken store client might.
type panickyBlobs struct{ store.Blobs }

func (panickyBlobs) List(context.Context, func(string, time.Time) error) error {
	panic("the store's client broke")
}

// TestBackgroundSweepSurvivesPanic: a panic in a background sweep is logged
// and the sweeps go on, instead of ending the server.
func TestBackgroundSweepSurvivesPanic(t *testing.T) {
	synctest.Test(t, testBackgroundSweepSurvivesPanic)
}

func testBackgroundSweepSurvivesPanic(t *testing.T) {
	b := mem.New()
	b.Blobs = panickyBlobs{b.Blobs}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.CollectGarbageEvery(ctx, b, 10*time.Millisecond, 0, slog.New(slog.NewJSONHandler(&logs, nil)))
	}()
	time.Sleep(20 * time.Millisecond) // two intervals
	synctest.Wait()
	if strings.Count(logs.String(), `"msg":"blob garbage collection panicked"`) < 2 {
		t.Fatalf("fewer than two recovered sweeps in two intervals; log: %s", logs.String())
	}
	cancel()
	<-done
}

// panickyIndex panics when queried, as a broken store client might.
type panickyIndex struct{ store.Index }

func (panickyIndex) Query(context.Context, store.Query) ([]store.Item, error) {
	panic("the store's client broke")
}

// TestBackgroundDeadlineCheckSurvivesPanic: a panic in a background check of
// the runs' deadlines is logged and the checks go on, instead of ending the server.
func TestBackgroundDeadlineCheckSurvivesPanic(t *testing.T) {
	synctest.Test(t, testBackgroundDeadlineCheckSurvivesPanic)
}

func testBackgroundDeadlineCheckSurvivesPanic(t *testing.T) {
	b := mem.New()
	b.Index = panickyIndex{b.Index}
	var logs syncBuffer
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		app.EnforceRunDeadlinesEvery(ctx, b, 10*time.Millisecond, slog.New(slog.NewJSONHandler(&logs, nil)))
	}()
	time.Sleep(20 * time.Millisecond) // two intervals
	synctest.Wait()
	if strings.Count(logs.String(), `"msg":"run deadline check panicked"`) < 2 {
		t.Fatalf("fewer than two recovered checks in two intervals; log: %s", logs.String())
	}
	cancel()
	<-done
}

// The scheduled function's sweep expires audit records as the local server's
// does: on AWS the table's TTL deletes only the records written with an expiry,
// so those written before the retention existed, or under a longer one or none,
// were kept for ever.
func TestLambdaSweepExpiresAudit(t *testing.T) {
	dir := t.TempDir()
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, age := range []time.Duration{audit.DefaultRetention + time.Hour, time.Hour} {
		written := audit.New(b.Index, func() time.Time { return time.Now().Add(-age) }) // no retention: no expiry
		if _, err := written.Append(t.Context(), audit.Record{Method: "POST", Path: "/api/v1/nodes", Status: 201}); err != nil {
			t.Fatal(err)
		}
	}
	b.Close()
	env := map[string]string{"TUNINGBOX_BACKEND": core.BackendEmbedded, "TUNINGBOX_DATA": dir}
	var logs syncBuffer
	sweep, err := core.LambdaGC(t.Context(), func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	// An invocation with less than a minute left expires nothing and ends
	// well; the next one expires what it left.
	short, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := sweep(short); err != nil || !strings.Contains(logs.String(), `"msg":"audit record expiry stopped at its deadline; the next sweep goes on","deleted":0`) {
		t.Fatalf("a sweep with 30 s left: %v; log: %s", err, logs.String())
	}
	if err := sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), `"msg":"audit records expired","deleted":1`) {
		t.Errorf("the scheduled sweep expired no audit record; log: %s", logs.String())
	}
}
