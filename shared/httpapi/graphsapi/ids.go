package graphsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/ident"
)

// Microversion 1.2 (spec 004) in the graphs group, by the rules of
// httpapi.UUIDIdentities and httpapi.CheckPathID that every group shares:
// releases, plugins, graphs and clusters are kept by integer id and carry a
// UUID. A path or query id may be either before 1.2 and must be a UUID from
// 1.2 on; answers name entities by integer id (the UUID beside it as "uuid")
// before 1.2, and by UUID in "id" and every reference from 1.2 on.
// Transactions have always been named by UUID.

// resolveID reads an id of an entity of kind ("release", "plugin", "cluster"
// or graphs.GraphKind) given in a path, query or body.
func (h *handlers) resolveID(r *http.Request, ref, kind string) (int64, error) {
	if err := httpapi.CheckPathID(r, ref); err != nil {
		return 0, err
	}
	if !ident.IsUUID(ref) {
		return parseID(ref, kind)
	}
	if kind == string(graphs.Cluster) {
		c, err := h.svc.IdentifyCluster(r.Context(), ref)
		return c.ID, err
	}
	return h.svc.ResolveUUID(r.Context(), kind, ref)
}

// bodyID reads an id given in a request body: a JSON integer, or a string
// holding an integer id or a UUID.
func (h *handlers) bodyID(r *http.Request, raw json.RawMessage, kind string) (int64, error) {
	var ref string
	if err := json.Unmarshal(raw, &ref); err != nil {
		ref = string(raw)
	}
	return h.resolveID(r, ref, kind)
}

// uuids names entities by UUID in the answers of one request from 1.2 on,
// reading each UUID once.
type uuids struct {
	ctx      context.Context
	svc      *graphs.Service
	clusters map[int64]string
	owners   map[graphs.Owner]string
}

// viewFor returns the 1.2 namer for r, or nil before 1.2 (answers as they are).
func (h *handlers) viewFor(r *http.Request) *uuids {
	if !httpapi.UUIDIdentities(r) {
		return nil
	}
	return &uuids{ctx: r.Context(), svc: h.svc, clusters: map[int64]string{}, owners: map[graphs.Owner]string{}}
}

func (u *uuids) owner(o graphs.Owner) (string, error) {
	if id, ok := u.owners[o]; ok {
		return id, nil
	}
	id, err := u.svc.OwnerUUID(u.ctx, o)
	u.owners[o] = id
	return id, err
}

func (u *uuids) cluster(id int64) (string, error) {
	return u.owner(graphs.Owner{Kind: graphs.Cluster, ID: id})
}

type entryView struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Version string `json:"version"`
	graphs.EntryMetadata
}

func (u *uuids) entry(e graphs.Entry) entryView {
	return entryView{ID: e.UUID, Name: e.Name, Version: e.Version, EntryMetadata: e.EntryMetadata}
}

func (u *uuids) entries(es []graphs.Entry) []entryView {
	out := make([]entryView, len(es))
	for i, e := range es {
		out[i] = u.entry(e)
	}
	return out
}

// graph is the graph's API form with its UUID as "id" and its owner's UUID as model_id.
func (u *uuids) graph(g graphs.Graph) (map[string]any, error) {
	m, err := asObject(g)
	if err != nil {
		return nil, err
	}
	owner, err := u.owner(g.Owner)
	if err != nil {
		return nil, err
	}
	m["id"] = g.UUID
	delete(m, "uuid")
	for _, rel := range m["relations"].([]any) {
		rel.(map[string]any)["model_id"] = owner
	}
	return m, nil
}

func (u *uuids) graphs(gs []graphs.Graph) ([]map[string]any, error) {
	out := make([]map[string]any, len(gs))
	for i, g := range gs {
		var err error
		if out[i], err = u.graph(g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

type clusterView struct {
	ID        string   `json:"id"`
	ReleaseID *string  `json:"release_id"`
	Plugins   []string `json:"plugins"`
}

func (u *uuids) clusterSettings(c graphs.ClusterSettings) (clusterView, error) {
	id, err := u.cluster(c.ID)
	if err != nil {
		return clusterView{}, err
	}
	v := clusterView{ID: id, Plugins: make([]string, len(c.Plugins))}
	if c.ReleaseID != nil {
		rel, err := u.owner(graphs.Owner{Kind: graphs.Release, ID: *c.ReleaseID})
		if err != nil {
			return clusterView{}, err
		}
		v.ReleaseID = &rel
	}
	for i, p := range c.Plugins {
		if v.Plugins[i], err = u.owner(graphs.Owner{Kind: graphs.Plugin, ID: p}); err != nil {
			return clusterView{}, err
		}
	}
	return v, nil
}

// transaction names the cluster by UUID in a transaction and its sub-transactions.
func (u *uuids) transaction(tx graphs.Transaction) (map[string]any, error) {
	m, err := asObject(tx)
	if err != nil {
		return nil, err
	}
	cluster, err := u.cluster(tx.ClusterID)
	if err != nil {
		return nil, err
	}
	var name func(map[string]any)
	name = func(m map[string]any) {
		m["cluster_id"] = cluster
		if subs, ok := m["sub_transactions"].([]any); ok {
			for _, s := range subs {
				name(s.(map[string]any))
			}
		}
	}
	name(m)
	return m, nil
}

func (u *uuids) transactions(txs []graphs.Transaction) ([]map[string]any, error) {
	out := make([]map[string]any, len(txs))
	for i, tx := range txs {
		var err error
		if out[i], err = u.transaction(tx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// asObject is v's JSON object form.
func asObject(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	return m, dec.Decode(&m)
}

// The answers of the routes, by microversion.

func (h *handlers) graphAnswer(r *http.Request, status int, g graphs.Graph, err error) (int, any, error) {
	if u := h.viewFor(r); u != nil && err == nil {
		v, err := u.graph(g)
		return status, v, err
	}
	return status, g, err
}

func (h *handlers) graphsAnswer(r *http.Request, gs []graphs.Graph, err error) (int, any, error) {
	if u := h.viewFor(r); u != nil && err == nil {
		v, err := u.graphs(gs)
		return http.StatusOK, v, err
	}
	return http.StatusOK, nonNil(gs), err
}

func (h *handlers) clusterAnswer(r *http.Request, c graphs.ClusterSettings, err error) (int, any, error) {
	if u := h.viewFor(r); u != nil && err == nil {
		v, err := u.clusterSettings(c)
		return http.StatusOK, v, err
	}
	return http.StatusOK, c, err
}

func (h *handlers) transactionAnswer(r *http.Request, status int, tx graphs.Transaction, err error) (int, any, error) {
	if u := h.viewFor(r); u != nil && err == nil {
		v, err := u.transaction(tx)
		return status, v, err
	}
	return status, tx, err
}
