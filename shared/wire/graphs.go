package wire

import (
	"encoding/json"
	"fmt"
	"time"
)

// TaskDocument is one deployment task as the API shows it: a JSON object with
// at least "id" and "type", every other field kept as its writer gave it.
type TaskDocument json.RawMessage

// MarshalJSON writes the task as it is (null when empty).
func (t TaskDocument) MarshalJSON() ([]byte, error) {
	if len(t) == 0 {
		return []byte("null"), nil
	}
	return t, nil
}

// ID is the task's id; "" when the document is not a task.
func (t TaskDocument) ID() string {
	var head struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(t, &head)
	return head.ID
}

// UnmarshalJSON keeps a copy of the task.
func (t *TaskDocument) UnmarshalJSON(b []byte) error {
	*t = append((*t)[:0], b...)
	return nil
}

// GraphHook is one of a graph's on_success / on_error / on_stop actions.
type GraphHook struct {
	NodeAttributes map[string]any `json:"node_attributes,omitempty"`
}

// Graph is a deployment graph.
type Graph struct {
	// ID is the legacy integer id before microversion 1.2, the UUID from 1.2 on.
	ID ID `json:"id"`
	// UUID is shown separately only before 1.2.
	UUID       string         `json:"uuid,omitempty"`
	Name       string         `json:"name"`
	NodeFilter string         `json:"node_filter,omitempty"`
	OnSuccess  *GraphHook     `json:"on_success,omitempty"`
	OnError    *GraphHook     `json:"on_error,omitempty"`
	OnStop     *GraphHook     `json:"on_stop,omitempty"`
	Tasks      []TaskDocument `json:"tasks"`
	Relations  []Relation     `json:"relations"`
}

// Relation names the model a graph belongs to.
type Relation struct {
	// Type is the graph's type ("default", "provision", ...).
	Type  string `json:"type"`
	Model string `json:"model" enum:"release,plugin,cluster"`
	// ModelID is the owner's id (its UUID from 1.2 on).
	ModelID ID `json:"model_id"`
}

// GraphInput creates or updates a graph. Absent fields are left as they are
// on update; tasks, when present, replace the whole list.
type GraphInput struct {
	Name       *string         `json:"name,omitempty"`
	NodeFilter *string         `json:"node_filter,omitempty"`
	OnSuccess  *GraphHook      `json:"on_success,omitempty"`
	OnError    *GraphHook      `json:"on_error,omitempty"`
	OnStop     *GraphHook      `json:"on_stop,omitempty"`
	Tasks      json.RawMessage `json:"tasks,omitempty" schema:"[]Task"`
}

// RegistryEntry is a release or a plugin.
type RegistryEntry struct {
	// ID is the legacy integer id before microversion 1.2, the UUID from 1.2 on.
	ID ID `json:"id"`
	// UUID is shown separately only before 1.2.
	UUID    string `json:"uuid,omitempty"`
	Name    string `json:"name"`
	Version string `json:"version"`
	EntryMetadata
}

// FullName is how the server names a release or a plugin in messages: name-version.
func (e RegistryEntry) FullName() string { return e.Name + "-" + e.Version }

// EntryMetadata is what a release (or a plugin) says of roles, as Nailgun's
// release does: roles_metadata maps a role to its tags (and other fields,
// kept as given), tags_metadata says which tags have a primary node.
type EntryMetadata struct {
	RolesMetadata map[string]json.RawMessage `json:"roles_metadata,omitempty"`
	TagsMetadata  map[string]json.RawMessage `json:"tags_metadata,omitempty"`
	// DeploymentInfoResource names the ConfigDB resource whose effective
	// document at a node is that node's deployment data ("astute" when empty).
	DeploymentInfoResource string `json:"deployment_info_resource,omitempty"`
}

// NewRegistryEntry creates (or replaces) a release or a plugin.
type NewRegistryEntry struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	EntryMetadata
}

// Cluster is an environment seen as a deployment cluster: its release and enabled plugins.
type Cluster struct {
	ID        ID   `json:"id"`
	ReleaseID *ID  `json:"release_id"`
	Plugins   []ID `json:"plugins"`
	// MasterIP is the Fuel master's address ({MASTER_IP} in tasks); absent:
	// each node's deployment data's master_ip.
	MasterIP string `json:"master_ip,omitempty"`
}

