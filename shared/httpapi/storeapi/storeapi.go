// Package storeapi serves store maintenance: POST /api/v1/store/gc runs a
// blob garbage collection sweep (store.CollectGarbage). Admins only (authapi's policy).
package storeapi

import (
	"net/http"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the store routes over backend b to router.
func Register(router *routes.Router, b store.Backend) {
	router.Mount(routes.Handlers{"store.gc": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		q := routes.QueryOf(r)
		minAge := store.DefaultGCMinAge
		if s, ok := q.String("min_age"), q.Has("min_age"); ok {
			d, err := time.ParseDuration(s)
			if err != nil || d < 0 {
				return 0, nil, errs.Invalidf("min_age must be a duration such as 30m or 2h, not %q", s)
			}
			minAge = d
		}
		rep, err := store.CollectGarbage(r.Context(), b.Index, b.Blobs, minAge)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, wire.GCReport(rep), nil
	})})
}
