package app

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/templates"
)

// services holds one instance of every domain service over a backend.
type services struct {
	config    *configdb.Service
	nodes     *nodes.Service
	templates *templates.Service
	// guard authenticates, authorizes and audits every request (shared/httpapi/authapi).
	guard *authapi.Middleware
}

func newServices(b store.Backend, cfg Config, logger *slog.Logger) (*services, error) {
	config := configdb.NewService(b.Index, b.Blobs)
	s := &services{
		config:    config,
		nodes:     nodes.NewService(b.Index, configEnvironments{config}),
		templates: templates.NewService(b.Index),
	}
	var err error
	s.guard, err = newGuard(b.Index, s, cfg, logger)
	return s, err
}

// configEnvironments lets the node registry resolve ConfigDB environments.
type configEnvironments struct{ db *configdb.Service }

func (c configEnvironments) Environment(ctx context.Context, ref string) (nodes.Environment, error) {
	env, err := c.db.GetEnvironment(ctx, ref)
	if err != nil {
		return nodes.Environment{}, err
	}
	return nodes.Environment{ID: env.ID, UUID: env.UUID}, nil
}

// groupRoutes registers each endpoint group's routes. A group is what one
// Lambda function serves; the local server mounts them all on one mux.
var groupRoutes = map[string]func(mux *http.ServeMux, s *services){
	"config": func(mux *http.ServeMux, s *services) {
		mux.HandleFunc("GET /api/v1/config/{$}", httpapi.ServeVersions)
		configapi.Register(mux, s.config)
	},
	// Deploy templates, default deploy steps and the node registry.
	"templates": func(mux *http.ServeMux, s *services) {
		nodesapi.Register(mux, s.nodes)
		templatesapi.Register(mux, s.templates, s.nodes)
	},
	// Users, API tokens and the audit log.
	"auth": func(mux *http.ServeMux, s *services) { s.guard.Register(mux) },
}
