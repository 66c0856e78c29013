package client

import (
	"cmp"
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/wire"
)

const graphsBase = "/api/v1"

// Graph owners: the kinds of models a deployment graph belongs to.
const (
	Releases = "releases"
	Plugins  = "plugins"
	Clusters = "clusters"
)

// The deployment graph bodies (shared/wire): Graph is a graph as the API
// shows it (its tasks are free-form task documents, each with at least "id"
// and "type"), Relation the model it belongs to, GraphInput creates or
// replaces one.
type (
	Graph      = wire.Graph
	Relation   = wire.Relation
	GraphInput = wire.GraphInput
)

// GraphFilter selects graphs in Graphs; empty lists every graph.
type GraphFilter struct {
	Releases, Plugins, Clusters, Types []string
	// FetchRelated adds, to a cluster's graphs, those of its release and enabled plugins.
	FetchRelated bool
}

// Graphs lists deployment graphs.
func (c *Client) Graphs(ctx context.Context, f GraphFilter) ([]Graph, error) {
	q := url.Values{}
	for name, ids := range map[string][]string{"releases_ids": f.Releases, "plugins_ids": f.Plugins, "clusters_ids": f.Clusters, "graph_types": f.Types} {
		if len(ids) > 0 {
			q.Set(name, strings.Join(ids, ","))
		}
	}
	if f.FetchRelated {
		q.Set("fetch_related", "1")
	}
	var out []Graph
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/graphs", q, nil, &out)
	return out, err
}

func ownedGraphPath(owner, id, graphType string) string {
	return graphsBase + "/" + owner + "/" + esc(id) + "/deployment_graphs/" + esc(graphType)
}

// OwnedGraph reads the graph of a type of an owner (Releases, Plugins or Clusters and its id).
func (c *Client) OwnedGraph(ctx context.Context, owner, id, graphType string) (*Graph, error) {
	var out Graph
	_, err := c.call(ctx, http.MethodGet, ownedGraphPath(owner, id, graphType), nil, nil, &out)
	return &out, err
}

// CreateGraph creates the graph of a type of an owner; with validate the
// server first checks the merged graph of every environment it takes part in.
func (c *Client) CreateGraph(ctx context.Context, owner, id, graphType string, in json.RawMessage, validate bool) (*Graph, error) {
	var out Graph
	_, err := c.call(ctx, http.MethodPost, ownedGraphPath(owner, id, graphType), validateQuery(validate), in, &out)
	return &out, err
}

// UpdateGraph replaces the tasks and the given metadata of the graph of a type of an owner.
func (c *Client) UpdateGraph(ctx context.Context, owner, id, graphType string, in json.RawMessage, validate bool) (*Graph, error) {
	var out Graph
	_, err := c.call(ctx, http.MethodPut, ownedGraphPath(owner, id, graphType), validateQuery(validate), in, &out)
	return &out, err
}

// DeleteGraph deletes the graph of a type of an owner.
func (c *Client) DeleteGraph(ctx context.Context, owner, id, graphType string) error {
	_, err := c.call(ctx, http.MethodDelete, ownedGraphPath(owner, id, graphType), nil, nil, nil)
	return err
}

func validateQuery(validate bool) url.Values {
	if validate {
		return url.Values{"validate": {"true"}}
	}
	return nil
}

// Task sources of a cluster's deployment tasks.
const (
	TasksMerged  = ""         // the cluster's, its release's and its plugins' merged
	TasksOwn     = "/own"     // the cluster's own graph
	TasksPlugins = "/plugins" // its enabled plugins' graphs
	TasksRelease = "/release" // its release's graph
)

// DeploymentTasks returns a cluster's tasks of a graph type from source
// (TasksMerged, TasksOwn, TasksPlugins or TasksRelease), as task documents.
func (c *Client) DeploymentTasks(ctx context.Context, cluster, graphType, source string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	path := graphsBase + "/clusters/" + esc(cluster) + "/deployment_tasks" + source
	_, err := c.call(ctx, http.MethodGet, path, url.Values{"graph_type": {graphType}}, nil, &out)
	return out, err
}