// ClusterUpdate sets a cluster's release and plugins (PUT: both are replaced).
type ClusterUpdate struct {
	ReleaseID *ID    `json:"release_id,omitempty" nullable:"true"`
	Plugins   *[]ID  `json:"plugins,omitempty"`
	MasterIP  string `json:"master_ip,omitempty"`
}

// ExecuteRequest runs graphs on a cluster (POST /api/v1/graphs/execute).
type ExecuteRequest struct {
	// Cluster is the cluster's id or UUID (a UUID from 1.2 on).
	Cluster *ID        `json:"cluster"`
	Graphs  []GraphRun `json:"graphs"`
	// DryRun plans, stores the plans and ends at once (no node runs anything);
	// NoopRun has the agents run the tasks in no-op mode.
	DryRun  bool `json:"dry_run"`
	NoopRun bool `json:"noop_run"`
	// Force and Debug are passed on to the agent with every task.
	Force bool `json:"force"`
	Debug bool `json:"debug"`
	// Explain keeps with each plan why each task is on each node and runs or
	// is skipped; the sub-transaction's plan shows it.
	Explain bool `json:"explain,omitempty"`
	// Subgraphs, when set, run only the tasks on a path from a start to an end task of one of them.
	Subgraphs []Subgraph `json:"subgraphs"`
	// ClaimTimeout is how many seconds a node has, from the start of each of
	// its sub-transactions, to claim there before it fails the run.
	ClaimTimeout *float64 `json:"claim_timeout"`
}

// GraphRun is one graph of an execution: a type, optionally limited to some
// nodes and to some tasks.
type GraphRun struct {
	Type string `json:"type"`
	// Nodes are node ids or FQDNs.
	Nodes []NodeID `json:"nodes"`
	Tasks []string `json:"tasks"`
	// SkipTasks are sent as skipped, like the tasks Tasks leaves out.
	SkipTasks []string `json:"skip_tasks,omitempty"`
}

// RetryRequest runs an ended transaction again (POST /api/v1/transactions/{uuid}/retry).
type RetryRequest struct {
	// Failed runs again only the nodes that failed or did not finish, with
	// the tasks they failed or did not run; without it, the whole execution.
	Failed bool `json:"failed"`
}

