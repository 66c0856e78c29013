package graphs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// ExecuteRequest is the body of POST /graphs/execute.
type ExecuteRequest struct {
	Cluster *int64     `json:"cluster"`
	Graphs  []GraphRun `json:"graphs"`
	// DryRun plans and stores the plans, and ends at once: no node runs
	// anything and the cluster is not held (Astute's dry run never touched
	// the nodes). NoopRun has the agents run the tasks in no-op mode.
	DryRun  bool `json:"dry_run"`
	NoopRun bool `json:"noop_run"`
	// Force and Debug are passed on to the agent with every task.
	Force bool `json:"force"`
	Debug bool `json:"debug"`
	// Explain keeps with each plan why each task is on each node (frozenPlan.Why).
	Explain bool `json:"explain"`
	// Subgraphs, when set, run only the tasks on a path from a start to an end task of one of them.
	Subgraphs []planner.Subgraph `json:"subgraphs"`
	// ClaimTimeout is how many seconds a node has, from the start of each of
	// its sub-transactions, to claim there before it fails the run as
	// unreachable (DefaultClaimTimeout when absent).
	ClaimTimeout *float64 `json:"claim_timeout"`
}

// GraphRun is one graph of an execution: a type, optionally limited to some
// nodes and to some tasks (every other task that does real work is sent as skipped).
type GraphRun struct {
	Type string `json:"type"`
	// Nodes are node ids or FQDNs.
	Nodes []NodeID `json:"nodes"`
	Tasks []string `json:"tasks"`
	// SkipTasks are sent as skipped, like the tasks Tasks leaves out.
	SkipTasks []string `json:"skip_tasks"`
}

// NodeID is a node id, given in JSON as a string or an integer.
type NodeID string

// UnmarshalJSON accepts "7", 7 or "node-uuid".
func (n *NodeID) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*n = NodeID(s)
		return nil
	}
	var i int64
	if err := json.Unmarshal(b, &i); err != nil {
		return fmt.Errorf("node id %s must be a string or an integer", b)
	}
	*n = NodeID(fmt.Sprint(i))
	return nil
}

// Transaction statuses: wire's, the one definition the agent and the CLI share.
const (
	StatusPending   = wire.StatusPending
	StatusRunning   = wire.StatusRunning
	StatusReady     = wire.StatusReady
	StatusError     = wire.StatusError
	StatusSkipped   = wire.StatusSkipped
	StatusDepFailed = wire.StatusDepFailed
	StatusStopped   = wire.StatusStopped
)

// AbortedMessage is the message of the sub-transactions a failure kept from running.
const AbortedMessage = "Aborted"

// maxGraphsPerExecution keeps an execution's creation, and its abort, within one atomic write.
const maxGraphsPerExecution = store.MaxWriteBatch - 3

