package authapi

import (
	"net/http"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the user, token and audit routes to router. Users and tokens are
// for admins only (see policy.go); the audit log is readable like any GET.
func (m *Middleware) Register(router *routes.Router) {
	router.Mount(routes.Handlers{
		"users.create":    httpapi.Serve(m.createUser),
		"users.list":      httpapi.Serve(m.listUsers),
		"users.get":       httpapi.Serve(m.getUser),
		"users.delete":    httpapi.Serve(m.deleteUser),
		"tokens.create":   httpapi.Serve(m.createToken),
		"tokens.list":     httpapi.Serve(m.listTokens),
		"tokens.revoke":   httpapi.Serve(m.revokeToken),
		"audit.list":      httpapi.Serve(m.listAudit),
		"sessions.create": httpapi.Serve(m.createSession),
		"sessions.delete": httpapi.Serve(m.deleteSession),
	})
}

// userView is user u as the API shows it.
func userView(u auth.User) wire.User {
	return wire.User{Name: u.Name, Role: string(u.Role), Node: u.Node, CreatedAt: u.CreatedAt}
}

// SessionTTL is how long a console session lasts.
const SessionTTL = 30 * time.Minute

// createSession opens a console session for the caller, a user of this API
// who logged in with a password or an API token: not with another session
// (a stolen session token could renew itself), nor with credentials of
// another identity service (Keystone, a client certificate: no user here).
func (m *Middleware) createSession(w http.ResponseWriter, r *http.Request) (int, any, error) {
	p, _ := PrincipalFrom(r.Context())
	if p.TokenID != "" {
		session, err := m.svc.IsSession(r.Context(), p.TokenID)
		if err != nil {
			return 0, nil, err
		}
		if session {
			return 0, nil, errs.Invalidf("a session opens no other: log in with a password or an API token")
		}
	}
	tok, secret, err := m.svc.CreateSession(r.Context(), p.User, SessionTTL)
	if errs.Is(err, errs.NotFound) {
		return 0, nil, errs.Invalidf("%q is no user of this API: sessions are for its own users", p.User)
	}
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Cache-Control", "no-store")
	return http.StatusCreated, wire.Session{Token: secret, ExpiresAt: *tok.ExpiresAt, User: p.User, Role: string(p.Role), NodeNames: p.NodeNames}, nil
}

// deleteSession ends the session whose token the request carries.
func (m *Middleware) deleteSession(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	p, _ := PrincipalFrom(r.Context())
	if p.TokenID == "" {
		return 0, nil, errs.Invalidf("the request carries no session token")
	}
	session, err := m.svc.IsSession(r.Context(), p.TokenID)
	if err != nil {
		return 0, nil, err
	}
	if !session {
		return 0, nil, errs.Invalidf("the request carries an API token, not a session's: revoke it through /api/v1/tokens")
	}
	if err := m.svc.RevokeToken(r.Context(), p.TokenID); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (m *Middleware) createUser(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body wire.NewUser
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	// From 1.2 on a node named by id is named by UUID, as in paths (spec 004); an FQDN stays a name.
	if httpapi.UUIDIdentities(r) && ident.IsIntegerID(body.Node) {
		return 0, nil, errs.Invalidf("node: Invalid uuid %s", body.Node)
	}
	u, err := m.svc.CreateUser(r.Context(), auth.NewUser{Name: body.Name, Password: body.Password, Role: auth.Role(body.Role), Node: body.Node})
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Location", "/api/v1/users/"+u.Name)
	return http.StatusCreated, wire.UserBody{User: userView(u)}, nil
}

func (m *Middleware) listUsers(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	users, err := m.svc.ListUsers(r.Context())
	if err != nil {
		return 0, nil, err
	}
	out := wire.UserList{Users: make([]wire.User, len(users))}
	for i, u := range users {
		out.Users[i] = userView(u)
	}
	return http.StatusOK, out, nil
}

func (m *Middleware) getUser(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	u, err := m.svc.GetUser(r.Context(), r.PathValue("name"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.UserBody{User: userView(u)}, nil
}

func (m *Middleware) deleteUser(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	name := r.PathValue("name")
	if p, _ := PrincipalFrom(r.Context()); p.User == name {
		return 0, nil, errs.Conflictf("you cannot delete your own account")
	}
	if err := m.svc.DeleteUser(r.Context(), name); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (m *Middleware) createToken(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body wire.NewToken
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	if body.User == "" {
		p, _ := PrincipalFrom(r.Context())
		body.User = p.User
	}
	tok, secret, err := m.svc.CreateToken(r.Context(), body.User, body.Description)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Cache-Control", "no-store")
	return http.StatusCreated, wire.CreatedToken{Token: tok, Secret: secret}, nil
}

func (m *Middleware) listTokens(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	toks, err := m.svc.ListTokens(r.Context(), routes.QueryOf(r).String("user"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.TokenList{Tokens: toks}, nil
}

func (m *Middleware) revokeToken(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := m.svc.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// listAudit answers GET /api/v1/audit?environment=ID&limit=N&before=CURSOR,
// newest first; "next" is the cursor of the following page, absent on the last.
func (m *Middleware) listAudit(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	query := audit.Query{Before: q.String("before")}
	if env := q.String("environment"); env != "" {
		query.Environment = m.environmentID(r.Context(), env)
	}
	query.Limit, _ = q.Integer("limit")
	records, err := m.audit.List(r.Context(), query)
	if err != nil {
		return 0, nil, err
	}
	out := wire.AuditPage{Records: records}
	limit := query.Limit
	if limit == 0 {
		limit = audit.DefaultLimit
	}
	if len(records) == limit {
		out.Next = records[len(records)-1].ID
	}
	return http.StatusOK, out, nil
}
