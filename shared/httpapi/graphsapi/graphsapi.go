// Package graphsapi serves the deployment graph endpoints (spec 002):
// releases, plugins, clusters and their graphs, merged task lists, graph.gv,
// executions and the agent protocol that drives them.
package graphsapi

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
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

// Register adds the graphs routes to mux.
func Register(mux *http.ServeMux, svc *graphs.Service) {
	h := &handlers{svc: svc}
	for _, o := range owners {
		if o.kind != graphs.Cluster {
			registry := base + "/" + o.plural
			mux.HandleFunc("GET "+registry, h.listEntries(o.kind))
			mux.HandleFunc("POST "+registry, h.createEntry(o.kind, registry))
			mux.HandleFunc("GET "+registry+"/{id}", h.getEntry(o.kind))
			mux.HandleFunc("DELETE "+registry+"/{id}", h.deleteEntry(o.kind))
		}
		owned := base + "/" + o.plural + "/{id}/deployment_graphs"
		mux.HandleFunc("GET "+owned, h.listOwned(o.kind))
		mux.HandleFunc("GET "+owned+"/{type}", h.getOwned(o.kind))
		mux.HandleFunc("POST "+owned+"/{type}", h.createOwned(o.kind))
		mux.HandleFunc("PUT "+owned+"/{type}", h.updateOwned(o.kind))
		mux.HandleFunc("PATCH "+owned+"/{type}", h.updateOwned(o.kind))
		mux.HandleFunc("DELETE "+owned+"/{type}", h.deleteOwned(o.kind))
	}
	clusters := base + "/clusters/{id}"
	mux.HandleFunc("GET "+clusters, serve(h.getCluster))
	mux.HandleFunc("PUT "+clusters, serve(h.putCluster))
	mux.HandleFunc("GET "+clusters+"/deployment_tasks", h.deploymentTasks(graphs.Merged))
	mux.HandleFunc("GET "+clusters+"/deployment_tasks/own", h.deploymentTasks(graphs.Own))
	mux.HandleFunc("GET "+clusters+"/deployment_tasks/plugins", h.deploymentTasks(graphs.Plugins))
	mux.HandleFunc("GET "+clusters+"/deployment_tasks/release", h.deploymentTasks(graphs.ReleaseOnly))
	mux.HandleFunc("GET "+clusters+"/deploy_tasks/graph.gv", h.graphviz)

	mux.HandleFunc("GET "+base+"/graphs", serve(h.listGraphs))
	mux.HandleFunc("GET "+base+"/graphs/{id}", serve(h.getGraph))
	mux.HandleFunc("PUT "+base+"/graphs/{id}", serve(h.updateGraph))
	mux.HandleFunc("PATCH "+base+"/graphs/{id}", serve(h.updateGraph))
	mux.HandleFunc("DELETE "+base+"/graphs/{id}", serve(h.deleteGraph))
	mux.HandleFunc("POST "+base+"/graphs/execute", h.execute)

	tx := base + "/transactions/{uuid}"
	mux.HandleFunc("GET "+base+"/transactions", serve(h.listTransactions))
	mux.HandleFunc("GET "+tx, serve(h.getTransaction))
	mux.HandleFunc("GET "+tx+"/plan", serve(h.getPlan))
	mux.HandleFunc("POST "+tx+"/stop", serve(h.stop))
	mux.HandleFunc("POST "+tx+"/nodes/{node}/claim", serve(h.claim))
	mux.HandleFunc("POST "+tx+"/nodes/{node}/result", serve(h.report))
}

type handlers struct{ svc *graphs.Service }

// serve runs a handler body that returns a status and a JSON value (or an error).
func serve(fn func(r *http.Request) (int, any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, v, err := fn(r)
		switch {
		case err != nil:
			httpapi.Error(w, r, err)
		case status == http.StatusNoContent:
			httpapi.NoContent(w)
		default:
			httpapi.JSON(w, status, v)
		}
	}
}

// query returns r's query parameters after rejecting unknown and repeated ones.
func query(r *http.Request, allowed ...string) (url.Values, error) {
	q := r.URL.Query()
	for name, vals := range q {
		switch {
		case !slices.Contains(allowed, name):
			return nil, errs.Invalidf("unknown query parameter %q", name)
		case len(vals) > 1:
			return nil, errs.Invalidf("query parameter %q is given more than once", name)
		}
	}
	return q, nil
}

// flag reads a boolean query parameter; present without a value means true.
func flag(q url.Values, name string) (bool, error) {
	if !q.Has(name) {
		return false, nil
	}
	v := q.Get(name)
	if v == "" {
		return true, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, errs.Invalidf("query parameter %s=%q is not a boolean", name, v)
	}
	return b, nil
}

