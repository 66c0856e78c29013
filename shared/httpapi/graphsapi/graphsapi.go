// Package graphsapi serves the deployment graph endpoints (spec 002):
// releases, plugins, clusters and their graphs, merged task lists, graph.gv,
// executions and the agent protocol that drives them.
package graphsapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

const base = "/api/v1"

// owner routes: the path segment of each kind of graph owner.
var owners = []struct {
	kind   graphs.OwnerKind
	plural string
}{
	{graphs.Release, "releases"},
	{graphs.Plugin, "plugins"},
	{graphs.Cluster, "clusters"},
}

// Register adds the graphs routes to router (declared in shared/httpapi/routes,
// every path with and without a trailing slash: spec 002 writes them with one).
func Register(router *routes.Router, svc *graphs.Service) {
	h := &handlers{svc: svc}
	bound := routes.Handlers{}
	bind := func(id string, fn httpapi.Handler) { bound["graphs."+id] = httpapi.Serve(fn) }
	for _, o := range owners {
		if o.kind != graphs.Cluster {
			bind(o.plural+".list", h.listEntries(o.kind))
			bind(o.plural+".create", h.createEntry(o.kind, base+"/"+o.plural))
			bind(o.plural+".get", h.getEntry(o.kind))
			bind(o.plural+".update", h.updateEntry(o.kind))
			bind(o.plural+".delete", h.deleteEntry(o.kind))
		}
		bind(o.plural+".graphs.list", h.listOwned(o.kind))
		bind(o.plural+".graphs.get", h.getOwned(o.kind))
		bind(o.plural+".graphs.create", h.createOwned(o.kind))
		bind(o.plural+".graphs.update", h.updateOwned(o.kind))
		bind(o.plural+".graphs.patch", h.updateOwned(o.kind))
		bind(o.plural+".graphs.delete", h.deleteOwned(o.kind))
	}
	bind("releases.deploymentTasks", h.withID("release", h.releaseTasks))
	bind("clusters.get", h.withID("cluster", h.getCluster))
	bind("clusters.put", h.withID("cluster", h.putCluster))
	bind("clusters.tasks.merged", h.deploymentTasks(graphs.Merged))
	bind("clusters.tasks.own", h.deploymentTasks(graphs.Own))
	bind("clusters.tasks.plugins", h.deploymentTasks(graphs.Plugins))
	bind("clusters.tasks.release", h.deploymentTasks(graphs.ReleaseOnly))
	bind("clusters.serializedTasks", h.withID("cluster", h.serializedTasks))
	bind("clusters.deploy", h.withID("cluster", h.deploy))
	bind("clusters.claim", h.withID("cluster", h.clusterClaim))
	bind("clusters.graphviz", h.withID(string(graphs.Cluster), h.graphviz))

	bind("graphs.list", h.listGraphs)
	bind("graphs.get", h.withID("graph", h.getGraph))
	bind("graphs.update", h.withID("graph", h.updateGraph))
	bind("graphs.patch", h.withID("graph", h.updateGraph))
	bind("graphs.delete", h.withID("graph", h.deleteGraph))
	bind("graphs.execute", h.execute)

	bind("transactions.list", h.listTransactions)
	bind("transactions.get", h.getTransaction)
	bind("transactions.plan", h.getPlan)
	bind("transactions.stop", h.stop)
	bind("transactions.retry", h.retry)
	bind("transactions.claim", h.claim)
	bind("transactions.result", h.report)
	router.Mount(bound)
}

type handlers struct{ svc *graphs.Service }

