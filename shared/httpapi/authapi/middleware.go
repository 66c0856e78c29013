// Package authapi authenticates every request (Check, before httpapi.Wrap's
// body hardening), authorizes it and audits every write at dispatch (the
// routes.Guard the router binds to each route: Route, Miss), and serves the
// user, token and audit routes (/api/v1/users, /api/v1/tokens, /api/v1/audit). The same credential
// checks serve API Gateway's request authorizer (VerifyForAuthorizer, the
// principal written by EncodeAuthorizerContext), whose answer the middleware
// then reads back through httpapi.AuthorizerContext; the Lambda event types
// stay in shared/lambdaadapter.
package authapi

import (
	"context"
	"crypto/x509"
	"log/slog"
	"net"
	"net/http"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// EnvironmentIDs maps an environment reference (id or UUID) to its integer id,
// so that audit records of one environment are found whichever way a client
// named it. An unknown environment is errs.NotFound. shared/app adapts the ConfigDB to it.
type EnvironmentIDs interface {
	EnvironmentID(ctx context.Context, ref string) (int64, error)
}

// Middleware checks every request and audits every write.
type Middleware struct {
	svc      *auth.Service
	audit    *audit.Log
	envs     EnvironmentIDs
	logger   *slog.Logger
	keystone TokenValidator
}

// TokenValidator verifies the tokens of an external identity service (Keystone's X-Auth-Token).
type TokenValidator interface {
	Verify(ctx context.Context, token string) (auth.Principal, error)
}

// UseKeystone makes the middleware accept X-Auth-Token headers, validated by v.
func (m *Middleware) UseKeystone(v TokenValidator) { m.keystone = v }

// New returns the middleware over the user service, the audit log and the
// environment resolver; logger receives failed logins and audit failures.
func New(svc *auth.Service, log *audit.Log, envs EnvironmentIDs, logger *slog.Logger) *Middleware {
	if logger == nil {
		logger = slog.Default()
	}
	return &Middleware{svc: svc, audit: log, envs: envs, logger: logger}
}

type principalKey struct{}

// PrincipalFrom returns the principal the middleware authenticated for this request.
func PrincipalFrom(ctx context.Context) (auth.Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(auth.Principal)
	return p, ok
}

// Check is the httpapi.Options.Authenticate hook: it authenticates the caller
// of every route that is not public (401), and returns ctx, the context r
// goes on with, with the route r takes (routes.MatchContext) and its
// principal (PrincipalFrom). The router authorizes at dispatch (Route, Miss:
// 403), before it bounds the nesting of JSON bodies (400).
func (m *Middleware) Check(ctx context.Context, r *http.Request) (context.Context, error) {
	ctx = routes.MatchContext(ctx, r) // the authentication, the policy and the router use this one match
	if need, _, _ := required(ctx, r); need == routes.Public {
		return ctx, nil
	}
	p, err := m.authenticate(ctx, r)
	if err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, principalKey{}, p), nil
}

// Route is the policy of route, bound once when the router mounts it
// (routes.Guard): the principal Check authenticated must have the route's
// access, or be a node its node rule lets in (403); a write is audited.
func (m *Middleware) Route(route routes.Route, h http.HandlerFunc) http.HandlerFunc {
	if route.Access == routes.Public {
		return h
	}
	audited := writes(route.Access, route.Method)
	return func(w http.ResponseWriter, r *http.Request) {
		p, _ := PrincipalFrom(r.Context())
		if err := decide(p, r, route.Access, route.Node, r.PathValue); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		if audited {
			m.audited(w, r, p, h)
			return
		}
		h(w, r)
	}
}

// Miss is the policy of a request no mounted route takes (routes.Guard):
// read rights when its method is safe, write rights otherwise.
func (m *Middleware) Miss(r *http.Request) error {
	if IsPublic(r) {
		return nil
	}
	p, _ := PrincipalFrom(r.Context())
	return Authorize(p, r)
}

// authenticate finds the principal: from the API Gateway authorizer that
// already verified the request, or from the Authorization header.
func (m *Middleware) authenticate(ctx context.Context, r *http.Request) (auth.Principal, error) {
	if p, ok := authorizerPrincipal(ctx); ok {
		return p, nil
	}
	header := r.Header.Get("Authorization")
	if header == "" {
		if token := r.Header.Get(KeystoneHeader); token != "" {
			return m.verifyKeystone(ctx, token, r.RemoteAddr)
		}
		if r.TLS != nil && len(r.TLS.VerifiedChains) > 0 {
			return m.verifyCertificate(ctx, r.TLS.VerifiedChains[0][0], r.RemoteAddr)
		}
		return auth.Principal{}, errs.New(errs.Unauthenticated, "authentication required: use Basic auth, a Bearer token, a Keystone token (X-Auth-Token) or a client certificate")
	}
	p, cred, err := m.verify(ctx, header, r.RemoteAddr)
	if errs.Is(err, errs.Unauthenticated) {
		m.logFailure(ctx, r.RemoteAddr, cred, err)
	}
	return p, err
}