// TransactionInfo is what every transaction shows.
type TransactionInfo struct {
	UUID       string `json:"uuid"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	Message    string `json:"message,omitempty"`
	ClusterID  int64  `json:"cluster_id"`
	GraphType  string `json:"graph_type,omitempty"`
	ParentUUID string `json:"parent_uuid,omitempty"`
	DryRun     bool   `json:"dry_run"`
	NoopRun    bool   `json:"noop_run"`
	Force      bool   `json:"force"`
	Debug      bool   `json:"debug"`
	// ClaimTimeout is the execution's claim timeout in seconds.
	ClaimTimeout float64 `json:"claim_timeout,omitempty"`
	// FQDNs: node id -> FQDN, for the nodes of the transaction the registry names.
	FQDNs map[string]string `json:"node_fqdns,omitempty"`
	// FailedNodes are the nodes that failed, and FailedTasks the tasks that
	// failed them (Astute's failed_nodes and failed_tasks): a run that ends
	// ready with failures lost only nodes its fault tolerance allowed.
	FailedNodes []string      `json:"failed_nodes,omitempty"`
	FailedTasks []NodeTaskRef `json:"failed_tasks,omitempty"`

	TimeCreated time.Time  `json:"time_created"`
	TimeStart   *time.Time `json:"time_start,omitempty"`
	TimeEnd     *time.Time `json:"time_end,omitempty"`
}

// txRecord is a stored transaction: a top-level one lists its sub-transactions;
// a sub-transaction holds its nodes and the hash of its frozen plan.
type txRecord struct {
	TransactionInfo
	Subs     []string `json:"subs,omitempty"`
	Current  int      `json:"current,omitempty"`
	Nodes    []string `json:"nodes,omitempty"`
	Finished int      `json:"finished,omitempty"`
	Plan     string   `json:"plan,omitempty"`

	// Idle are the nodes with nothing to do in the sub-transaction: ready from its start.
	Idle []string `json:"idle,omitempty"`
	// Request, on a top-level transaction, is the execution as requested (what a retry repeats).
	Request *ExecuteRequest `json:"request,omitempty"`
	// Stopping, once set, is why the run stops (a failure beyond the fault
	// tolerance): nothing new starts, and it ends when the nodes in Draining
	// have reported the task they were running.
	Stopping string   `json:"stopping,omitempty"`
	Draining []string `json:"draining,omitempty"`
}

func txKey(id string) store.Key  { return store.Key{Partition: prefix + "tx", Sort: id} }
func subKey(id string) store.Key { return store.Key{Partition: prefix + "txsub", Sort: id} }
func lockKey(cluster int64) store.Key {
	return store.Key{Partition: prefix + "lock", Sort: store.SortID(cluster)}
}
func historyPartition(cluster int64) string { return prefix + "txcluster#" + store.SortID(cluster) }
func progressKey(sub, node string) store.Key {
	return store.Key{Partition: prefix + "txnode#" + sub, Sort: node}
}

// clusterLock is the item that exists while a cluster runs a transaction.
type clusterLock struct {
	Transaction string `json:"transaction"`
}

// runningOn refuses a cluster that runs a transaction (unless that one just
// ended on a missed deadline).
func (s *Service) runningOn(ctx context.Context, cluster int64) error {
	var lock clusterLock
	_, err := store.GetJSON(ctx, s.idx, lockKey(cluster), &lock)
	if err == nil {
		var ended bool
		if ended, err = s.checkDeadlines(ctx, lock.Transaction); ended {
			return nil
		}
	}
	switch {
	case err == nil:
		return errs.Conflictf("Cluster %d already runs transaction %s", cluster, lock.Transaction)
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return err
	}
}

// Execute freezes the plan of each requested graph and creates the running
// transaction with one sub-transaction per graph. The cluster lock item is
// created in the same atomic write, so two executions cannot both start.
func (s *Service) Execute(ctx context.Context, req ExecuteRequest) (_ Transaction, err error) {
	if req.Cluster == nil {
		return Transaction{}, errs.Invalidf("cluster: is required")
	}
	if len(req.Graphs) == 0 {
		return Transaction{}, errs.Invalidf("graphs: at least one graph is required")
	}
	if len(req.Graphs) > maxGraphsPerExecution {
		return Transaction{}, errs.Invalidf("graphs: at most %d graphs per execution", maxGraphsPerExecution)
	}
	for i, g := range req.Graphs {
		if err := ValidateType(g.Type); err != nil {
			return Transaction{}, errs.Invalidf("graphs[%d].type: %s", i, errs.Message(err))
		}
	}
	claimTimeout, err := claimTimeoutOf(req.ClaimTimeout)
	if err != nil {
		return Transaction{}, err
	}
	cid := *req.Cluster
	dryRun := req.DryRun && !req.NoopRun
	// Nodes doubles as the existence check: an unknown cluster is a 404 before any 409.
	clusterNodes, err := s.clusters.Nodes(ctx, clusterName(cid))
	if err != nil {
		return Transaction{}, err
	}
	if err := s.runningOn(ctx, cid); err != nil && !dryRun {
		return Transaction{}, err
	}
	now := s.now()
	parent := txRecord{TransactionInfo: TransactionInfo{
		UUID: newUUID(), Name: "deploy", Status: StatusRunning, ClusterID: cid,
		DryRun: req.DryRun || req.NoopRun, NoopRun: req.NoopRun, Force: req.Force, Debug: req.Debug,
		ClaimTimeout: claimTimeout.Seconds(), TimeCreated: now, TimeStart: &now,
	}, Request: &req}
	subs := make([]txRecord, len(req.Graphs))
	plans := map[string][]store.Op{} // the references of the plans' blobs, by hash
	var planHashes []string
	planCtx, budget, finish := s.planning(ctx)
	defer finish(&err)
	for i, run := range req.Graphs {
		src, err := s.loadSources(ctx, cid, run.Type, nil)
		if err != nil {
			return Transaction{}, err
		}
		m, err := s.mergedOf(src, run.Type, false)
		if err != nil {
			return Transaction{}, err
		}
		nodes, err := selectNodes(cid, clusterNodes, run.Nodes)
		if err != nil {
			return Transaction{}, err
		}
		frozen, err := s.plan(planCtx, planRequest{cluster: cid, graphType: run.Type, merged: m, run: run, subgraphs: req.Subgraphs, nodes: nodes, force: req.Force, explain: req.Explain, budget: budget})
		if err != nil {
			return Transaction{}, err
		}
		// Beside the plans' blobs, the write holds the lock, the transaction,
		// its history entry, and per graph a sub-transaction and a deployed state.
		hash, planOps, err := storePlan(ctx, frozen, nodeIDs(nodes), planParts(len(req.Graphs), 3+2*len(req.Graphs)), s.referencedBlob)
		if err != nil {
			return Transaction{}, err
		}
		if _, seen := plans[hash]; !seen {
			plans[hash] = planOps // one reference per plan: sub-transactions may share one
			planHashes = append(planHashes, hash)
		}
		info := parent.TransactionInfo
		info.UUID, info.Name, info.Status, info.GraphType, info.ParentUUID = newUUID(), "deployment", StatusPending, run.Type, parent.UUID
		info.TimeStart, info.FQDNs = nil, fqdns(nodes)
		for id, fqdn := range info.FQDNs {
			if parent.FQDNs == nil {
				parent.FQDNs = map[string]string{}
			}
			parent.FQDNs[id] = fqdn
		}
		if i == 0 {
			info.Status, info.TimeStart = StatusRunning, &now
		}
		idle := frozen.idleNodes(nodeIDs(nodes))
		if dryRun {
			idle = nodeIDs(nodes)
		}
		subs[i] = txRecord{TransactionInfo: info, Nodes: nodeIDs(nodes), Idle: idle, Finished: len(idle), Plan: hash}
		parent.Subs = append(parent.Subs, info.UUID)
	}
	// Sub-transactions whose nodes all have nothing to do are done at once (a dry run's all are).
	settle(&parent, subs, now)
	if dryRun {
		parent.Message = DryRunMessage
	}
	var ops []store.Op
	if parent.Status == StatusRunning {
		ops = append(ops, store.Create(lockKey(cid), mustJSON(clusterLock{Transaction: parent.UUID})))
	}
	ops = append(ops,
		store.Create(txKey(parent.UUID), mustJSON(parent)),
		store.Create(store.Key{Partition: historyPartition(cid), Sort: parent.UUID}, []byte("{}")),
	)
	for _, sub := range subs {
		ops = append(ops, store.Create(subKey(sub.UUID), mustJSON(sub)))
	}
	for _, h := range planHashes {
		ops = append(ops, plans[h]...)
	}
	types := make([]string, len(req.Graphs))
	for i, g := range req.Graphs {
		types[i] = g.Type
	}
	deployed, err := s.deployedOps(ctx, cid, types)
	if err != nil {
		return Transaction{}, err
	}
	ops = append(ops, deployed...)
	if err := s.idx.Write(ctx, ops...); err != nil {
		if errors.Is(err, store.ErrConflict) {
			if err := s.runningOn(ctx, cid); err != nil {
				return Transaction{}, err
			}
		}
		return Transaction{}, err
	}
	s.states.count(runsFamily, StatusRunning)
	s.executions.notify()
	return parentView(parent, subs), nil
}

// newUUID returns a time-ordered UUID, so transactions list in creation order.
func newUUID() string { return uuid.Must(uuid.NewV7()).String() }

// fqdns maps the nodes' ids to their FQDNs (nil when none has one).
func fqdns(nodes []planner.ClusterNode) map[string]string {
	var out map[string]string
	for _, n := range nodes {
		if n.FQDN != "" {
			if out == nil {
				out = map[string]string{}
			}
			out[n.ID] = n.FQDN
		}
	}
	return out
}

// nodeName names a node of the transaction: its id, and its FQDN when known.
func (info TransactionInfo) nodeName(id string) string {
	if fqdn := info.FQDNs[id]; fqdn != "" {
		return id + " (" + fqdn + ")"
	}
	return id
}

// selectNodes returns the requested nodes, by id or FQDN (all the cluster's
// when none are requested), refusing any that is not in the cluster.
func selectNodes(cluster int64, clusterNodes []planner.ClusterNode, requested []NodeID) ([]planner.ClusterNode, error) {
	if len(clusterNodes) == 0 {
		return nil, errs.Invalidf("Cluster %d has no nodes", cluster)
	}
	if len(requested) == 0 {
		return clusterNodes, nil
	}
	var nodes []planner.ClusterNode
	var unknown []string
	for _, n := range requested {
		id := string(n)
		i := slices.IndexFunc(clusterNodes, func(c planner.ClusterNode) bool { return c.ID == id || c.FQDN != "" && c.FQDN == id })
		switch {
		case i < 0:
			unknown = append(unknown, id)
		case !slices.ContainsFunc(nodes, func(c planner.ClusterNode) bool { return c.ID == clusterNodes[i].ID }):
			nodes = append(nodes, clusterNodes[i])
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, errs.Invalidf("Nodes %s are not members of cluster %d", strings.Join(slices.Compact(unknown), ", "), cluster)
	}
	return nodes, nil
}

func nodeIDs(nodes []planner.ClusterNode) []string {
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		ids[i] = n.ID
	}
	return ids
}
