package authapi

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
)

// This file is the whole authorization policy. A request is one of:
//
//   - public: only GET /api/v1/config/ (and /api/v1/config, the form an API
//     Gateway route can exempt from its authorizer), the microversion document. Clients
//     (the CLI, Hiera backends, load balancers' health checks) read it to
//     negotiate a version before they have credentials, and it shows nothing
//     but the supported version range. Every other route needs credentials.
//   - admin-only: user and token management and store maintenance, whatever the method.
//   - read: GET and HEAD, plus the POSTs listed in computeOnly, which compute an
//     answer from their body and change nothing.
//   - write: everything else.
//
// Admins may do everything; observers may read; a node may read only its own
// node's configuration, in its environment at its placement (see nodeMayRead) and, as the deployment agent on that
// node, claim its tasks of a transaction and report their results (nodeMayRun).

type access int

const (
	accessPublic access = iota
	accessRead
	accessWrite
	accessAdmin
)

// computeOnly lists the POST routes that change nothing.
var computeOnly = []string{
	"POST /api/v1/config/overrides/apply",
	"POST /api/v1/config/diff",
	"POST /api/v1/nodes/{id}/deploy_steps",
}

// adminOnly lists the route trees only admins may use at all.
var adminOnly = []string{"/api/v1/users", "/api/v1/users/", "/api/v1/tokens", "/api/v1/tokens/", "/api/v1/store/"}

// PublicRoutes are the routes answered without credentials (GET also matches HEAD).
var PublicRoutes = []string{"GET /api/v1/config/{$}", "GET /api/v1/config"}

// rules matches requests with the mux's own pattern semantics, so the policy
// reads routes exactly as the router does.
var rules = func() *http.ServeMux {
	m := http.NewServeMux()
	mark := func(a access) http.Handler { return accessHandler(a) }
	for _, p := range PublicRoutes {
		m.Handle(p, mark(accessPublic))
	}
	for _, p := range computeOnly {
		m.Handle(p, mark(accessRead))
	}
	for _, p := range adminOnly {
		m.Handle(p, mark(accessAdmin))
	}
	return m
}()

type accessHandler access

func (accessHandler) ServeHTTP(http.ResponseWriter, *http.Request) {}

// required returns what r needs.
func required(r *http.Request) access {
	if h, pattern := rules.Handler(r); pattern != "" {
		if a, ok := h.(accessHandler); ok {
			return access(a)
		}
	}
	if isSafeMethod(r.Method) {
		return accessRead
	}
	return accessWrite
}

func isSafeMethod(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// IsPublic reports whether r may be answered without credentials.
func IsPublic(r *http.Request) bool { return required(r) == accessPublic }

// IsWrite reports whether r changes something (and is therefore audited).
// A ConfigDB dry run (?dry_run=true) needs the rights of the write it previews
// but changes nothing.
func IsWrite(r *http.Request) bool {
	a := required(r)
	return (a == accessWrite || a == accessAdmin && !isSafeMethod(r.Method)) && !configapi.IsDryRun(r)
}

// Authorize decides whether p may make request r: nil, or a Forbidden error.
func Authorize(p auth.Principal, r *http.Request) error {
	need := required(r)
	allowed := false
	switch p.Role {
	case auth.Admin:
		allowed = true
	case auth.Observer:
		allowed = need == accessPublic || need == accessRead
	case auth.Node:
		allowed = need == accessPublic || isSafeMethod(r.Method) && need == accessRead && nodeMayRead(p, r) ||
			nodeMayRun(p.NodeNames, r)
	}
	if !allowed {
		return errs.New(errs.Forbidden, "%s %q may not %s %s", p.Role, p.User, r.Method, r.URL.Path)
	}
	return nil
}

// nodeMayRead allows a node its own data and nothing else:
//   - ConfigDB documents of its own environment (by id or UUID) whose node level
//     names the node (id, FQDN or UUID): by the short path (the node level first,
//     the levels above it from the registry) or by the full path of its own
//     placement; another environment, role or node is refused without a lookup,
//     so the 403 never tells whether it exists; not ?explain, which names writers;
//   - its own registry entry, by name or by the exact host name search Hiera
//     backends use to map an FQDN to the node id (GET /api/v1/nodes?hostname={fqdn}).
func nodeMayRead(p auth.Principal, r *http.Request) bool {
	segs, ok := pathSegments(r.URL.EscapedPath())
	if !ok {
		return false
	}
	switch {
	case hasPrefix(segs, "api", "v1", "config", "environments"):
		// A document path after {env}, read as configapi routes it. Not explain:
		// it names the principals that wrote each layer, from the audit log.
		if len(segs) < 5 || r.URL.Query().Has("explain") || !slices.ContainsFunc(p.NodeEnvironment, func(e string) bool { return strings.EqualFold(e, segs[4]) }) {
			return false
		}
		levels, _, err := configapi.SplitLevelPath(segs[5:])
		return err == nil && ownPlacement(p, levels)
	case hasPrefix(segs, "api", "v1", "nodes") && len(segs) == 4:
		return slices.Contains(p.NodeNames, segs[3])
	case hasPrefix(segs, "api", "v1", "nodes") && len(segs) == 3:
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil || len(q) != 1 || len(q["hostname"]) != 1 {
			return false
		}
		host := strings.ToLower(strings.TrimSuffix(q.Get("hostname"), "."))
		return slices.Contains(p.NodeNames, host)
	}
	return false
}

// ownPlacement reports whether a level path is the node's own: its node level
// names the node, and every level before it has the node's placement value
// (none on the short path). Levels below the node's are its own too.
func ownPlacement(p auth.Principal, levels []configdb.LevelValue) bool {
	at := slices.IndexFunc(levels, func(l configdb.LevelValue) bool { return configdb.IsNodeLevel(l.Name) })
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

// nodeMayRun allows a node's agent the calls of the graphs agent protocol
// for its own node: POST /api/v1/transactions/{uuid}/nodes/{node}/claim and
// .../result, and POST /api/v1/clusters/{id}/nodes/{node}/claim.
func nodeMayRun(names []string, r *http.Request) bool {
	if r.Method != http.MethodPost {
		return false
	}
	segs, ok := pathSegments(r.URL.EscapedPath())
	if !ok || len(segs) != 7 || segs[4] != "nodes" || !slices.Contains(names, segs[5]) {
		return false
	}
	return hasPrefix(segs, "api", "v1", "transactions") && (segs[6] == "claim" || segs[6] == "result") ||
		hasPrefix(segs, "api", "v1", "clusters") && segs[6] == "claim"
}

// pathSegments is httpapi.PathSegments, false for a malformed path.
func pathSegments(escaped string) ([]string, bool) {
	segs, err := httpapi.PathSegments(escaped)
	return segs, err == nil
}

func hasPrefix(segs []string, prefix ...string) bool {
	return len(segs) >= len(prefix) && slices.Equal(segs[:len(prefix)], prefix)
}