// verify checks an Authorization header sent from remote (host or host:port);
// the parsed credentials are returned for logs.
func (m *Middleware) verify(ctx context.Context, header, remote string) (auth.Principal, Credentials, error) {
	cred, err := ParseAuthorization(header)
	if err != nil {
		return auth.Principal{}, cred, err
	}
	ctx = withClientHost(ctx, remote)
	var p auth.Principal
	if cred.Scheme == SchemeBearer {
		p, err = m.svc.VerifyToken(ctx, cred.Token)
	} else {
		p, err = m.svc.VerifyPassword(ctx, cred.User, cred.Password)
	}
	return p, cred, err
}

// withClientHost records the client's address (without the port) for the failed-login throttle.
func withClientHost(ctx context.Context, remote string) context.Context {
	if host, _, err := net.SplitHostPort(remote); err == nil {
		remote = host
	}
	return auth.WithClientAddress(ctx, remote)
}

// KeystoneHeader carries a Keystone token.
const KeystoneHeader = "X-Auth-Token"

// verifyKeystone validates a Keystone token, when Keystone is configured.
func (m *Middleware) verifyKeystone(ctx context.Context, token, remote string) (auth.Principal, error) {
	if m.keystone == nil {
		return auth.Principal{}, errs.New(errs.Unauthenticated, "this server accepts no Keystone tokens (no Keystone configured)")
	}
	p, err := m.keystone.Verify(withClientHost(ctx, remote), token)
	if errs.Is(err, errs.Unauthenticated) || errs.Is(err, errs.Forbidden) {
		m.logFailure(ctx, remote, Credentials{Scheme: "keystone", User: p.User}, err)
	}
	return p, err
}

// verifyCertificate maps a client certificate the TLS layer (or API Gateway's
// mutual TLS) verified to its principal by the certname.
func (m *Middleware) verifyCertificate(ctx context.Context, cert *x509.Certificate, remote string) (auth.Principal, error) {
	name := clientcert.Name(cert)
	p, err := m.svc.VerifyCertname(ctx, name)
	if errs.Is(err, errs.Unauthenticated) {
		m.logFailure(ctx, remote, Credentials{Scheme: "certificate", User: name}, err)
		return p, errs.New(errs.Unauthenticated, "client certificate %q names no registered node and no server", name)
	}
	return p, err
}

// logFailure logs a failed login with the scheme, the claimed user and the
// remote address — never the password or token — and the running count of
// failed verifications, so that their rate shows.
func (m *Middleware) logFailure(ctx context.Context, remote string, cred Credentials, err error) {
	const maxLogged = 64
	user := cred.User
	if len(user) > maxLogged {
		user = user[:maxLogged] + "..."
	}
	m.logger.LogAttrs(ctx, slog.LevelWarn, "login failed",
		slog.String("scheme", cred.Scheme), slog.String("user", user), slog.String("remote", remote),
		slog.String("reason", errs.Message(err)), slog.Uint64("failed_logins_total", m.svc.FailedLogins()))
}

// audited serves a write with its audit record: every successful write (2xx)
// is recorded with the principal, the request's id (httpapi.RequestID) and what the code that made
// the write noted on the request's context (audit.Note: the environment it was
// under; a document version and its record commit in one atomic write,
// audit.CommitOps); any other write is recorded after it succeeded.
func (m *Middleware) audited(w http.ResponseWriter, r *http.Request, p auth.Principal, h http.HandlerFunc) {
	ctx, write := m.audit.Begin(r.Context(), audit.Record{
		Principal: p.User, Role: string(p.Role), TokenID: p.TokenID,
		RequestID: httpapi.RequestID(r.Context()), Method: r.Method, Path: r.URL.EscapedPath(),
	})
	rec := &httpapi.StatusRecorder{ResponseWriter: w}
	h(rec, r.WithContext(ctx))
	if rec.Status == 0 {
		rec.Status = http.StatusOK // the handler wrote nothing: net/http answers 200
	}
	ctx = context.WithoutCancel(ctx)
	if record, err := write.Finish(ctx, rec.Status); err != nil {
		m.logger.ErrorContext(ctx, "audit record lost", "method", r.Method, "path", record.Path, "principal", p.User, "err", err)
	}
}

// environmentID is the canonical id of an environment reference; a reference
// that no longer resolves (a deleted environment) is kept as given.
func (m *Middleware) environmentID(ctx context.Context, ref string) string {
	if _, err := strconv.ParseInt(ref, 10, 64); err == nil || m.envs == nil {
		return ref
	}
	id, err := m.envs.EnvironmentID(ctx, ref)
	if err != nil {
		return ref
	}
	return strconv.FormatInt(id, 10)
}