// list splits a comma-separated query parameter, dropping empty items.
func list(q url.Values, name string) []string {
	var out []string
	for item := range strings.SplitSeq(q.Get(name), ",") {
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

func idList(q url.Values, name string) ([]int64, error) {
	var out []int64
	for _, item := range list(q, name) {
		id, err := parseID(item, name)
		if err != nil {
			return nil, err
		}
		out = append(out, id)
	}
	return out, nil
}

func pathID(r *http.Request, what string) (int64, error) { return parseID(r.PathValue("id"), what) }

func ownerOf(r *http.Request, kind graphs.OwnerKind) (graphs.Owner, error) {
	id, err := pathID(r, string(kind))
	return graphs.Owner{Kind: kind, ID: id}, err
}

// graphType reads ?graph_type=, the default type when absent.
func graphType(q url.Values) string {
	if t := q.Get("graph_type"); t != "" {
		return t
	}
	return graphs.DefaultType
}

func (h *handlers) listEntries(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		if _, err := query(r); err != nil {
			return 0, nil, err
		}
		entries, err := h.svc.Entries(r.Context(), kind)
		if entries == nil {
			entries = []graphs.Entry{}
		}
		return http.StatusOK, entries, err
	})
}

func (h *handlers) createEntry(kind graphs.OwnerKind, path string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var in graphs.EntryInput
		if err := httpapi.Decode(r, &in); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		e, err := h.svc.CreateEntry(r.Context(), kind, in)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Location", fmt.Sprintf("%s/%d", path, e.ID))
		httpapi.JSON(w, http.StatusCreated, e)
	}
}

func (h *handlers) getEntry(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		id, err := pathID(r, string(kind))
		if err != nil {
			return 0, nil, err
		}
		e, err := h.svc.Entry(r.Context(), kind, id)
		return http.StatusOK, e, err
	})
}

func (h *handlers) deleteEntry(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		id, err := pathID(r, string(kind))
		if err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, h.svc.DeleteEntry(r.Context(), kind, id)
	})
}

func (h *handlers) listOwned(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		o, err := ownerOf(r, kind)
		if err != nil {
			return 0, nil, err
		}
		gs, err := h.svc.GraphsOf(r.Context(), o)
		return http.StatusOK, nonNil(gs), err
	})
}

func nonNil(gs []graphs.Graph) []graphs.Graph {
	if gs == nil {
		return []graphs.Graph{}
	}
	return gs
}

func (h *handlers) getOwned(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		o, err := ownerOf(r, kind)
		if err != nil {
			return 0, nil, err
		}
		g, err := h.svc.GraphOf(r.Context(), o, r.PathValue("type"))
		return http.StatusOK, g, err
	})
}

// graphBody reads a graph upload: the JSON body and the ?validate flag.
func graphBody(r *http.Request) (graphs.GraphInput, bool, error) {
	q, err := query(r, "validate")
	if err != nil {
		return graphs.GraphInput{}, false, err
	}
	validate, err := flag(q, "validate")
	if err != nil {
		return graphs.GraphInput{}, false, err
	}
	var in graphs.GraphInput
	return in, validate, httpapi.Decode(r, &in)
}

func (h *handlers) createOwned(kind graphs.OwnerKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		g, err := func() (graphs.Graph, error) {
			o, err := ownerOf(r, kind)
			if err != nil {
				return graphs.Graph{}, err
			}
			in, validate, err := graphBody(r)
			if err != nil {
				return graphs.Graph{}, err
			}
			return h.svc.CreateGraph(r.Context(), o, r.PathValue("type"), in, validate)
		}()
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		w.Header().Set("Location", fmt.Sprintf("%s/graphs/%d", base, g.ID))
		httpapi.JSON(w, http.StatusCreated, g)
	}
}

func (h *handlers) updateOwned(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		o, err := ownerOf(r, kind)
		if err != nil {
			return 0, nil, err
		}
		in, validate, err := graphBody(r)
		if err != nil {
			return 0, nil, err
		}
		g, err := h.svc.UpdateGraphOf(r.Context(), o, r.PathValue("type"), in, validate)
		return http.StatusOK, g, err
	})
}

func (h *handlers) deleteOwned(kind graphs.OwnerKind) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		o, err := ownerOf(r, kind)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, h.svc.DeleteGraphOf(r.Context(), o, r.PathValue("type"))
	})
}

func (h *handlers) getCluster(r *http.Request) (int, any, error) {
	id, err := pathID(r, "cluster")
	if err != nil {
		return 0, nil, err
	}
	c, err := h.svc.Cluster(r.Context(), id)
	return http.StatusOK, c, err
}

func (h *handlers) putCluster(r *http.Request) (int, any, error) {
	id, err := pathID(r, "cluster")
	if err != nil {
		return 0, nil, err
	}
	var in graphs.ClusterInput
	if err := httpapi.Decode(r, &in); err != nil {
		return 0, nil, err
	}
	c, err := h.svc.SetCluster(r.Context(), id, in)
	return http.StatusOK, c, err
}

func (h *handlers) deploymentTasks(from graphs.Source) http.HandlerFunc {
	return serve(func(r *http.Request) (int, any, error) {
		id, err := pathID(r, "cluster")
		if err != nil {
			return 0, nil, err
		}
		q, err := query(r, "graph_type")
		if err != nil {
			return 0, nil, err
		}
		tasks, err := h.svc.DeploymentTasks(r.Context(), id, graphType(q), from)
		return http.StatusOK, tasks, err
	})
}

