package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/cfn"

	"github.com/tuningbox/tuningbox/shared/app/core"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Options are what a process adds to its handler from packages that a Lambda
// function links only where it needs them, since their package
// initialization is start-up time for every function that imports them
// (docs/aws.md, Bootstraps). shared/app/server gives all of them to the
// processes that serve every group themselves.
type Options struct {
	// Schemas lets the ConfigDB compile and check JSON Schemas
	// (configdb.WithSchemas(schema.Compile)): the config group, which writes
	// definitions and documents, needs it.
	Schemas configdb.Option
	// Scraper builds the exporter of GET /metrics from the handler's
	// registry (promexport.New); without one, GET /metrics is a 404.
	Scraper func(*metrics.Registry) Scraper
}

// EnvironmentServices returns the services an environment's export reads and
// its import writes over b, built as the server builds them, for `tuningbox
// env import --backend` to import straight into a store, without a request's
// bounds. No request is served: cfg's bootstrap administrator is not
// created and no Keystone is asked.
func EnvironmentServices(b store.Backend, cfg Config, opts Options) (envexport.Services, error) {
	cfg.AdminUser, cfg.Keystone.URL = "", ""
	svc, err := newServices(b, cfg, nil, opts)
	if err != nil {
		return envexport.Services{}, err
	}
	return svc.environmentServices(), nil
}

// NewHandler builds the HTTP handler serving the named endpoint groups (all of
// them when groups is empty) over backend b, inside the shared middleware.
func NewHandler(b store.Backend, cfg Config, logger *slog.Logger, opts Options, groups ...string) (http.Handler, error) {
	named, err := groupsNamed(groups)
	if err != nil {
		return nil, err
	}
	h, _, err := newHandler(b, cfg, logger, opts, named)
	return h, err
}

// newHandler is NewHandler of groups with the handler's metrics.
func newHandler(b store.Backend, cfg Config, logger *slog.Logger, opts Options, groups []Group) (http.Handler, *Metrics, error) {
	if opts.Schemas == nil && slices.ContainsFunc(groups, func(g Group) bool { return g.Name == routes.GroupConfig }) {
		return nil, nil, errors.New("the config group writes documents: it needs a JSON Schema compiler (Options.Schemas)")
	}
	router, svc, err := mount(b, cfg, logger, true, opts, groups)
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

// Routes returns the bare routes of the named endpoint groups (all when
// none), without the middleware nor the auth policy: the route-walk test
// lists every mounted pattern from it.
func Routes(b store.Backend, cfg Config, groups ...string) (*routes.Router, error) {
	named, err := groupsNamed(groups)
	if err != nil {
		return nil, err
	}
	router, _, err := mount(b, cfg, nil, false, Options{}, named)
	return router, err
}

// groupsNamed returns the groups of the names, every group when there is none.
func groupsNamed(names []string) ([]Group, error) {
	if len(names) == 0 {
		return allGroups(), nil
	}
	out := make([]Group, 0, len(names))
	for _, name := range names {
		i := slices.IndexFunc(allGroups(), func(g Group) bool { return g.Name == name })
		if i < 0 {
			return nil, fmt.Errorf("unknown endpoint group %q", name)
		}
		out = append(out, allGroups()[i])
	}
	return out, nil
}

// mount builds the services and the router of groups; guarded routes are
// behind the auth policy (routes.Guard), bare ones serve anybody.
func mount(b store.Backend, cfg Config, logger *slog.Logger, guarded bool, opts Options, groups []Group) (*routes.Router, *services, error) {
	svc, err := newServices(b, cfg, logger, opts)
	if err != nil {
		return nil, nil, err
	}
	router := routes.NewRouter(cfg.CacheShares().Routes)
	if guarded {
		router.Use(svc.guard)
	}
	svc.metrics.registry.Cache("routes.matches", router)
	for _, g := range groups {
		g.mount(router, svc)
	}
	return router, svc, nil
}

// GroupNames lists the endpoint groups in a stable order.
func GroupNames() []string {
	var names []string
	for _, g := range allGroups() {
		names = append(names, g.Name)
	}
	return names
}

// LambdaHandler is the start-up of every Lambda function serving an endpoint
// group: configuration from the environment (the aws backend unless
// TUNINGBOX_BACKEND says otherwise), clients built once per cold start, and
// the group's handler with its metrics, kept for FlushEMF after each
// invocation (the "function" dimension is AWS_LAMBDA_FUNCTION_NAME).
func LambdaHandler(ctx context.Context, getenv func(string) string, logger *slog.Logger, group Group, opts Options) (http.Handler, *Metrics, error) {
	b, cfg, err := core.LambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, nil, err
	}
	h, m, err := newHandler(b, cfg, logger, opts, []Group{group})
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
	b, cfg, err := core.LambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, err
	}
	h, _, err := newHandler(b, cfg, logger, Options{}, []Group{AuthRoutes})
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