// list splits a comma-separated query parameter, dropping empty items.
func list(q routes.Query, name string) []string {
	var out []string
	for item := range strings.SplitSeq(q.String(name), ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}

func parseID(s, what string) (int64, error) {
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id < 1 {
		return 0, errs.Invalidf("invalid %s id %q: expected a positive integer", what, s)
	}
	return id, nil
}

// idList reads a comma-separated query list of ids of entities of kind.
func (h *handlers) idList(r *http.Request, q routes.Query, name, kind string) ([]int64, error) {
	var out []int64
	for _, item := range list(q, name) {
		id, err := h.resolveID(r, item, kind)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

// idHandler is a route body for a path with an entity's {id} (integer or UUID), resolved to the integer id.
type idHandler func(w http.ResponseWriter, r *http.Request, id int64) (int, any, error)

// withID resolves the path's {id} of an entity of kind what before fn.
func (h *handlers) withID(what string, fn idHandler) httpapi.Handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		id, err := h.resolveID(r, r.PathValue("id"), what)
		if err != nil {
			return 0, nil, err
		}
		return fn(w, r, id)
	}
}

// graphType reads ?graph_type=, the default type when absent.
func graphType(q routes.Query) string {
	if t := q.String("graph_type"); t != "" {
		return t
	}
	return graphs.DefaultType
}

func (h *handlers) listEntries(kind graphs.OwnerKind) httpapi.Handler {
	return func(_ http.ResponseWriter, r *http.Request) (int, any, error) {
		entries, err := h.svc.Entries(r.Context(), kind)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, h.viewsFor(r).entries(entries), nil
	}
}

func (h *handlers) createEntry(kind graphs.OwnerKind, path string) httpapi.Handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		in, err := entryInput(r)
		if err != nil {
			return 0, nil, err
		}
		e, err := h.svc.CreateEntry(r.Context(), kind, in)
		if err != nil {
			return 0, nil, err
		}
		v := h.viewsFor(r).entry(e)
		w.Header().Set("Location", path+"/"+string(v.ID))
		return http.StatusCreated, v, nil
	}
}

func (h *handlers) getEntry(kind graphs.OwnerKind) httpapi.Handler {
	return h.withID(string(kind), func(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
		e, err := h.svc.Entry(r.Context(), kind, id)
		return h.entryAnswer(r, e, err)
	})
}

func (h *handlers) updateEntry(kind graphs.OwnerKind) httpapi.Handler {
	return h.withID(string(kind), func(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
		in, err := entryInput(r)
		if err != nil {
			return 0, nil, err
		}
		e, err := h.svc.UpdateEntry(r.Context(), kind, id, in)
		return h.entryAnswer(r, e, err)
	})
}

func (h *handlers) deleteEntry(kind graphs.OwnerKind) httpapi.Handler {
	return h.withID(string(kind), func(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
		return http.StatusNoContent, nil, h.svc.DeleteEntry(r.Context(), kind, id)
	})
}

// ownerHandler is a route body for one owner's graphs.
type ownerHandler func(w http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error)

// withOwner reads the owner of the kind from the path's {id} before fn.
func (h *handlers) withOwner(kind graphs.OwnerKind, fn ownerHandler) httpapi.Handler {
	return h.withID(string(kind), func(w http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
		noteOwner(r, graphs.Owner{Kind: kind, ID: id})
		return fn(w, r, graphs.Owner{Kind: kind, ID: id})
	})
}

// noteOwner notes a cluster's write as one under its environment (audit.Note).
func noteOwner(r *http.Request, o graphs.Owner) {
	if o.Kind == graphs.Cluster {
		audit.Note(r.Context(), o.ID, 0)
	}
}

func (h *handlers) listOwned(kind graphs.OwnerKind) httpapi.Handler {
	return h.withOwner(kind, func(_ http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error) {
		gs, err := h.svc.GraphsOf(r.Context(), o)
		return h.graphsAnswer(r, gs, err)
	})
}

func (h *handlers) getOwned(kind graphs.OwnerKind) httpapi.Handler {
	return h.withOwner(kind, func(_ http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error) {
		g, err := h.svc.GraphOf(r.Context(), o, r.PathValue("type"))
		return h.graphAnswer(r, http.StatusOK, g, err)
	})
}

// entryInput reads a release or plugin upload.
func entryInput(r *http.Request) (graphs.EntryInput, error) {
	var in wire.NewRegistryEntry
	err := httpapi.Decode(r, &in)
	return graphs.EntryInput{Name: in.Name, Version: in.Version, EntryMetadata: planner.EntryMetadata(in.EntryMetadata)}, err
}

// graphBody reads a graph upload: the JSON body and the ?validate flag.
func graphBody(r *http.Request) (graphs.GraphInput, bool, error) {
	var in wire.GraphInput
	if err := httpapi.Decode(r, &in); err != nil {
		return graphs.GraphInput{}, false, err
	}
	return graphs.GraphInput{
		Name: in.Name, NodeFilter: in.NodeFilter, Tasks: in.Tasks,
		OnSuccess: hookInput(in.OnSuccess), OnError: hookInput(in.OnError), OnStop: hookInput(in.OnStop),
	}, routes.QueryOf(r).Flag("validate"), nil
}

