package client

import (
	"context"
	"encoding/json"
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
		nodes := make([]NodeID, len(g.Nodes))
		for j, n := range g.Nodes {
			if ident.IsIntegerID(string(n)) {
				nodes[j] = n
				continue
			}
			id, err := c.Resolve(ctx, KindNode, string(n))
			if err != nil {
				return in, err
			}
			nodes[j] = NodeID(id.ID)
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

// Transaction reads a transaction by UUID.
func (c *Client) Transaction(ctx context.Context, uuid string) (*Transaction, error) {
	var out Transaction
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/transactions/"+esc(uuid), nil, nil, &out)
	return &out, err
}

// Plan is a sub-transaction's frozen plan: each node's tasks to run and to skip.
type Plan = wire.Plan

// TransactionPlan reads the plan of a sub-transaction.
func (c *Client) TransactionPlan(ctx context.Context, uuid string) (*Plan, error) {
	var out Plan
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/transactions/"+esc(uuid)+"/plan", nil, nil, &out)
	return &out, err
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
