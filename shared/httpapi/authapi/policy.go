package authapi

import (
	"context"
	"net/http"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/levelpath"
)

// This file is the whole authorization policy. Each route's access rule is
// declared in the route table (shared/httpapi/routes): public (the microversion
// and OpenAPI documents, read before a client has credentials), read (GET, and
// the POSTs that compute an answer from their body), write, or admin (user and
// token management and store maintenance, whatever the method). A request that
// takes no route (the router answers 404 or 405) needs read rights when its method
// is safe and write rights otherwise, so it tells nobody more than a route would.
//
// Admins may do everything; observers may read; a node may use only the routes
// whose node rule lets it, for itself (nodeMay): its own node's configuration,
// in its environment at its placement, its own registry entry, and, as the
// deployment agent on that node, claiming its tasks and reporting their results.

// required returns what r needs, and the route it takes (ok false when none
// does), by the match recorded in ctx, r's context (routes.MatchIn).
func required(ctx context.Context, r *http.Request) (need routes.Access, m routes.Match, ok bool) {
	if m, ok = routes.MatchIn(ctx, r); ok {
		return m.Access, m, true
	}
	if httpapi.IsSafeMethod(r.Method) {
		return routes.Read, m, false
	}
	return routes.Write, m, false
}

// IsPublic reports whether r may be answered without credentials.
func IsPublic(r *http.Request) bool {
	need, _, _ := required(r.Context(), r)
	return need == routes.Public
}

// IsWrite reports whether r takes a route that changes something (and is
// therefore audited). A dry run takes the route of the write it previews and
// needs its rights; the code that answers it says it wrote nothing
// (audit.NothingWritten).
func IsWrite(r *http.Request) bool {
	need, _, _ := required(r.Context(), r)
	return writes(need, r.Method)
}

func writes(need routes.Access, method string) bool {
	return need == routes.Write || need == routes.Admin && !httpapi.IsSafeMethod(method)
}

// Authorize decides whether p may make request r: nil, or a Forbidden error.
// The router applies the same decision at dispatch (Middleware.Route, Miss).
func Authorize(p auth.Principal, r *http.Request) error {
	need, m, matched := required(r.Context(), r)
	rule := routes.NodeNone
	if matched {
		rule = m.Node
	}
	return decide(p, r, need, rule, func(name string) string { return m.Values[name] })
}

// decide is the policy: whether p may make r, which needs need, under the
// node rule of the route it takes (NodeNone when none); value gives the
// route's path values.
func decide(p auth.Principal, r *http.Request, need routes.Access, rule routes.NodeRule, value func(string) string) error {
	allowed := false
	switch p.Role {
	case auth.Admin:
		allowed = true
	case auth.Observer:
		allowed = need == routes.Public || need == routes.Read
	case auth.Node:
		allowed = need == routes.Public || nodeMay(p, r, rule, value)
	}
	if !allowed {
		return errs.New(errs.Forbidden, "%s %q may not %s %s", p.Role, p.User, r.Method, r.URL.Path)
	}
	return nil
}

// nodeMay applies the node rule of the route r takes: a node's own data and
// nothing else.
//   - NodeOwnDocument: ConfigDB documents of its own environment (by id or UUID)
//     whose node level names the node (id, FQDN or UUID): by the short path (the
//     node level first, the levels above it from the registry) or by the full
//     path of its own placement; another environment, role or node is refused
//     without a lookup, so the 403 never tells whether it exists; not ?explain,
//     which names the principals that wrote each layer;
//   - NodeOwnEntry: its own registry entry, by name;
//   - NodeHostnameSearch: the exact host name search Hiera backends use to map
//     an FQDN to the node id (GET /api/v1/nodes?hostname={fqdn});
//   - NodeOwnTask: the graph agent's claim and result calls for its own node;
//   - NodeOwnSession: a console session of its own (the session's reads are
//     the node's, under this same policy).
func nodeMay(p auth.Principal, r *http.Request, rule routes.NodeRule, value func(string) string) bool {
	switch rule {
	case routes.NodeOwnDocument:
		// The level matcher read the environment and the level path on the
		// escaped path, as configapi does (an escaped "/" stays inside its
		// segment), wherever the route puts them (/config/..., /watch/config/...).
		m, ok := routes.MatchOf(r)
		if !ok || !m.Route.Levels || routes.QueryOf(r).Has("explain") || !slices.ContainsFunc(p.NodeEnvironment, func(e string) bool { return strings.EqualFold(e, m.Values["env"]) }) {
			return false
		}
		return ownPlacement(p, m.Levels)
	case routes.NodeOwnEntry:
		return slices.Contains(p.NodeNames, value("id"))
	case routes.NodeHostnameSearch:
		// The policy runs before the router checks the query: hostname must be
		// its only parameter, given once.
		m, ok := routes.MatchOf(r)
		if !ok || m.CheckQuery(r) != nil {
			return false
		}
		q := routes.QueryOf(r)
		host := strings.ToLower(strings.TrimSuffix(q.String("hostname"), "."))
		return q.Len() == 1 && q.Has("hostname") && slices.Contains(p.NodeNames, host)
	case routes.NodeOwnTask:
		return slices.Contains(p.NodeNames, value("node"))
	case routes.NodeOwnSession:
		return true
	}
	return false
}

// ownPlacement reports whether a level path is the node's own: its node level
// names the node, and every level before it has the node's placement value
// (none on the short path). Levels below the node's are its own too.
func ownPlacement(p auth.Principal, levels []levelpath.Level) bool {
	at := slices.IndexFunc(levels, func(l levelpath.Level) bool { return levelpath.IsNodeLevel(l.Name) })
	if at < 0 {
		return false
	}
	node := strings.TrimSuffix(levels[at].Value, ".")
	if !slices.ContainsFunc(p.NodeNames, func(n string) bool { return strings.EqualFold(n, node) }) {
		return false
	}
	for _, l := range levels[:at] {
		if v, ok := p.NodeLevels[l.Name]; !ok || v != l.Value {
			return false
		}
	}
	return true
}