func (h *handlers) graphviz(w http.ResponseWriter, r *http.Request) {
	dot, err := func() (string, error) {
		id, err := pathID(r, "cluster")
		if err != nil {
			return "", err
		}
		q, err := query(r, "graph_type", "tasks", "parents_for", "remove")
		if err != nil {
			return "", err
		}
		opts := graphs.DOTOptions{Tasks: list(q, "tasks"), ParentsFor: q.Get("parents_for"), Remove: list(q, "remove")}
		return h.svc.DOT(r.Context(), id, graphType(q), opts)
	}()
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/vnd.graphviz")
	_, _ = w.Write([]byte(dot))
}

func (h *handlers) listGraphs(r *http.Request) (int, any, error) {
	q, err := query(r, "releases_ids", "plugins_ids", "clusters_ids", "graph_types", "fetch_related")
	if err != nil {
		return 0, nil, err
	}
	var f graphs.GraphFilter
	if f.Releases, err = idList(q, "releases_ids"); err != nil {
		return 0, nil, err
	}
	if f.Plugins, err = idList(q, "plugins_ids"); err != nil {
		return 0, nil, err
	}
	if f.Clusters, err = idList(q, "clusters_ids"); err != nil {
		return 0, nil, err
	}
	if f.FetchRelated, err = flag(q, "fetch_related"); err != nil {
		return 0, nil, err
	}
	f.Types = list(q, "graph_types")
	gs, err := h.svc.ListGraphs(r.Context(), f)
	return http.StatusOK, nonNil(gs), err
}

func (h *handlers) getGraph(r *http.Request) (int, any, error) {
	id, err := pathID(r, "graph")
	if err != nil {
		return 0, nil, err
	}
	g, err := h.svc.Graph(r.Context(), id)
	return http.StatusOK, g, err
}

func (h *handlers) updateGraph(r *http.Request) (int, any, error) {
	id, err := pathID(r, "graph")
	if err != nil {
		return 0, nil, err
	}
	in, validate, err := graphBody(r)
	if err != nil {
		return 0, nil, err
	}
	g, err := h.svc.UpdateGraph(r.Context(), id, in, validate)
	return http.StatusOK, g, err
}

func (h *handlers) deleteGraph(r *http.Request) (int, any, error) {
	id, err := pathID(r, "graph")
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, h.svc.DeleteGraph(r.Context(), id)
}

func (h *handlers) execute(w http.ResponseWriter, r *http.Request) {
	var req graphs.ExecuteRequest
	if err := httpapi.Decode(r, &req); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	tx, err := h.svc.Execute(r.Context(), req)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Location", base+"/transactions/"+tx.UUID)
	httpapi.JSON(w, http.StatusAccepted, tx)
}

var txStatuses = []string{graphs.StatusPending, graphs.StatusRunning, graphs.StatusReady, graphs.StatusError}

func (h *handlers) listTransactions(r *http.Request) (int, any, error) {
	q, err := query(r, "cluster_id", "status", "limit")
	if err != nil {
		return 0, nil, err
	}
	var f graphs.TransactionFilter
	if q.Has("cluster_id") {
		id, err := parseID(q.Get("cluster_id"), "cluster")
		if err != nil {
			return 0, nil, err
		}
		f.ClusterID = &id
	}
	if f.Status = q.Get("status"); f.Status != "" && !slices.Contains(txStatuses, f.Status) {
		return 0, nil, errs.Invalidf("status %q is not one of %s", f.Status, strings.Join(txStatuses, ", "))
	}
	if q.Has("limit") {
		n, err := strconv.Atoi(q.Get("limit"))
		if err != nil || n < 1 {
			return 0, nil, errs.Invalidf("limit %q is not a positive integer", q.Get("limit"))
		}
		f.Limit = n
	}
	txs, err := h.svc.Transactions(r.Context(), f)
	if txs == nil {
		txs = []graphs.Transaction{}
	}
	return http.StatusOK, txs, err
}

func (h *handlers) getTransaction(r *http.Request) (int, any, error) {
	tx, err := h.svc.Transaction(r.Context(), r.PathValue("uuid"))
	return http.StatusOK, tx, err
}

func (h *handlers) getPlan(r *http.Request) (int, any, error) {
	p, err := h.svc.Plan(r.Context(), r.PathValue("uuid"))
	return http.StatusOK, p, err
}

func (h *handlers) stop(r *http.Request) (int, any, error) {
	tx, err := h.svc.Stop(r.Context(), r.PathValue("uuid"))
	return http.StatusOK, tx, err
}

func (h *handlers) claim(r *http.Request) (int, any, error) {
	c, err := h.svc.Claim(r.Context(), r.PathValue("uuid"), r.PathValue("node"))
	return http.StatusOK, c, err
}

func (h *handlers) report(r *http.Request) (int, any, error) {
	var rep graphs.TaskReport
	if err := httpapi.Decode(r, &rep); err != nil {
		return 0, nil, err
	}
	p, err := h.svc.Report(r.Context(), r.PathValue("uuid"), r.PathValue("node"), rep)
	return http.StatusOK, p, err
}