func (h *handlers) createOwned(kind graphs.OwnerKind) httpapi.Handler {
	return h.withOwner(kind, func(w http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error) {
		in, validate, err := graphBody(r)
		if err != nil {
			return 0, nil, err
		}
		g, err := h.svc.CreateGraph(r.Context(), o, r.PathValue("type"), in, validate)
		if err == nil {
			if httpapi.UUIDIdentities(r) {
				w.Header().Set("Location", base+"/graphs/"+g.UUID)
			} else {
				w.Header().Set("Location", fmt.Sprintf("%s/graphs/%d", base, g.ID))
			}
		}
		return h.graphAnswer(r, http.StatusCreated, g, err)
	})
}

func (h *handlers) updateOwned(kind graphs.OwnerKind) httpapi.Handler {
	return h.withOwner(kind, func(_ http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error) {
		in, validate, err := graphBody(r)
		if err != nil {
			return 0, nil, err
		}
		g, err := h.svc.UpdateGraphOf(r.Context(), o, r.PathValue("type"), in, validate)
		return h.graphAnswer(r, http.StatusOK, g, err)
	})
}

func (h *handlers) deleteOwned(kind graphs.OwnerKind) httpapi.Handler {
	return h.withOwner(kind, func(_ http.ResponseWriter, r *http.Request, o graphs.Owner) (int, any, error) {
		return http.StatusNoContent, nil, h.svc.DeleteGraphOf(r.Context(), o, r.PathValue("type"))
	})
}

func (h *handlers) getCluster(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	c, err := h.svc.Cluster(r.Context(), id)
	return h.clusterAnswer(r, c, err)
}

