package configapi

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// IsDryRun reports whether r is a document write that asks for a dry run
// (?dry_run=true, microversion 1.3): nothing is stored, and the answer is 200
// with the version the write would create and the registered nodes of the
// environment whose effective document it would change. The audit log skips them.
func IsDryRun(r *http.Request) bool {
	return (r.Method == http.MethodPut || r.Method == http.MethodPatch) && routes.QueryOf(r).Flag("dry_run")
}

// previewed answers a dry run: the version the write would create and the
// nodes whose effective document it would change.
func previewed(r *http.Request, p configdb.Preview, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v := idsFor(r)
	out := wire.Preview{Version: p.Version, Affected: make([]wire.AffectedNode, len(p.Affected))}
	for i, a := range p.Affected {
		out.Affected[i] = wire.AffectedNode{Node: a.Node.FQDN, NodeID: v.of(configdb.Ident{ID: a.Node.ID, UUID: a.Node.UUID}), Changes: diffView(a.Changes)}
	}
	return http.StatusOK, out, nil
}
