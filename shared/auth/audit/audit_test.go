package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func TestAppendAndList(t *testing.T) {
	b := mem.New()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	log := audit.New(b.Index, func() time.Time { now = now.Add(time.Second); return now })
	ctx := context.Background()
	writes := []audit.Record{
		{Principal: "admin", Role: "admin", Method: "POST", Path: "/api/v1/config/components", Status: 201},
		{Principal: "admin", Role: "admin", Method: "PUT", Path: "/api/v1/config/environments/1/resources/astute/values", Status: 200, Environment: "1", Version: 1},
		{Principal: "ops", Role: "admin", TokenID: "0123456789abcdef", Method: "PUT", Path: "/api/v1/config/environments/2/resources/astute/values", Status: 200, Environment: "2", Version: 1},
		{Principal: "admin", Role: "admin", Method: "PATCH", Path: "/api/v1/config/environments/1/resources/astute/values/keys/set", Status: 200, Environment: "1", Version: 2},
	}
	for _, w := range writes {
		if _, err := log.Append(ctx, w); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		q     audit.Query
		paths []string
	}{
		{"all newest first", audit.Query{}, []string{writes[3].Path, writes[2].Path, writes[1].Path, writes[0].Path}},
		{"environment 1", audit.Query{Environment: "1"}, []string{writes[3].Path, writes[1].Path}},
		{"environment 2", audit.Query{Environment: "2"}, []string{writes[2].Path}},
		{"unknown environment", audit.Query{Environment: "3"}, nil},
		{"limit", audit.Query{Limit: 1}, []string{writes[3].Path}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := log.List(ctx, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.paths) {
				t.Fatalf("got %d records, want %d: %+v", len(got), len(tt.paths), got)
			}
			for i, r := range got {
				if r.Path != tt.paths[i] || r.ID == "" || r.Time.IsZero() {
					t.Errorf("record %d: %+v, want path %s", i, r, tt.paths[i])
				}
			}
		})
	}
	page1, _ := log.List(ctx, audit.Query{Limit: 2})
	page2, err := log.List(ctx, audit.Query{Limit: 2, Before: page1[1].ID})
	if err != nil || len(page2) != 2 || page2[0].Path != writes[1].Path || page2[1].Version != 0 {
		t.Fatalf("second page: %+v, %v", page2, err)
	}
	if got := page1[0]; got.Principal != "admin" || got.Version != 2 || got.Environment != "1" || got.Status != 200 {
		t.Fatalf("newest record: %+v", got)
	}
	for _, limit := range []int{-1, audit.MaxLimit + 1} {
		if _, err := log.List(ctx, audit.Query{Limit: limit}); !errs.Is(err, errs.Invalid) {
			t.Errorf("limit %d: %v", limit, err)
		}
	}
}

// TestExpire: with a retention, each record is written with its expiry (for
// DynamoDB's TTL) and Expire deletes the records older than the retention,
// under both partitions, over several batches; without one it deletes nothing.
func TestExpire(t *testing.T) {
	b := mem.New()
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	clock := func() time.Time { return now }
	const retention = 24 * time.Hour
	log := audit.New(b.Index, clock, audit.WithRetention(retention))

	_, ops, err := log.Ops(audit.Record{Method: "POST", Path: "/api/v1/nodes", Environment: "1"})
	if err != nil || len(ops) != 2 || !ops[0].Expires.Equal(now.Add(retention)) || !ops[1].Expires.Equal(now.Add(retention)) {
		t.Fatalf("Ops = %+v, %v: want both items to expire after the retention", ops, err)
	}
	// 150 old records (more than one batch), every other one under environment 1, then 3 recent ones.
	start := now
	for i := range 150 {
		now = start.Add(time.Duration(i) * time.Second)
		rec := audit.Record{Method: "POST", Path: "/old"}
		if i%2 == 0 {
			rec.Environment = "1"
		}
		if _, err := log.Append(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	now = start.Add(retention + time.Hour)
	for range 3 {
		if _, err := log.Append(ctx, audit.Record{Method: "POST", Path: "/recent", Environment: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := audit.New(b.Index, clock).Expire(ctx); n != 0 || err != nil {
		t.Fatalf("Expire without retention = %d, %v", n, err)
	}
	now = start.Add(retention + 100*time.Second) // the records of seconds 0..99 are past the retention
	if n, err := log.Expire(ctx); n != 100 || err != nil {
		t.Fatalf("Expire = %d, %v; want 100", n, err)
	}
	all, err := log.List(ctx, audit.Query{Limit: audit.MaxLimit})
	if err != nil || len(all) != 53 || !all[len(all)-1].Time.Equal(start.Add(100*time.Second)) {
		t.Fatalf("after expiry: %d records (%v); want the 53 from %v on", len(all), err, start.Add(100*time.Second))
	}
	env, err := log.List(ctx, audit.Query{Environment: "1", Limit: audit.MaxLimit})
	if err != nil || len(env) != 28 { // 25 old ones left of 75, and 3 recent
		t.Fatalf("environment 1 after expiry: %d records, %v; want 28", len(env), err)
	}
	if n, err := log.Expire(ctx); n != 0 || err != nil {
		t.Fatalf("a second Expire = %d, %v; want 0", n, err)
	}
}

// A record past the retention that cannot be read is deleted too: Expire
// stopped at it with an error, so one damaged record kept every later one
// for ever.
func TestExpirePastADamagedRecord(t *testing.T) {
	b := mem.New()
	ctx := context.Background()
	now := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	log := audit.New(b.Index, func() time.Time { return now }, audit.WithRetention(time.Hour))
	damaged := store.Key{Partition: "audit#all", Sort: store.SortID(now.UnixNano()) + "-000000000000"}
	if err := b.Index.Write(ctx, store.Put(damaged, []byte("{not json"))); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Second)
	if _, err := log.Append(ctx, audit.Record{Method: "POST", Path: "/old", Environment: "1"}); err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Hour)
	if n, err := log.Expire(ctx); n != 2 || err != nil {
		t.Errorf("Expire = %d, %v; want the damaged record and the old one deleted", n, err)
	}
	for _, env := range []string{"", "1"} {
		if left, err := log.List(ctx, audit.Query{Environment: env}); err != nil || len(left) != 0 {
			t.Errorf("environment %q: %d records left, %v", env, len(left), err)
		}
	}
}
