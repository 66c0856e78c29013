package core

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/keystone"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter/authorizer"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NewGuard builds the authentication middleware over idx, node users named
// by the registry, environment references in audit records resolved by envs
// (nil keeps them as given), and creates the bootstrap administrator that
// cfg names, unless that user exists.
func NewGuard(idx store.Index, cfg Config, logger *slog.Logger, registry *nodes.Service, envs authapi.EnvironmentIDs) (*authapi.Middleware, error) {
	shares := cfg.CacheShares()
	users := auth.NewService(idx, auth.WithNodeNames(registryNodeNames{registry}), auth.WithServerCertnames(cfg.ServerCertnames),
		auth.WithCacheBytes(shares.Auth))
	if cfg.AdminUser != "" {
		created, err := users.EnsureUser(context.Background(), auth.NewUser{Name: cfg.AdminUser, Password: cfg.AdminPassword, Role: auth.Admin})
		if err != nil {
			return nil, err
		}
		if created && logger != nil {
			logger.Info("created the bootstrap administrator", "user", cfg.AdminUser)
		}
	}
	m := authapi.New(users, audit.New(idx, nil, audit.WithRetention(cfg.AuditRetention)), envs, logger)
	if cfg.Keystone.URL != "" {
		ks := cfg.Keystone
		ks.CacheBytes = shares.Keystone
		v, err := keystone.New(ks, &http.Client{Timeout: 10 * time.Second}, time.Now)
		if err != nil {
			return nil, err
		}
		v.LimitClients(users)
		m.UseKeystone(v)
	}
	return m, nil
}

// registryNodeNames gives a node user every name of its node in the registry,
// its environment and its placement.
type registryNodeNames struct{ nodes *nodes.Service }

func (r registryNodeNames) NodeNames(ctx context.Context, ref string) (auth.NodeIdentity, error) {
	n, err := r.nodes.Resolve(ctx, ref)
	if err != nil {
		return auth.NodeIdentity{}, err
	}
	return auth.NodeIdentity{
		Names:       []string{strconv.FormatInt(n.ID, 10), n.FQDN, n.UUID},
		Environment: []string{strconv.FormatInt(n.EnvironmentID, 10), n.EnvironmentUUID},
		Levels:      n.Levels,
	}, nil
}

// LambdaAuthorizer is the start-up of the API Gateway request authorizer
// (functions/authorizer): the same configuration, user store and checks as
// every route's function. The returned function handles one authorizer event.
func LambdaAuthorizer(ctx context.Context, getenv func(string) string, logger *slog.Logger) (func(context.Context, json.RawMessage) (any, error), error) {
	b, cfg, err := LambdaBackend(ctx, getenv, logger)
	if err != nil {
		return nil, err
	}
	return Authorizer(b, cfg, logger)
}

// Authorizer returns the authorizer's event handler over backend b: the
// Lambda authorizer around the middleware every route's function builds.
// Its node registry only resolves node users' names, which needs no
// environment lookups, and it writes no audit record: neither needs the
// ConfigDB, which the authorizer does not link.
func Authorizer(b store.Backend, cfg Config, logger *slog.Logger) (func(context.Context, json.RawMessage) (any, error), error) {
	guard, err := NewGuard(b.Index, cfg, logger, nodes.NewService(b.Index, nil), nil)
	if err != nil {
		return nil, err
	}
	return authorizer.New(guard).Invoke, nil
}
