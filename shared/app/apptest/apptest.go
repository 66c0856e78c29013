// Package apptest runs the whole tuningbox handler, every endpoint group, over
// a fresh embedded store for tests of the wiring, the CLI and the policy.
package apptest

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// Stack is the handler of every group and what it was built from.
type Stack struct {
	Handler http.Handler
	Backend store.Backend
	Config  app.Config
}

// New builds the handler over an embedded store in a temporary directory,
// with admin/password as the bootstrap administrator, logging to logger.
func New(t testing.TB, admin, password string, logger *slog.Logger) *Stack {
	t.Helper()
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = admin, password
	h, err := app.NewHandler(b, cfg, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &Stack{Handler: h, Backend: b, Config: cfg}
}

// Server serves New's handler (logs discarded) on a loopback test server and returns its URL.
func Server(t testing.TB, admin, password string) string {
	t.Helper()
	srv := httptest.NewServer(New(t, admin, password, slog.New(slog.DiscardHandler)).Handler)
	t.Cleanup(srv.Close)
	return srv.URL
}
