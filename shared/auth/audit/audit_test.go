package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func TestAppendAndList(t *testing.T) {
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
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