// The execution bodies (shared/wire): ExecuteRequest runs graphs on a
// cluster, GraphRun is one of its graphs and NodeID names one of its nodes
// (id or UUID); Transaction is a run of graphs on a cluster (a top-level one
// lists its sub-transactions, one per graph, a sub-transaction its nodes'
// progress, NodeProgress).
type (
	ExecuteRequest = wire.ExecuteRequest
	GraphRun       = wire.GraphRun
	NodeID         = wire.NodeID
	Transaction    = wire.Transaction
	NodeProgress   = wire.NodeProgress
)

// Execute starts a transaction of the request's graphs. Nodes may be named
// by id, UUID or FQDN: they are sent as the registry's integer ids, which
// executions name nodes by at every microversion; from 1.2 on the cluster is
// sent as its UUID (spec 004).
func (c *Client) Execute(ctx context.Context, in ExecuteRequest) (*Transaction, error) {
	body, err := c.executeBody(ctx, in)
	if err != nil {
		return nil, err
	}
	var out Transaction
	_, err = c.call(ctx, http.MethodPost, graphsBase+"/graphs/execute", nil, body, &out)
	return &out, err
}

// executeBody is in with its node and cluster references in the forms the server takes.
func (c *Client) executeBody(ctx context.Context, in ExecuteRequest) (ExecuteRequest, error) {
	in.Graphs = slices.Clone(in.Graphs)
	for i, g := range in.Graphs {
		nodes, err := c.nodeIDs(ctx, g.Nodes)
		if err != nil {
			return in, err
		}
		in.Graphs[i].Nodes = nodes
	}
	if in.Cluster != nil {
		ref, err := c.Ref(ctx, KindEnvironment, string(*in.Cluster))
		if err != nil {
			return in, err
		}
		in.Cluster = (*ID)(&ref)
	}
	return in, nil
}

// nodeIDs gives nodes named by id, UUID or FQDN by their integer ids, as runs take them.
func (c *Client) nodeIDs(ctx context.Context, refs []NodeID) ([]NodeID, error) {
	nodes := make([]NodeID, len(refs))
	for j, n := range refs {
		if ident.IsIntegerID(string(n)) {
			nodes[j] = n
			continue
		}
		id, err := c.Resolve(ctx, KindNode, string(n))
		if err != nil {
			return nil, err
		}
		nodes[j] = NodeID(id.ID)
	}
	return nodes, nil
}

// Transaction reads a transaction by UUID.
func (c *Client) Transaction(ctx context.Context, uuid string) (*Transaction, error) {
	var out Transaction
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/transactions/"+esc(uuid), nil, nil, &out)
	return &out, err
}

// Plan is a sub-transaction's frozen plan: each node's tasks to run and to skip.
type Plan = wire.Plan

// TransactionPlan reads the plan of a sub-transaction, every page of it.
func (c *Client) TransactionPlan(ctx context.Context, uuid string) (*Plan, error) {
	var out *Plan
	_, err := pages(ctx, c, graphsBase+"/transactions/"+esc(uuid)+"/plan", nil, false, "node_tasks", func(page *Plan) ([]string, string) {
		if out == nil {
			out = page
		} else {
			maps.Copy(out.NodeTasks, page.NodeTasks)
			maps.Copy(out.Skipped, page.Skipped)
		}
		return slices.Collect(maps.Keys(page.NodeTasks)), nextPage(page.Links)
	})
	if err != nil {
		return nil, err
	}
	out.Links = nil
	return out, nil
}

// nextPage is the path of the page a listing's links name next ("" on the last).
func nextPage(links []wire.PageLink) string {
	for _, l := range links {
		if l.Rel == "next" {
			return l.Href
		}
	}
	return ""
}

// ClusterTasks is each node's task list of a cluster's graph, as a run
// would hand it out; Why explains one task's part in a node's plan.
type (
	ClusterTasks = wire.ClusterTasks
	Why          = wire.Why
	KeyOrigin    = wire.KeyOrigin
)

// PlanQuery asks for a preview of a run: of the graph of Type ("default"
// when empty), on Nodes (all the cluster's when none), as a forced run
// (Force), with each task explained (Explain).
type PlanQuery struct {
	Type           string
	Nodes          []NodeID
	Force, Explain bool
}

