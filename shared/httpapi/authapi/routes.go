package authapi

import (
	"net/http"
	"strconv"

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
		"users.create":  m.createUser,
		"users.list":    m.listUsers,
		"users.get":     m.getUser,
		"users.delete":  m.deleteUser,
		"tokens.create": m.createToken,
		"tokens.list":   m.listTokens,
		"tokens.revoke": m.revokeToken,
		"audit.list":    m.listAudit,
	})
}

// userView is user u as the API shows it.
func userView(u auth.User) wire.User {
	return wire.User{Name: u.Name, Role: string(u.Role), Node: u.Node, CreatedAt: u.CreatedAt}
}

func tokenView(t auth.Token) wire.Token {
	return wire.Token{ID: t.ID, User: t.User, Description: t.Description, CreatedAt: t.CreatedAt}
}

func (m *Middleware) createUser(w http.ResponseWriter, r *http.Request) {
	var body wire.NewUser
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	// From 1.2 on a node named by id is named by UUID, as in paths (spec 004); an FQDN stays a name.
	if httpapi.UUIDIdentities(r) && ident.IsIntegerID(body.Node) {
		httpapi.Error(w, r, errs.Invalidf("node: Invalid uuid %s", body.Node))
		return
	}
	u, err := m.svc.CreateUser(r.Context(), auth.NewUser{Name: body.Name, Password: body.Password, Role: auth.Role(body.Role), Node: body.Node})
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/users/"+u.Name)
	httpapi.JSON(w, http.StatusCreated, wire.UserBody{User: userView(u)})
}

func (m *Middleware) listUsers(w http.ResponseWriter, r *http.Request) {
	users, err := m.svc.ListUsers(r.Context())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := wire.UserList{Users: make([]wire.User, len(users))}
	for i, u := range users {
		out.Users[i] = userView(u)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

func (m *Middleware) getUser(w http.ResponseWriter, r *http.Request) {
	u, err := m.svc.GetUser(r.Context(), r.PathValue("name"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, wire.UserBody{User: userView(u)})
}

func (m *Middleware) deleteUser(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("name")
	if p, _ := PrincipalFrom(r.Context()); p.User == name {
		httpapi.Error(w, r, errs.Conflictf("you cannot delete your own account"))
		return
	}
	if err := m.svc.DeleteUser(r.Context(), name); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

func (m *Middleware) createToken(w http.ResponseWriter, r *http.Request) {
	var body wire.NewToken
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if body.User == "" {
		p, _ := PrincipalFrom(r.Context())
		body.User = p.User
	}
	tok, secret, err := m.svc.CreateToken(r.Context(), body.User, body.Description)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.JSON(w, http.StatusCreated, wire.CreatedToken{Token: tokenView(tok), Secret: secret})
}

func (m *Middleware) listTokens(w http.ResponseWriter, r *http.Request) {
	toks, err := m.svc.ListTokens(r.Context(), r.URL.Query().Get("user"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := wire.TokenList{Tokens: make([]wire.Token, len(toks))}
	for i, t := range toks {
		out.Tokens[i] = tokenView(t)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

func (m *Middleware) revokeToken(w http.ResponseWriter, r *http.Request) {
	if err := m.svc.RevokeToken(r.Context(), r.PathValue("id")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// listAudit answers GET /api/v1/audit?environment=ID&limit=N&before=CURSOR,
// newest first; "next" is the cursor of the following page, absent on the last.
func (m *Middleware) listAudit(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	query := audit.Query{Before: q.Get("before")}
	if env := q.Get("environment"); env != "" {
		query.Environment = m.environmentID(r.Context(), env)
	}
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 {
			httpapi.Error(w, r, errs.Invalidf("limit must be a positive integer"))
			return
		}
		query.Limit = n
	}
	records, err := m.audit.List(r.Context(), query)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := wire.AuditPage{Records: make([]wire.AuditRecord, len(records))}
	for i, rec := range records {
		out.Records[i] = wire.AuditRecord(rec)
	}
	limit := query.Limit
	if limit == 0 {
		limit = audit.DefaultLimit
	}
	if len(records) == limit {
		out.Next = records[len(records)-1].ID
	}
	httpapi.JSON(w, http.StatusOK, out)
}
