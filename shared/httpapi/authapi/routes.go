package authapi

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/ident"
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

type userBody struct {
	User auth.User `json:"user"`
}

func (m *Middleware) createUser(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Name     string    `json:"name"`
		Password string    `json:"password"`
		Role     auth.Role `json:"role"`
		Node     string    `json:"node"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	// From 1.2 on a node named by id is named by UUID, as in paths (spec 004); an FQDN stays a name.
	if httpapi.UUIDIdentities(r) && ident.IsIntegerID(body.Node) {
		httpapi.Error(w, r, errs.Invalidf("node: Invalid uuid %s", body.Node))
		return
	}
	u, err := m.svc.CreateUser(r.Context(), auth.NewUser{Name: body.Name, Password: body.Password, Role: body.Role, Node: body.Node})
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Location", "/api/v1/users/"+u.Name)
	httpapi.JSON(w, http.StatusCreated, userBody{User: u})
}

func (m *Middleware) listUsers(w http.ResponseWriter, r *http.Request) {
	users, err := m.svc.ListUsers(r.Context())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, struct {
		Users []auth.User `json:"users"`
	}{users})
}

func (m *Middleware) getUser(w http.ResponseWriter, r *http.Request) {
	u, err := m.svc.GetUser(r.Context(), r.PathValue("name"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, userBody{User: u})
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

// createdToken is the one answer that shows a token's secret.
type createdToken struct {
	Token  auth.Token `json:"token"`
	Secret string     `json:"secret"`
}

func (m *Middleware) createToken(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User        string `json:"user"`
		Description string `json:"description"`
	}
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
	httpapi.JSON(w, http.StatusCreated, createdToken{Token: tok, Secret: secret})
}

func (m *Middleware) listTokens(w http.ResponseWriter, r *http.Request) {
	toks, err := m.svc.ListTokens(r.Context(), r.URL.Query().Get("user"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, struct {
		Tokens []auth.Token `json:"tokens"`
	}{toks})
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
	query.Limit, _ = routes.QueryOf(r).Integer("limit")
	records, err := m.audit.List(r.Context(), query)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := struct {
		Records []audit.Record `json:"records"`
		Next    string         `json:"next,omitempty"`
	}{Records: records}
	limit := query.Limit
	if limit == 0 {
		limit = audit.DefaultLimit
	}
	if len(records) == limit {
		out.Next = records[len(records)-1].ID
	}
	httpapi.JSON(w, http.StatusOK, out)
}