func (h *handlers) putCluster(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	// wire.ClusterUpdate read raw: release and plugins are ids or UUIDs
	// (httpapi.CheckPathID's rules), given as numbers or strings.
	var body struct {
		ReleaseID json.RawMessage   `json:"release_id"`
		Plugins   []json.RawMessage `json:"plugins"`
		MasterIP  string            `json:"master_ip"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in := graphs.ClusterInput{MasterIP: body.MasterIP}
	if len(body.ReleaseID) > 0 && string(body.ReleaseID) != "null" {
		rel, err := h.bodyID(r, body.ReleaseID, string(graphs.Release))
		if err != nil {
			return 0, nil, err
		}
		in.ReleaseID = &rel
	}
	if body.Plugins != nil {
		in.Plugins = []int64{}
	}
	for _, raw := range body.Plugins {
		p, err := h.bodyID(r, raw, string(graphs.Plugin))
		if err != nil {
			return 0, nil, err
		}
		in.Plugins = append(in.Plugins, p)
	}
	audit.Note(r.Context(), id, 0)
	c, err := h.svc.SetCluster(r.Context(), id, in)
	return h.clusterAnswer(r, c, err)
}

func (h *handlers) deploymentTasks(from graphs.Source) httpapi.Handler {
	return h.withID("cluster", func(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
		q := routes.QueryOf(r)
		tasks, err := h.svc.DeploymentTasks(r.Context(), id, graphType(q), from)
		return tasksAnswer(tasks, err)
	})
}

func (h *handlers) graphviz(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	q := routes.QueryOf(r)
	opts := planner.DOTOptions{Tasks: list(q, "tasks"), ParentsFor: q.String("parents_for"), Remove: list(q, "remove")}
	dot, err := h.svc.DOT(r.Context(), id, graphType(q), opts)
	return http.StatusOK, httpapi.Text{ContentType: "text/vnd.graphviz", Body: []byte(dot)}, err
}

func (h *handlers) listGraphs(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	var f graphs.GraphFilter
	var err error
	if f.Releases, err = h.idList(r, q, "releases_ids", string(graphs.Release)); err != nil {
		return 0, nil, err
	}
	if f.Plugins, err = h.idList(r, q, "plugins_ids", string(graphs.Plugin)); err != nil {
		return 0, nil, err
	}
	if f.Clusters, err = h.idList(r, q, "clusters_ids", string(graphs.Cluster)); err != nil {
		return 0, nil, err
	}
	f.FetchRelated = routes.QueryOf(r).Flag("fetch_related")
	f.Types = list(q, "graph_types")
	gs, err := h.svc.ListGraphs(r.Context(), f)
	return h.graphsAnswer(r, gs, err)
}

func (h *handlers) getGraph(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	g, err := h.svc.Graph(r.Context(), id)
	return h.graphAnswer(r, http.StatusOK, g, err)
}

func (h *handlers) updateGraph(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	in, validate, err := graphBody(r)
	if err != nil {
		return 0, nil, err
	}
	g, err := h.svc.UpdateGraph(r.Context(), id, in, validate)
	noteOwner(r, g.Owner)
	return h.graphAnswer(r, http.StatusOK, g, err)
}

func (h *handlers) deleteGraph(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	owner, err := h.svc.DeleteGraph(r.Context(), id)
	noteOwner(r, owner)
	return http.StatusNoContent, nil, err
}

func (h *handlers) execute(w http.ResponseWriter, r *http.Request) (int, any, error) {
	// The cluster is an id or a UUID (httpapi.CheckPathID's rules).
	var body struct {
		wire.ExecuteRequest
		Cluster json.RawMessage `json:"cluster"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in := body.ExecuteRequest
	req := graphs.ExecuteRequest{DryRun: in.DryRun, NoopRun: in.NoopRun, Force: in.Force, Debug: in.Debug, Explain: in.Explain, ClaimTimeout: in.ClaimTimeout,
		Graphs: httpapi.Convert(in.Graphs, func(g wire.GraphRun) graphs.GraphRun {
			return graphs.GraphRun{Type: g.Type, Tasks: g.Tasks, SkipTasks: g.SkipTasks, Nodes: httpapi.Convert(g.Nodes, func(n wire.NodeID) graphs.NodeID { return graphs.NodeID(n) })}
		}),
		Subgraphs: httpapi.Convert(in.Subgraphs, func(sg wire.Subgraph) planner.Subgraph { return planner.Subgraph(sg) }),
	}
	if len(body.Cluster) > 0 && string(body.Cluster) != "null" {
		id, err := h.bodyID(r, body.Cluster, string(graphs.Cluster))
		if err != nil {
			return 0, nil, err
		}
		req.Cluster = &id
	}
	tx, err := h.svc.Execute(r.Context(), req)
	if err == nil {
		w.Header().Set("Location", base+"/transactions/"+tx.UUID)
	}
	audit.Note(r.Context(), tx.ClusterID, 0)
	return h.transactionAnswer(r, http.StatusAccepted, tx, err)
}

var txStatuses = []string{graphs.StatusPending, graphs.StatusRunning, graphs.StatusReady, graphs.StatusError}

// maxTransactions caps a transaction listing.
const maxTransactions = 1000

func (h *handlers) listTransactions(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	f := graphs.TransactionFilter{Status: q.String("status"), Limit: maxTransactions}
	if v, ok := q.String("cluster_id"), q.Has("cluster_id"); ok {
		id, err := h.resolveID(r, v, string(graphs.Cluster))
		if err != nil {
			return 0, nil, err
		}
		f.ClusterID = &id
	}
	if f.Status != "" && !slices.Contains(txStatuses, f.Status) {
		return 0, nil, errs.Invalidf("status %q is not one of %s", f.Status, strings.Join(txStatuses, ", "))
	}
	if n, ok := routes.QueryOf(r).Integer("limit"); ok {
		f.Limit = min(n, maxTransactions)
	}
	txs, err := h.svc.Transactions(r.Context(), f)
	if err != nil {
		return 0, nil, err
	}
	v, err := h.viewsFor(r).transactions(txs)
	return http.StatusOK, v, err
}

func (h *handlers) getTransaction(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	tx, err := h.svc.Transaction(r.Context(), r.PathValue("uuid"))
	return h.transactionAnswer(r, http.StatusOK, tx, err)
}

func (h *handlers) stop(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	tx, err := h.svc.Stop(r.Context(), r.PathValue("uuid"))
	audit.Note(r.Context(), tx.ClusterID, 0)
	return h.transactionAnswer(r, http.StatusOK, tx, err)
}

func (h *handlers) retry(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var in wire.RetryRequest
	if err := httpapi.Decode(r, &in); err != nil {
		return 0, nil, err
	}
	tx, err := h.svc.Retry(r.Context(), r.PathValue("uuid"), in.Failed)
	if err == nil {
		w.Header().Set("Location", base+"/transactions/"+tx.UUID)
	}
	audit.Note(r.Context(), tx.ClusterID, 0)
	return h.transactionAnswer(r, http.StatusAccepted, tx, err)
}

func (h *handlers) claim(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	c, err := h.svc.Claim(r.Context(), r.PathValue("uuid"), r.PathValue("node"))
	return claimAnswer(c, err)
}

func (h *handlers) report(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	var rep wire.TaskReport
	if err := httpapi.Decode(r, &rep); err != nil {
		return 0, nil, err
	}
	p, err := h.svc.Report(r.Context(), r.PathValue("uuid"), r.PathValue("node"),
		graphs.TaskReport{Task: rep.Task, Status: rep.Status, Message: rep.Message, TaskRun: graphs.TaskRun(rep.TaskRun)})
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, progressView(p), nil
}

func (h *handlers) releaseTasks(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	q := routes.QueryOf(r)
	tasks, err := h.svc.ReleaseTasks(r.Context(), id, graphType(q))
	return tasksAnswer(tasks, err)
}

func nodeIDs(q routes.Query) []graphs.NodeID {
	var out []graphs.NodeID
	for _, n := range list(q, "nodes") {
		out = append(out, graphs.NodeID(n))
	}
	return out
}

// deploy is spec 002's PUT /clusters/{id}/deploy: an execution of one graph type.
func (h *handlers) deploy(w http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	q := routes.QueryOf(r)
	audit.Note(r.Context(), id, 0)
	req := graphs.ExecuteRequest{Cluster: &id, Graphs: []graphs.GraphRun{{Type: graphType(q), Nodes: nodeIDs(q)}}}
	query := routes.QueryOf(r)
	req.DryRun, req.NoopRun, req.Force, req.Debug = query.Flag("dry_run"), query.Flag("noop_run"), query.Flag("force"), query.Flag("debug")
	if n, ok := query.Seconds("claim_timeout"); ok {
		req.ClaimTimeout = &n
	}
	tx, err := h.svc.Execute(r.Context(), req)
	if err == nil {
		w.Header().Set("Location", base+"/transactions/"+tx.UUID)
	}
	return h.transactionAnswer(r, http.StatusAccepted, tx, err)
}

// clusterClaim is the agent's claim in whatever transaction runs on the
// cluster; ?wait=N (seconds, at most 25) waits that long for work.
func (h *handlers) clusterClaim(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	var wait time.Duration
	if n, ok := routes.QueryOf(r).Seconds("wait"); ok {
		if n < 0 {
			return 0, nil, errs.Invalidf("wait=%v: expected a number of seconds, at least 0", n)
		}
		wait = time.Duration(min(n, graphs.MaxClaimWait.Seconds()) * float64(time.Second))
	}
	audit.Note(r.Context(), id, 0)
	c, err := h.svc.ClaimInCluster(r.Context(), id, r.PathValue("node"), wait, httpapi.Draining(r.Context()))
	return claimAnswer(c, err)
}

// The answers of the routes, as wire types at the request's microversion.

func (h *handlers) entryAnswer(r *http.Request, e graphs.Entry, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, h.viewsFor(r).entry(e), nil
}

func (h *handlers) graphAnswer(r *http.Request, status int, g graphs.Graph, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := h.viewsFor(r).graph(g)
	return status, v, err
}

func (h *handlers) graphsAnswer(r *http.Request, gs []graphs.Graph, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := h.viewsFor(r).graphs(gs)
	return http.StatusOK, v, err
}

func (h *handlers) clusterAnswer(r *http.Request, c graphs.ClusterSettings, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := h.viewsFor(r).clusterSettings(c)
	return http.StatusOK, v, err
}

func (h *handlers) transactionAnswer(r *http.Request, status int, tx graphs.Transaction, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := h.viewsFor(r).transaction(tx)
	return status, v, err
}

func tasksAnswer(tasks []planner.Task, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	v, err := taskDocuments(tasks)
	return http.StatusOK, v, err
}

func claimAnswer(c graphs.Claim, err error) (int, any, error) {
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c, nil
}
