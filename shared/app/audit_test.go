package app_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// failingAuditIndex fails, while armed, every write batch that stores an audit
// record, as a crash at that moment would: nothing of the batch is applied.
type failingAuditIndex struct {
	store.Index
	armed atomic.Bool
}

func (f *failingAuditIndex) Write(ctx context.Context, ops ...store.Op) error {
	for _, op := range ops {
		if f.armed.Load() && strings.HasPrefix(op.Key.Partition, "audit#") {
			return errors.New("injected failure of the audited write")
		}
	}
	return f.Index.Write(ctx, ops...)
}

// TestAuditRecordInTheVersionsWrite: a document version and its audit record
// are one atomic write: when that write fails, neither exists; when it
// succeeds, the record names the version.
func TestAuditRecordInTheVersionsWrite(t *testing.T) {
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	idx := &failingAuditIndex{Index: b.Index}
	b.Index = idx
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = "admin", "wiring-test-password"
	h, err := app.NewHandler(b, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c := &client{t: t, url: srv.URL, api: login(t, srv.URL, "admin", "wiring-test-password")}
	c.do("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`, http.StatusCreated, "")
	c.do("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["role"]}`, http.StatusCreated, "")
	doc := "/api/v1/config/environments/1/role/compute/resources/astute/values"

	idx.armed.Store(true)
	c.do("PUT", doc, `{"a":1}`, http.StatusInternalServerError, "")
	idx.armed.Store(false)
	c.do("GET", doc+"/versions", "", http.StatusOK, "[]")
	if body := c.do("GET", "/api/v1/audit?environment=1", "", http.StatusOK, ""); strings.Contains(body, "role/compute") {
		t.Fatalf("an audit record of the failed write: %s", body)
	}

	c.do("PUT", doc, `{"a":2}`, http.StatusNoContent, "")
	c.do("GET", "/api/v1/audit?environment=1", "", http.StatusOK, `"path":"`+doc+`","status":204,"environment":"1","version":1`)
}
