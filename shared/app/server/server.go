// Package server builds tuningbox's handler for a process that serves the
// API itself: the local server (tuningbox serve), tuningbox env import, and
// the tools and tests that run it in-process. Beside shared/app, it links
// what the Lambda functions leave out (app.Options): the JSON Schema compiler
// and the Prometheus exporter of GET /metrics.
package server

import (
	"log/slog"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/promexport"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/schema"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Options are every app.Options.
func Options() app.Options {
	return app.Options{Schemas: configdb.WithSchemas(schema.Compile), Scraper: promexport.New}
}

// NewHandler is app.NewHandler with every option: the named endpoint groups
// (all of them when groups is empty) over backend b.
func NewHandler(b store.Backend, cfg app.Config, logger *slog.Logger, groups ...string) (http.Handler, error) {
	return app.NewHandler(b, cfg, logger, Options(), groups...)
}

// EnvironmentServices is app.EnvironmentServices with every option.
func EnvironmentServices(b store.Backend, cfg app.Config) (envexport.Services, error) {
	return app.EnvironmentServices(b, cfg, Options())
}
