package graphsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/wire"
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

// views builds the answers of one request (wire types) at its microversion:
// integer ids before 1.2, UUIDs from 1.2 on, each UUID read once.
type views struct {
	ctx    context.Context
	svc    *graphs.Service
	uuids  bool
	owners map[graphs.Owner]string
}

func (h *handlers) viewsFor(r *http.Request) *views {
	return &views{ctx: r.Context(), svc: h.svc, uuids: httpapi.UUIDIdentities(r), owners: map[graphs.Owner]string{}}
}

// ownerID is the id of an owner (a release, a plugin or a cluster) in answers.
func (v *views) ownerID(o graphs.Owner) (wire.ID, error) {
	if !v.uuids {
		return wire.IntID(o.ID), nil
	}
	id, ok := v.owners[o]
	if !ok {
		var err error
		if id, err = v.svc.OwnerUUID(v.ctx, o); err != nil {
			return "", err
		}
		v.owners[o] = id
	}
	return wire.ID(id), nil
}

func (v *views) entry(e graphs.Entry) wire.RegistryEntry {
	return wire.RegistryEntry{ID: wire.IDOf(v.uuids, e.ID, e.UUID), UUID: wire.UUIDBeside(v.uuids, e.UUID), Name: e.Name, Version: e.Version, EntryMetadata: wire.EntryMetadata(e.EntryMetadata)}
}

// entries lists entries ([] when there are none).
func (v *views) entries(es []graphs.Entry) []wire.RegistryEntry {
	out := make([]wire.RegistryEntry, len(es))
	for i, e := range es {
		out[i] = v.entry(e)
	}
	return out
}

func (v *views) graph(g graphs.Graph) (wire.Graph, error) {
	owner, err := v.ownerID(g.Owner)
	if err != nil {
		return wire.Graph{}, err
	}
	tasks, err := taskDocuments(g.Tasks)
	if tasks == nil {
		tasks = []wire.TaskDocument{}
	}
	return wire.Graph{
		ID: wire.IDOf(v.uuids, g.ID, g.UUID), UUID: wire.UUIDBeside(v.uuids, g.UUID), Name: g.Name,
		NodeFilter: g.NodeFilter, OnSuccess: hookView(g.OnSuccess), OnError: hookView(g.OnError), OnStop: hookView(g.OnStop),
		Tasks: tasks, Relations: []wire.Relation{{Type: g.Type, Model: string(g.Owner.Kind), ModelID: owner}},
	}, err
}

func (v *views) graphs(gs []graphs.Graph) ([]wire.Graph, error) {
	out := make([]wire.Graph, len(gs))
	for i, g := range gs {
		var err error
		if out[i], err = v.graph(g); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func hookView(h *graphs.Hook) *wire.GraphHook {
	if h == nil {
		return nil
	}
	return &wire.GraphHook{NodeAttributes: h.NodeAttributes}
}

func hookInput(h *wire.GraphHook) *graphs.Hook {
	if h == nil {
		return nil
	}
	return &graphs.Hook{NodeAttributes: h.NodeAttributes}
}

func (v *views) clusterSettings(c graphs.ClusterSettings) (wire.Cluster, error) {
	id, err := v.ownerID(graphs.Owner{Kind: graphs.Cluster, ID: c.ID})
	if err != nil {
		return wire.Cluster{}, err
	}
	out := wire.Cluster{ID: id, MasterIP: c.MasterIP}
	if c.ReleaseID != nil {
		rel, err := v.ownerID(graphs.Owner{Kind: graphs.Release, ID: *c.ReleaseID})
		if err != nil {
			return wire.Cluster{}, err
		}
		out.ReleaseID = &rel
	}
	if c.Plugins != nil {
		out.Plugins = make([]wire.ID, len(c.Plugins))
	}
	for i, p := range c.Plugins {
		if out.Plugins[i], err = v.ownerID(graphs.Owner{Kind: graphs.Plugin, ID: p}); err != nil {
			return wire.Cluster{}, err
		}
	}
	return out, nil
}

// transaction is a transaction and its sub-transactions, which share its cluster.
func (v *views) transaction(tx graphs.Transaction) (wire.Transaction, error) {
	cluster, err := v.ownerID(graphs.Owner{Kind: graphs.Cluster, ID: tx.ClusterID})
	if err != nil {
		return wire.Transaction{}, err
	}
	var view func(tx graphs.Transaction) wire.Transaction
	view = func(tx graphs.Transaction) wire.Transaction {
		i := tx.TransactionInfo
		out := wire.Transaction{
			UUID: i.UUID, Name: i.Name, Status: i.Status, Message: i.Message, ClusterID: cluster, GraphType: i.GraphType, ParentUUID: i.ParentUUID,
			DryRun: i.DryRun, NoopRun: i.NoopRun, Force: i.Force, Debug: i.Debug, ClaimTimeout: i.ClaimTimeout,
			FQDNs: i.FQDNs, FailedNodes: i.FailedNodes, FailedTasks: httpapi.Convert(i.FailedTasks, func(r graphs.NodeTaskRef) wire.NodeTaskRef { return wire.NodeTaskRef(r) }),
			TimeCreated: i.TimeCreated, TimeStart: i.TimeStart, TimeEnd: i.TimeEnd,
		}
		out.SubTransactions = httpapi.Convert(tx.SubTransactions, view)
		out.Nodes = httpapi.Convert(tx.Nodes, progressView)
		return out
	}
	return view(tx), nil
}

func (v *views) transactions(txs []graphs.Transaction) ([]wire.Transaction, error) {
	out := make([]wire.Transaction, len(txs))
	for i, tx := range txs {
		var err error
		if out[i], err = v.transaction(tx); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func progressView(p graphs.NodeProgress) wire.NodeProgress {
	return wire.NodeProgress{
		Node: p.Node, Status: p.Status, Next: p.Next, CurrentTask: p.CurrentTask, CurrentStart: p.CurrentStart, LastSeen: p.LastSeen,
		Results: httpapi.Convert(p.Results, func(r graphs.TaskResult) wire.TaskResult {
			return wire.TaskResult{Task: r.Task, Status: r.Status, Message: r.Message, TaskRun: wire.TaskRun(r.TaskRun), TimeStart: r.TimeStart, TimeEnd: r.TimeEnd}
		}),
	}
}

// taskDocument is a task's API form, encoded as every answer is (no HTML escaping).
func taskDocument(t planner.Task) (wire.TaskDocument, error) {
	doc, err := encodeJSON(t)
	return wire.TaskDocument(doc), err
}

// encodeJSON encodes v as httpapi.JSON does: <, > and & kept as they are.
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func taskDocuments(tasks []planner.Task) ([]wire.TaskDocument, error) {
	if tasks == nil {
		return nil, nil
	}
	out := make([]wire.TaskDocument, len(tasks))
	for i, t := range tasks {
		var err error
		if out[i], err = taskDocument(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func planView(p graphs.Plan) (wire.Plan, error) {
	tasks, err := taskDocuments(p.Tasks)
	if err != nil {
		return wire.Plan{}, err
	}
	return wire.Plan{Transaction: p.Transaction, GraphType: p.GraphType, Nodes: p.Nodes, Tasks: tasks, Warnings: p.Warnings, Unplaced: p.Unplaced,
		FaultToleranceGroups: httpapi.Convert(p.FaultToleranceGroups, func(g planner.FaultToleranceGroup) wire.FaultToleranceGroup { return wire.FaultToleranceGroup(g) }),
		NodeTasks:            p.NodeTasks, Skipped: p.Skipped}, nil
}
