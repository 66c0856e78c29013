// Package storeapi serves store maintenance, admins only (authapi's policy):
// POST /api/v1/store/gc runs a blob garbage collection sweep
// (store.CollectGarbage); GET /api/v1/store/backup streams a consistent copy
// of the embedded store (store.Backend.Backup); an environment's export
// streams from GET /api/v1/store/environments/{env}/export and POST
// /api/v1/store/environments/import imports one (shared/envexport), on
// every backend.
package storeapi

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the store routes over backend b, whose services are svc, to router.
func Register(router *routes.Router, b store.Backend, svc envexport.Services) {
	router.Mount(routes.Handlers{
		"store.gc": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
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
		}),
		"store.backup": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
			if b.Backup == nil {
				return 0, nil, errs.NotFoundf("this store has no backup route: on AWS, DynamoDB point-in-time recovery and S3 versioning are the backup (docs/operations.md)")
			}
			return http.StatusOK, stream{ContentType: "application/octet-stream", Write: func(ctx context.Context, w io.Writer) error {
				_, err := b.Backup(ctx, w)
				return err
			}}, nil
		}),
		"store.environments.export": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
			h, docs, err := envexport.Source(r.Context(), svc, r.PathValue("env"), time.Now())
			if err != nil {
				return 0, nil, err
			}
			return http.StatusOK, stream{ContentType: envexport.ContentType, Write: func(_ context.Context, w io.Writer) error {
				_, err := envexport.Write(w, h, docs)
				return err
			}}, nil
		}),
		"store.environments.import": httpapi.Serve(func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
			env, counts, err := envexport.Import(r.Context(), r.Body, svc)
			if err != nil {
				return 0, nil, tooLarge(err)
			}
			return http.StatusCreated, wire.EnvironmentImport{ID: env.ID, UUID: env.UUID, Documents: counts.Documents, Versions: counts.Versions}, nil
		}),
	})
}

// stream is an answer written as it is produced, too large to hold: once
// its status is sent a failure can only cut it short, so the receiver must
// check what it got (a backup's metadata records its length; an export ends
// with a trailer).
type stream struct {
	ContentType string
	Write       func(ctx context.Context, w io.Writer) error
}

// WriteAnswer implements httpapi.Writer.
func (s stream) WriteAnswer(w http.ResponseWriter, r *http.Request, status int) {
	w.Header().Set("Content-Type", s.ContentType)
	w.WriteHeader(status)
	if err := s.Write(r.Context(), w); err != nil {
		// Abort the connection: the receiver sees a broken answer, not a short one.
		panic(http.ErrAbortHandler)
	}
}

// tooLarge answers an import cut short by the server's body cap with a 413
// that says what to do, rather than as a damaged file.
func tooLarge(err error) error {
	var capped *http.MaxBytesError
	if errors.As(err, &capped) {
		return errs.New(errs.TooLarge, "the export is larger than this server takes (%d bytes, TUNINGBOX_MAX_BODY): send it gzip-compressed (tuningbox env import does), or raise the cap", capped.Limit)
	}
	return err
}
