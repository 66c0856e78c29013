package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// OpenBackend opens the storage backend that cfg names; logger receives the
// storage clients' own lines. The handler (NewHandler) puts its blobs behind
// a bounded in-memory cache.
func OpenBackend(ctx context.Context, cfg Config, logger *slog.Logger) (store.Backend, error) {
	var (
		b   store.Backend
		err error
	)
	switch cfg.Backend {
	case BackendEmbedded:
		b, err = bolt.Open(cfg.DataDir)
	case BackendAWS:
		b, err = openAWS(ctx, cfg, logger)
	default:
		err = fmt.Errorf("unknown backend %q", cfg.Backend)
	}
	if err != nil {
		return store.Backend{}, err
	}
	// Before any write: on a new store, every orphan is then collectable.
	if err := store.InitGC(ctx, b.Index, b.Blobs); err != nil {
		if b.Close != nil {
			b.Close()
		}
		return store.Backend{}, fmt.Errorf("start blob garbage collection: %w", err)
	}
	return b, nil
}

// EnvironmentServices returns the services an environment's export reads and
// its import writes over b, built as the server builds them, for `tuningbox
// env import --backend` to import straight into a store, without a request's
// bounds. No request is served: cfg's bootstrap administrator is not
// created and no Keystone is asked.
func EnvironmentServices(b store.Backend, cfg Config) (envexport.Services, error) {
	cfg.AdminUser, cfg.Keystone.URL = "", ""
	svc, err := newServices(b, cfg, nil)
	if err != nil {
		return envexport.Services{}, err
	}
	return svc.environmentServices(), nil
}

// NewHandler builds the HTTP handler serving the named endpoint groups (all of
// them when groups is empty) over backend b, inside the shared middleware.
func NewHandler(b store.Backend, cfg Config, logger *slog.Logger, groups ...string) (http.Handler, error) {
	h, _, err := newHandler(b, cfg, logger, groups...)
	return h, err
}

// newHandler is NewHandler with the handler's metrics (served at GET /metrics).
func newHandler(b store.Backend, cfg Config, logger *slog.Logger, groups ...string) (http.Handler, *Metrics, error) {
	router, svc, err := mount(b, cfg, logger, true, groups...)
	if err != nil {
		return nil, nil, err
	}
	// Every request is authenticated before any route; the router authorizes
	// it at dispatch, by the route it takes, and audits every write (mount).
	// They use one match, from the routes the router keeps.
	authenticate := func(ctx context.Context, r *http.Request) (context.Context, error) {
		return svc.guard.Check(router.MatchContext(ctx, r), r)
	}
	var served http.Handler = router
	if cfg.MaxWait > 0 {
		served = capWait(router, cfg.MaxWait)
	}
	return httpapi.Wrap(served, httpapi.Options{MaxBody: cfg.MaxBody, MaxDepth: configdb.MaxDocumentDepth, Logger: logger,
		Authenticate: authenticate, Observe: svc.metrics.observe, Timeout: httpapi.DefaultTimeout}), svc.metrics, nil
}

// Routes returns the bare routes of the named endpoint groups, without the
// middleware nor the auth policy: the route-walk test lists every mounted
// pattern from it.
func Routes(b store.Backend, cfg Config, groups ...string) (*routes.Router, error) {
	router, _, err := mount(b, cfg, nil, false, groups...)
	return router, err
}

// mount builds the services and the router of groups (all when none); guarded
// routes are behind the auth policy (routes.Guard), bare ones serve anybody.
func mount(b store.Backend, cfg Config, logger *slog.Logger, guarded bool, groups ...string) (*routes.Router, *services, error) {
	for _, g := range groups {
		if _, ok := groupRoutes[g]; !ok {
			return nil, nil, fmt.Errorf("unknown endpoint group %q", g)
		}
	}
	svc, err := newServices(b, cfg, logger)
	if err != nil {
		return nil, nil, err
	}
	router := routes.NewRouter(cfg.cacheShares().routes)
	if guarded {
		router.Use(svc.guard)
	}
	svc.metrics.registry.Cache("routes.matches", router)
	for _, name := range GroupNames() {
		if len(groups) == 0 || slices.Contains(groups, name) {
			groupRoutes[name](router, svc)
		}
	}
	return router, svc, nil
}

// GroupNames lists the endpoint groups in a stable order.
func GroupNames() []string {
	names := make([]string, 0, len(groupRoutes))
	for n := range groupRoutes {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// LambdaHandler is the start-up of every Lambda function: configuration from
// the environment (the aws backend unless TUNINGBOX_BACKEND says otherwise),
// clients built once per cold start, and the handler of the given groups with
// its metrics, kept for FlushEMF after each invocation (the "function"
// dimension is AWS_LAMBDA_FUNCTION_NAME).
func LambdaHandler(ctx context.Context, getenv func(string) string, logger *slog.Logger, groups ...string) (http.Handler, *Metrics, error) {
	b, cfg, err := lambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, nil, err
	}
	h, m, err := newHandler(b, cfg, logger, groups...)
	if err != nil {
		return nil, nil, err
	}
	m.EnableEMF(getenv("AWS_LAMBDA_FUNCTION_NAME"))
	return h, m, nil
}

// LambdaAuth is the start-up of the auth function: the auth group's routes,
// and the stack's Custom::FirstAdministrator resource that CloudFormation
// sends it at deploy (FirstAdministrator; the answer goes to the event's
// ResponseURL, cfn.LambdaWrap).
func LambdaAuth(ctx context.Context, getenv func(string) string, logger *slog.Logger) (func(context.Context, json.RawMessage) (any, error), error) {
	b, cfg, err := lambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, err
	}
	h, err := NewHandler(b, cfg, logger, routes.GroupAuth)
	if err != nil {
		return nil, err
	}
	api := lambdaadapter.New(h, logger).Invoke
	resource := cfn.LambdaWrap(FirstAdministrator(b.Index, ReadSecret, logger))
	return func(ctx context.Context, payload json.RawMessage) (any, error) {
		var probe struct{ RequestType, ResponseURL string }
		if json.Unmarshal(payload, &probe) != nil || probe.RequestType == "" || probe.ResponseURL == "" {
			return api(ctx, payload)
		}
		var ev cfn.Event
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, err
		}
		return resource(ctx, ev)
	}, nil
}

// capWait lowers a ?wait= above max to max, so that no long poll holds a
// (billed) Lambda execution longer; anything else, invalid values included,
// goes to the handler as sent. It reads wait as the route's handler does
// (routes.QueryOf).
func capWait(next http.Handler, max time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if seconds, ok := routes.QueryOf(r).Seconds("wait"); ok && seconds > max.Seconds() {
			r = r.Clone(r.Context())
			r.URL.RawQuery = routes.WithQueryValue(r.URL.RawQuery, "wait", strconv.FormatFloat(max.Seconds(), 'f', -1, 64))
		}
		next.ServeHTTP(w, r)
	})
}

// lambdaBackend loads a Lambda function's configuration and opens its backend.
func lambdaBackend(ctx context.Context, getenv func(string) string, logger *slog.Logger) (store.Backend, Config, error) {
	cfg, err := LoadConfig(func(name string) string {
		if name == "TUNINGBOX_BACKEND" && getenv(name) == "" {
			return BackendAWS
		}
		return getenv(name)
	})
	if err != nil {
		return store.Backend{}, cfg, err
	}
	if err := resolveSecrets(ctx, &cfg, ReadSecret); err != nil {
		return store.Backend{}, cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return store.Backend{}, cfg, err
	}
	b, err := OpenBackend(ctx, cfg, logger)
	return b, cfg, err
}