// Subgraph selects the tasks reachable from any Start task that reach any End
// task (both ends included); an empty side does not limit.
type Subgraph struct {
	Start []string `json:"start"`
	End   []string `json:"end"`
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

// Transaction is a run of graphs on a cluster; a top-level one lists its
// sub-transactions (one per graph), a sub-transaction its nodes' progress.
type Transaction struct {
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	Status  string `json:"status" enum:"pending,running,ready,error"`
	Message string `json:"message,omitempty"`
	// ClusterID is the legacy integer id before microversion 1.2, the UUID from 1.2 on.
	ClusterID  ID     `json:"cluster_id"`
	GraphType  string `json:"graph_type,omitempty"`
	ParentUUID string `json:"parent_uuid,omitempty"`
	DryRun     bool   `json:"dry_run"`
	NoopRun    bool   `json:"noop_run"`
	Force      bool   `json:"force"`
	Debug      bool   `json:"debug"`
	// ClaimTimeout is the execution's claim timeout in seconds.
	ClaimTimeout float64 `json:"claim_timeout,omitempty"`
	// FQDNs: node id -> FQDN, for the nodes the registry names.
	FQDNs map[string]string `json:"node_fqdns,omitempty"`
	// FailedNodes are the nodes that failed and FailedTasks the tasks that
	// failed them: a run ready with failures lost only nodes its groups'
	// fault tolerance allows.
	FailedNodes     []string       `json:"failed_nodes,omitempty"`
	FailedTasks     []NodeTaskRef  `json:"failed_tasks,omitempty"`
	TimeCreated     time.Time      `json:"time_created"`
	TimeStart       *time.Time     `json:"time_start,omitempty"`
	TimeEnd         *time.Time     `json:"time_end,omitempty"`
	SubTransactions []Transaction  `json:"sub_transactions,omitempty"`
	Nodes           []NodeProgress `json:"nodes,omitempty"`
}

// NodeProgress is how far one node has come through a sub-transaction's plan.
type NodeProgress struct {
	Node string `json:"node"`
	// Status: pending (not claimed yet), running, ready (plan done), error
	// (it failed) or stopped (the run ended before it finished).
	Status string `json:"status"`
	// Next is the position, in the node's own task list, of the task in
	// flight or of the first one not yet passed.
	Next int `json:"next"`
	// CurrentTask is the claimed task whose result is awaited.
	CurrentTask  string     `json:"current_task,omitempty"`
	CurrentStart *time.Time `json:"current_start,omitempty"`
	// LastSeen is when the node's agent last claimed or reported; nil until its first claim.
	LastSeen *time.Time   `json:"last_seen,omitempty"`
	Results  []TaskResult `json:"results"`
}

// TaskResult is the reported outcome of one task on one node.
type TaskResult struct {
	Task string `json:"task"`
	// Status: ready, skipped (not run, or a failure that does not count:
	// fail_on_error false or a noop run), error, or dep_failed (not run: a
	// task it waits for, or its node, failed).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	TaskRun
	TimeStart time.Time `json:"time_start"`
	TimeEnd   time.Time `json:"time_end"`
}

// TaskRun is what an agent tells of a task it ran.
type TaskRun struct {
	// ExitCode is the exit status of the task's process.
	ExitCode *int `json:"exit_code,omitempty"`
	// Duration is the run time the agent measured, in seconds.
	Duration *float64 `json:"duration,omitempty"`
	// Output is the tail of the task's output.
	Output string `json:"output,omitempty"`
}

// TaskReport is an agent's result for the task it claimed.
type TaskReport struct {
	Task string `json:"task"`
	// Status is ready, skipped (the agent decided not to run it) or error.
	Status  string `json:"status" enum:"ready,skipped,error"`
	Message string `json:"message"`
	TaskRun
}

// Claim states what a node's agent is to do next: "task" (run Task, then
// report its result), "wait" (claim again later), "done" (nothing left in
// this transaction) or, for a claim in a cluster, "idle" (no transaction runs).
type Claim struct {
	Action            string `json:"action" enum:"task,wait,done,idle"`
	Transaction       string `json:"transaction"`
	TransactionStatus string `json:"transaction_status"`
	Node              string `json:"node"`
	SubTransaction    string `json:"sub_transaction,omitempty"`
	GraphType         string `json:"graph_type,omitempty"`
	// Position is the task's index in the sub-transaction's plan.
	Position *int         `json:"position,omitempty"`
	Task     TaskDocument `json:"task,omitempty"`
	// Heartbeat, with a task, is how often (seconds) the agent claims again
	// while it runs the task.
	Heartbeat float64 `json:"heartbeat,omitempty"`
	DryRun    bool    `json:"dry_run"`
	NoopRun   bool    `json:"noop_run"`
	Force     bool    `json:"force"`
	Debug     bool    `json:"debug"`
	// NodeStatus, with done, is how the node did in the transaction: ready,
	// error (it failed) or stopped (the run ended, or is stopping, before
	// the node finished its part).
	NodeStatus string `json:"node_status,omitempty" enum:"ready,error,stopped"`
}

// Plan is the frozen plan of a sub-transaction: Tasks in dependency order,
// and for each node the tasks it runs, in that order, as its agent gets them.
type Plan struct {
	Transaction string                      `json:"transaction"`
	GraphType   string                      `json:"graph_type"`
	Nodes       []string                    `json:"nodes"`
	Tasks       []TaskDocument              `json:"tasks"`
	NodeTasks   map[string][]SerializedTask `json:"node_tasks"`
	// Skipped: node -> the tasks placed on it that it passes without running them.
	Skipped  map[string][]SkippedTask `json:"skipped"`
	Warnings []string                 `json:"warnings,omitempty"`
	Unplaced []string                 `json:"unplaced,omitempty"`
	// Links has the "next" page when the node lists did not all fit: Nodes
	// lists every node, NodeTasks and Skipped the page's.
	Links []PageLink `json:"links,omitempty"`
	// FaultToleranceGroups say how many nodes of each group may fail; a node in none is critical.
	FaultToleranceGroups []FaultToleranceGroup `json:"fault_tolerance_groups,omitempty"`
}

// FaultToleranceGroup is a group task's nodes and how many of them may fail
// before the run stops (Nailgun's fault_tolerance_groups).
type FaultToleranceGroup struct {
	Name           string   `json:"name"`
	Nodes          []string `json:"node_ids"`
	FaultTolerance int      `json:"fault_tolerance"`
}

// SerializedTask is a task of a node's list as the node's agent gets it,
// with the tasks of other nodes it waits for.
type SerializedTask struct {
	Task       TaskDocument    `json:"task"`
	WaitFor    []NodeTaskRef   `json:"wait_for,omitempty"`
	WaitForAny [][]NodeTaskRef `json:"wait_for_any,omitempty"`
	// WaitForEvery are tasks waited for on every node of the plan that has
	// them (runs, skips or passes them), the master excepted: a cross
	// dependency with no role or "*" once the task is on 64 nodes or more,
	// listed once rather than as a wait_for entry per node.
	WaitForEvery []TaskOnEveryNode `json:"wait_for_every,omitempty"`
	// Why, with ?explain, says why the task is on the node and runs.
	Why *Why `json:"why,omitempty"`
}

// Why explains one task's part in one node's plan: what placed it on the
// node, and why it runs or is skipped there.
type Why struct {
	// Placed names the placement name that took the node and what it matched
	// (a tag and the role it comes from, a role, a group, every node).
	Placed string `json:"placed"`
	// Decision says why the task runs or is skipped: its condition's value,
	// the run's selection, its type.
	Decision string `json:"decision"`
	// Data says what the node's old data ($%old) is: its last successful
	// run's, none (a first deployment) or ignored (a forced run).
	Data string `json:"data,omitempty"`
	// Condition is the task's yaql condition, its value on the node and the
	// data-diff calls that gave it.
	Condition *ConditionWhy `json:"condition,omitempty"`
}

// ConditionWhy is a condition's evaluation on one node.
type ConditionWhy struct {
	Expression string         `json:"expression"`
	Value      any            `json:"value"`
	Calls      []DataDiffCall `json:"calls,omitempty"`
}

// DataDiffCall is one comparison of old and new data a condition made:
// the function, the call and the argument compared (the keys it read),
// the argument's values as JSON text (cut to MaxExplainedValue bytes;
// absent when that side was not read) and the answer.
type DataDiffCall struct {
	Function string  `json:"function"`
	Call     string  `json:"call"`
	Arg      string  `json:"arg"`
	Old      *string `json:"old,omitempty"`
	New      *string `json:"new,omitempty"`
	Result   any     `json:"result"`
	// Written, for a changed key (an argument that is a plain path such as
	// $.glance.image_cache_max_size), is the document version that wrote its
	// value now; Deployed the one that had written it at the node's last
	// successful run (absent on a first deployment).
	Written  *KeyOrigin `json:"written,omitempty"`
	Deployed *KeyOrigin `json:"deployed,omitempty"`
}

// KeyOrigin is the document version that wrote a key's value: the level
// ("/" is the environment's), the version, when and by whom.
type KeyOrigin struct {
	Key       string    `json:"key"`
	Level     string    `json:"level"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	WrittenBy *Writer   `json:"written_by,omitempty"`
}

// MaxExplainedValue bounds each value an explanation quotes.
const MaxExplainedValue = 256

// TaskOnEveryNode is a task waited for on every node that has it, and how many nodes have it.
type TaskOnEveryNode struct {
	Task  string `json:"task"`
	Nodes int    `json:"nodes"`
}

// NodeTaskRef names a task on a node.
type NodeTaskRef struct {
	Node string `json:"node"`
	Task string `json:"task"`
}

// SkippedTask is a task placed on a node that the node passes without running it.
type SkippedTask struct {
	Task   string `json:"task"`
	Reason string `json:"reason"`
	// Why, with ?explain, says what placed the task and why it is skipped.
	Why *Why `json:"why,omitempty"`
}

// NodeTasks is one node's task list, and the tasks placed on it that it skips.
type NodeTasks struct {
	Node    string           `json:"node"`
	Roles   []string         `json:"roles"`
	Tasks   []SerializedTask `json:"tasks"`
	Skipped []SkippedTask    `json:"skipped"`
}

// ClusterTasks is the answer of serialized_tasks: each node's task list.
type ClusterTasks struct {
	// Cluster is the cluster's integer id (at every microversion).
	Cluster   int64       `json:"cluster"`
	GraphType string      `json:"graph_type"`
	Nodes     []NodeTasks `json:"nodes"`
	Warnings  []string    `json:"warnings,omitempty"`
	Unplaced  []string    `json:"unplaced,omitempty"`
	// Links has the "next" page when the nodes did not all fit.
	Links []PageLink `json:"links,omitempty"`
}