// SerializedTasks previews what a run on cluster would do on each node: its
// tasks as its agent would get them, the tasks it would skip and why, and
// the plan's warnings, every page of the answer. Nothing runs.
func (c *Client) SerializedTasks(ctx context.Context, cluster string, pq PlanQuery) (*ClusterTasks, error) {
	env, err := c.Ref(ctx, KindEnvironment, cluster)
	if err != nil {
		return nil, err
	}
	ids, err := c.nodeIDs(ctx, pq.Nodes)
	if err != nil {
		return nil, err
	}
	q := url.Values{"graph_type": {cmp.Or(pq.Type, "default")}}
	if len(ids) > 0 {
		names := make([]string, len(ids))
		for i, id := range ids {
			names[i] = string(id)
		}
		q.Set("nodes", strings.Join(names, ","))
	}
	if pq.Force {
		q.Set("force", "true")
	}
	if pq.Explain {
		q.Set("explain", "true")
	}
	var out *ClusterTasks
	all, err := pages(ctx, c, graphsBase+"/clusters/"+esc(env)+"/serialized_tasks", q, false, "nodes", func(page *ClusterTasks) ([]wire.NodeTasks, string) {
		if out == nil {
			out = page
		}
		return page.Nodes, nextPage(page.Links)
	})
	if err != nil {
		return nil, err
	}
	out.Nodes, out.Links = all, nil
	return out, nil
}

// StopTransaction stops a running transaction.
func (c *Client) StopTransaction(ctx context.Context, uuid string) (*Transaction, error) {
	var out Transaction
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/transactions/"+esc(uuid)+"/stop", nil, nil, &out)
	return &out, err
}

// RetryTransaction runs an ended transaction again as a new one: the whole
// execution, or with failed only the nodes that failed or did not finish,
// with the tasks they did not complete.
func (c *Client) RetryTransaction(ctx context.Context, uuid string, failed bool) (*Transaction, error) {
	var out Transaction
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/transactions/"+esc(uuid)+"/retry", nil, wire.RetryRequest{Failed: failed}, &out)
	return &out, err
}

// Claim is the answer to an agent's claim; TaskReport is what an agent reports of a task.
type (
	Claim      = wire.Claim
	TaskReport = wire.TaskReport
)

// ClaimWork asks for node's next task in whatever transaction runs on cluster
// (ids or UUIDs), waiting up to wait (at most 25 s) on the server for work.
func (c *Client) ClaimWork(ctx context.Context, cluster, node string, wait time.Duration) (*Claim, error) {
	var out Claim
	q := url.Values{"wait": {strconv.FormatFloat(wait.Seconds(), 'f', -1, 64)}}
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/clusters/"+esc(cluster)+"/nodes/"+esc(node)+"/claim", q, nil, &out)
	return &out, err
}

// Report reports the result of a task node ran in transaction tx.
func (c *Client) Report(ctx context.Context, tx, node string, rep TaskReport) error {
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/transactions/"+esc(tx)+"/nodes/"+esc(node)+"/result", nil, rep, nil)
	return err
}

// TransactionFilter selects transactions in Transactions; empty lists the newest, up to the server's cap.
type TransactionFilter struct {
	// Cluster is a cluster's id or UUID.
	Cluster string
	// Status is pending, running, ready or error.
	Status string
	// Limit caps how many transactions the server looks at (0: its own cap).
	Limit int
}

// Transactions lists top-level transactions, newest first.
func (c *Client) Transactions(ctx context.Context, f TransactionFilter) ([]Transaction, error) {
	q := url.Values{}
	if f.Cluster != "" {
		q.Set("cluster_id", f.Cluster)
	}
	if f.Status != "" {
		q.Set("status", f.Status)
	}
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	var out []Transaction
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/transactions", q, nil, &out)
	return out, err
}

// Claim claims node's next task in transaction tx. Repeated while the node
// runs the task, it returns that task again and is the agent's heartbeat.
func (c *Client) Claim(ctx context.Context, tx, node string) (*Claim, error) {
	var out Claim
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/transactions/"+esc(tx)+"/nodes/"+esc(node)+"/claim", nil, nil, &out)
	return &out, err
}
