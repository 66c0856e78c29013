package app

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/store"
)

// services holds one instance of every domain service over a backend.
type services struct {
	config *configdb.Service
}

func newServices(b store.Backend) *services {
	return &services{
		config: configdb.NewService(b.Index, b.Blobs),
	}
}

// groupRoutes registers each endpoint group's routes. A group is what one
// Lambda function serves; the local server mounts them all on one mux.
var groupRoutes = map[string]func(mux *http.ServeMux, s *services){
	"config": func(mux *http.ServeMux, s *services) {
		mux.HandleFunc("GET /api/v1/config/{$}", httpapi.ServeVersions)
		configapi.Register(mux, s.config)
	},
}
