package graphs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Transaction is a transaction as the API shows it: a top-level one with its
// sub-transactions, a sub-transaction with the progress of its nodes.
type Transaction struct {
	TransactionInfo
	SubTransactions []Transaction  `json:"sub_transactions,omitempty"`
	Nodes           []NodeProgress `json:"nodes,omitempty"`
}

// NodeProgress is how far one node has come through a sub-transaction's plan.
type NodeProgress struct {
	Node string `json:"node"`
	// Status: pending (not claimed yet), running, ready (plan done) or error.
	Status string `json:"status"`
	// Next is the position, in the node's own task list, of the task in
	// flight or of the first one not yet passed.
	Next int `json:"next"`
	// CurrentTask is the claimed task whose result is awaited.
	CurrentTask  string     `json:"current_task,omitempty"`
	CurrentStart *time.Time `json:"current_start,omitempty"`
	// LastSeen is when the node's agent last claimed (a heartbeat included)
	// or reported in the sub-transaction; nil until its first claim.
	LastSeen *time.Time   `json:"last_seen,omitempty"`
	Results  []TaskResult `json:"results"`
	// FailedAt, on a failed node, is the position of the first step that failed or was dep_failed.
	FailedAt *int `json:"failed_at,omitempty"`
}

// failedAt says whether the node failed its step at position step (or was
// dep_failed there): it failed at or before it.
func (p NodeProgress) failedAt(step int) bool { return p.FailedAt != nil && step >= *p.FailedAt }

// passed says whether the node passed its step at position step: its Next is
// beyond it (reported, or passed on the way) or it finished, and the step did not fail.
func (p NodeProgress) passed(step int) bool {
	return (p.Status == StatusReady || p.Next > step) && !p.failedAt(step)
}

// TaskResult is the reported outcome of one task on one node.
type TaskResult struct {
	Task    string `json:"task"`
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

// MaxReportOutput bounds the output tail a report may carry. A node's
// results share one index item, so a result keeps the whole tail only when
// the task failed, and the last keptOutput bytes otherwise.
const (
	MaxReportOutput = 4 << 10
	keptOutput      = 256
)

// kept returns the run as a result stores it.
func (r TaskRun) kept(status string) TaskRun {
	if status != StatusError && len(r.Output) > keptOutput {
		r.Output = strings.ToValidUTF8(r.Output[len(r.Output)-keptOutput:], "")
	}
	return r
}

// Plan is the frozen plan of a sub-transaction: Tasks in dependency order,
// and for each node the tasks it runs, in that order, as its agent gets them.
type Plan struct {
	Transaction string                      `json:"transaction"`
	GraphType   string                      `json:"graph_type"`
	Nodes       []string                    `json:"nodes"`
	Tasks       []planner.Task              `json:"tasks"`
	NodeTasks   map[string][]SerializedTask `json:"node_tasks"`
	// Skipped: node -> the tasks placed on it that it passes without running them.
	Skipped  map[string][]SkippedTask `json:"skipped"`
	Warnings []string                 `json:"warnings,omitempty"`
	Unplaced []string                 `json:"unplaced,omitempty"`
	// FaultToleranceGroups say how many nodes of each group may fail; a node in none is critical.
	FaultToleranceGroups []planner.FaultToleranceGroup `json:"fault_tolerance_groups,omitempty"`
}

// frozenPlan is the stored plan of a sub-transaction (an immutable blob).
// Plans stored before tasks were resolved per node are a bare task list,
// which every node runs whole.
type frozenPlan struct {
	Tasks []planner.Task                `json:"tasks"`
	Nodes map[string][]planner.NodeStep `json:"nodes"`
	// Limits caps, by task id, how many nodes may run the task at once (absent: no cap).
	Limits map[string]int `json:"limits,omitempty"`
	// Data: node -> the deployment data its conditions read.
	Data map[string]DataPin `json:"data,omitempty"`
	// Old: node -> the deployment data of its last successful run ($%old), when it had one.
	Old map[string]DataPin `json:"old,omitempty"`
	// Resource is the ConfigDB resource Data and Old name versions of.
	Resource string `json:"resource,omitempty"`
	// Vars: node -> its placeholder values, for the nodes with a task whose body renders per node.
	Vars map[string]map[string]string `json:"vars,omitempty"`
	// Every: task -> its step on each node that has it, the master excepted,
	// for the tasks steps wait for on every node (NodeStep.AfterEvery).
	Every map[int][]planner.StepRef `json:"every,omitempty"`
	// Warnings name what the graph refers to and the cluster does not have.
	Warnings []string `json:"warnings,omitempty"`
	// Unplaced are the tasks placed on no node.
	Unplaced []string `json:"unplaced,omitempty"`
	// Groups are the fault-tolerance groups; plans stored without them make
	// every node critical.
	Groups []planner.FaultToleranceGroup `json:"groups,omitempty"`
	// planned are the nodes as the plan read them (their data), while the plan is being made.
	planned []planner.PlanNode
	// Why, for an explained plan: node -> why each task is on it (by task
	// index); stored with the pages of an explained serialized_tasks.
	Why map[string][]*wire.Why `json:"why,omitempty"`
}

// handedOut says whether a step's task is given to an agent: not a group,
// stage or skipped task, and not a step the plan passes (Skip).
func (p *frozenPlan) handedOut(step planner.NodeStep) bool {
	return step.Skip == "" && !p.Tasks[step.Task].NoOp()
}

// idleNodes are the nodes with nothing to do: no step handed out and none
// that waits for other nodes, so no claim of theirs is needed to finish.
func (p *frozenPlan) idleNodes(nodes []string) []string {
	var idle []string
	for _, n := range nodes {
		steps := p.steps(n)
		if p.nextRunnable(steps, 0) == len(steps) && !slices.ContainsFunc(steps, planner.NodeStep.Waits) {
			idle = append(idle, n)
		}
	}
	return idle
}

// steps returns a node's task list.
func (p *frozenPlan) steps(node string) []planner.NodeStep {
	if p.Nodes != nil {
		return p.Nodes[node]
	}
	all := make([]planner.NodeStep, len(p.Tasks))
	for i := range all {
		all[i].Task = i
	}
	return all
}

// Claim states what a node's agent is to do next.
type Claim struct {
	// Action is "task" (run Task, then report its result), "wait" (claim again
	// later: other nodes are still busy or this node's next graph has not
	// started) or "done" (nothing left for this node in this transaction).
	Action            string `json:"action"`
	Transaction       string `json:"transaction"`
	TransactionStatus string `json:"transaction_status"`
	Node              string `json:"node"`
	SubTransaction    string `json:"sub_transaction,omitempty"`
	GraphType         string `json:"graph_type,omitempty"`
	// Position is the task's index in the sub-transaction's plan.
	Position *int `json:"position,omitempty"`
	// Task is the task as the node runs it: rendered with the node's data
	// (placeholders, yaql in parameters), as Nailgun sent it.
	Task wire.TaskDocument `json:"task,omitempty"`
	// Heartbeat, with a task, is how often (seconds) the agent claims again
	// while it runs the task, to show it is alive (see Service.Claim).
	Heartbeat float64 `json:"heartbeat,omitempty"`
	DryRun    bool    `json:"dry_run"`
	NoopRun   bool    `json:"noop_run"`
	Force     bool    `json:"force"`
	Debug     bool    `json:"debug"`
	// NodeStatus, with done, is how the node did in the transaction: ready,
	// error (it failed) or stopped (the run ended, or is stopping, before
	// the node finished its part).
	NodeStatus string `json:"node_status,omitempty"`
}

// DryRunMessage is the message of a dry run, which ends as soon as it is planned.
const DryRunMessage = "Dry run: planned; no node ran anything"

// Claim actions.
const (
	ActionTask = "task"
	ActionWait = "wait"
	ActionDone = "done"
)

// TaskReport is an agent's result for the task it claimed.
type TaskReport struct {
	Task string `json:"task"`
	// Status is ready, skipped (the agent decided not to run it) or error.
	Status  string `json:"status"`
	Message string `json:"message"`
	TaskRun
}

func parentView(parent txRecord, subs []txRecord) Transaction {
	v := Transaction{TransactionInfo: parent.TransactionInfo, SubTransactions: make([]Transaction, len(subs))}
	for i, sub := range subs {
		v.SubTransactions[i] = Transaction{TransactionInfo: sub.TransactionInfo}
	}
	return v
}

func checkUUID(id string) error {
	if !ident.IsUUID(id) {
		return errs.Invalidf("Invalid uuid %s", id)
	}
	return nil
}

func txNotFound(id string) error { return errs.NotFoundf("Transaction %s not found", id) }

// txState is one read of a top-level transaction and its sub-transactions.
type txState struct {
	parent  txRecord
	rev     int64
	subs    []txRecord
	subRevs []int64
}

// loadTx reads a top-level transaction; a running one that missed a deadline
// is ended first (enforceDeadlines), so every caller sees the outcome.
func (s *Service) loadTx(ctx context.Context, id string) (*txState, error) {
	st, err := s.readTx(ctx, id)
	if err != nil {
		return nil, err
	}
	return st, s.enforceDeadlines(ctx, st)
}

func (s *Service) readTx(ctx context.Context, id string) (*txState, error) {
	if err := checkUUID(id); err != nil {
		return nil, err
	}
	it, err := s.idx.Get(ctx, txKey(id))
	if err != nil {
		return nil, notFoundIf(err, txNotFound(id))
	}
	st := &txState{rev: it.Revision}
	if err := decodeItem(it, &st.parent); err != nil {
		return nil, err
	}
	st.subs, st.subRevs, err = s.loadSubs(ctx, st.parent.Subs)
	return st, err
}

func (s *Service) loadSubs(ctx context.Context, ids []string) ([]txRecord, []int64, error) {
	keys := make([]store.Key, len(ids))
	for i, id := range ids {
		keys[i] = subKey(id)
	}
	items, err := s.getMany(ctx, keys)
	if err != nil {
		return nil, nil, err
	}
	subs, revs := make([]txRecord, len(ids)), make([]int64, len(ids))
	for i, k := range keys {
		it, ok := items[k]
		if !ok {
			return nil, nil, fmt.Errorf("sub-transaction %s is missing", k.Sort)
		}
		if err := decodeItem(it, &subs[i]); err != nil {
			return nil, nil, err
		}
		revs[i] = it.Revision
	}
	return subs, revs, nil
}

func (st *txState) current() txRecord { return st.subs[st.parent.Current] }

// involves reports whether node takes part in any sub-transaction.
func (st *txState) involves(node string) bool {
	for _, sub := range st.subs {
		if slices.Contains(sub.Nodes, node) {
			return true
		}
	}
	return false
}

// laterWork says what a node without a task in the current sub-transaction does: wait or stop.
func (st *txState) laterWork(node string) string {
	for _, sub := range st.subs[st.parent.Current+1:] {
		if slices.Contains(sub.Nodes, node) {
			return ActionWait
		}
	}
	return ActionDone
}

func (st *txState) claim(action, node string) Claim {
	c := Claim{
		Action: action, Transaction: st.parent.UUID, TransactionStatus: st.parent.Status, Node: node,
		DryRun: st.parent.DryRun, NoopRun: st.parent.NoopRun, Force: st.parent.Force, Debug: st.parent.Debug,
	}
	if action == ActionTask {
		c.SubTransaction, c.GraphType = st.current().UUID, st.current().GraphType
	}
	return c
}

// parentOp writes the parent record at the revision it was read.
func (st *txState) parentOp() store.Op {
	return store.Update(txKey(st.parent.UUID), mustJSON(st.parent), st.rev)
}

func (st *txState) subOp(i int) store.Op {
	return store.Update(subKey(st.subs[i].UUID), mustJSON(st.subs[i]), st.subRevs[i])
}

// subGuardOp makes a write fail if the current sub-transaction changed meanwhile.
func (st *txState) subGuardOp() store.Op {
	cur := st.parent.Current
	return store.Check(subKey(st.subs[cur].UUID), store.Cond{Kind: store.RevisionIs, Revision: st.subRevs[cur]})
}

// guardOp makes a write that leaves the parent as it is fail if the parent changed meanwhile.
func (st *txState) guardOp() store.Op {
	return store.Check(txKey(st.parent.UUID), store.Cond{Kind: store.RevisionIs, Revision: st.rev})
}

// finishNodeOps records that a node completed the current sub-transaction and,
// when it was the last of its nodes, starts the next sub-transaction or
// completes the transaction (releasing the cluster).
func (st *txState) finishNodeOps(progress []store.Op, now time.Time) []store.Op {
	cur := st.parent.Current
	st.subs[cur].Finished++
	settle(&st.parent, st.subs, now)
	ops := slices.Clone(progress)
	if st.subs[cur].Status == StatusRunning {
		return append(ops, st.subOp(cur), st.guardOp())
	}
	for i := cur; i <= st.parent.Current; i++ {
		ops = append(ops, st.subOp(i))
	}
	if st.parent.Status == StatusReady {
		ops = append(ops, store.Delete(lockKey(st.parent.ClusterID)))
	}
	return append(ops, st.parentOp())
}

// settle completes the current sub-transaction while all its nodes are
// ready, starting the next one (whose idle nodes are ready from the start)
// or, after the last, completing the transaction.
func settle(parent *txRecord, subs []txRecord, now time.Time) {
	for parent.Status == StatusRunning {
		cur := &subs[parent.Current]
		if cur.Finished < len(cur.Nodes) {
			return
		}
		cur.Status, cur.TimeEnd = StatusReady, &now
		parent.listFailures(*cur)
		if parent.Current+1 == len(subs) {
			parent.Status, parent.TimeEnd = StatusReady, &now
			return
		}
		parent.Current++
		subs[parent.Current].Status, subs[parent.Current].TimeStart = StatusRunning, &now
	}
}

// abortOps ends the transaction in error: the current sub-transaction gets
// message, the pending ones "Aborted", and the cluster is released.
func (st *txState) abortOps(message string, now time.Time, extra ...store.Op) []store.Op {
	ops := slices.Clone(extra)
	st.parent.Status, st.parent.Message, st.parent.TimeEnd = StatusError, message, &now
	st.parent.listFailures(st.current())
	for i := st.parent.Current; i < len(st.subs); i++ {
		sub := &st.subs[i]
		sub.Status, sub.Message, sub.TimeEnd = StatusError, AbortedMessage, &now
		if i == st.parent.Current {
			sub.Message = message
		}
		ops = append(ops, st.subOp(i))
	}
	return append(ops, st.parentOp(), store.Delete(lockKey(st.parent.ClusterID)))
}

// listFailures adds a finished sub-transaction's failed nodes and tasks to its parent's.
func (parent *txRecord) listFailures(sub txRecord) {
	parent.FailedNodes = append(parent.FailedNodes, sub.FailedNodes...)
	parent.FailedTasks = append(parent.FailedTasks, sub.FailedTasks...)
}

// failNodeOps records that node failed the current sub-transaction (its
// progress p is at the first step it will not run; failedTask is the task
// that failed, "" when it waited for a failed task): its remaining steps are
// dep_failed, and the run stops when the failure is beyond the plan's fault
// tolerance (stopReason). failure says what happened, for the run's message.
func (s *Service) failNodeOps(ctx context.Context, st *txState, plan *frozenPlan, p *NodeProgress, rev int64, failedTask, failure string, now time.Time, extra ...store.Op) ([]store.Op, error) {
	steps := plan.steps(p.Node)
	for _, step := range steps[p.Next:] {
		if t := plan.Tasks[step.Task]; t.Type != planner.TypeGroup && t.Type != planner.TypeStage { // those only order the graph
			p.Results = append(p.Results, TaskResult{Task: t.ID, Status: StatusDepFailed, Message: failure, TimeStart: now, TimeEnd: now})
		}
	}
	failedAt := p.Next
	if failedTask != "" {
		failedAt-- // the step reported failed
	}
	p.Status, p.Next, p.FailedAt = StatusError, len(steps), &failedAt
	sub := &st.subs[st.parent.Current]
	sub.FailedNodes = append(sub.FailedNodes, p.Node)
	if failedTask != "" {
		sub.FailedTasks = append(sub.FailedTasks, NodeTaskRef{Node: p.Node, Task: failedTask})
	}
	ops := append(extra, progressOp(sub.UUID, *p, rev))
	if sub.Stopping != "" {
		return st.drainedOps(p.Node, now, ops...), nil
	}
	why := plan.stopReason(sub.FailedNodes, p.Node)
	if why == "" {
		return st.finishNodeOps(ops, now), nil
	}
	return s.stopOps(ctx, st, p.Node, failure+" ("+why+")", now, ops...)
}

// stopOps stops the run gracefully: nothing new starts, and it ends (in
// error, with reason) once the nodes running a task, but node, have reported it.
func (s *Service) stopOps(ctx context.Context, st *txState, node, reason string, now time.Time, extra ...store.Op) ([]store.Op, error) {
	sub := &st.subs[st.parent.Current]
	progress, err := s.progressByNode(ctx, *sub)
	if err != nil {
		return nil, err
	}
	var draining []string
	for _, n := range sub.Nodes {
		if n != node && progress[n].CurrentTask != "" {
			draining = append(draining, n)
		}
	}
	if len(draining) == 0 {
		return st.abortOps(reason, now, extra...), nil
	}
	sub.Stopping, sub.Draining = reason, draining
	return append(extra, st.subOp(st.parent.Current), st.guardOp()), nil
}

// drainedOps records that node, in flight when the run began to stop, has
// reported; after the last one the run ends.
func (st *txState) drainedOps(node string, now time.Time, extra ...store.Op) []store.Op {
	sub := &st.subs[st.parent.Current]
	sub.Draining = slices.DeleteFunc(slices.Clone(sub.Draining), func(n string) bool { return n == node })
	if len(sub.Draining) == 0 {
		return st.abortOps(sub.Stopping, now, extra...)
	}
	return append(extra, st.subOp(st.parent.Current), st.guardOp())
}

// initialProgress is a node's progress before anything was stored for it:
// ready when it has nothing to do in the sub-transaction, pending otherwise.
func (sub txRecord) initialProgress(node string) NodeProgress {
	p := NodeProgress{Node: node, Status: StatusPending, Results: []TaskResult{}}
	if slices.Contains(sub.Idle, node) {
		p.Status = StatusReady
	}
	return p
}

// progressOf reads a node's progress through a sub-transaction; a node that
// has not claimed yet is at its initial progress at revision 0.
func (s *Service) progressOf(ctx context.Context, sub txRecord, node string) (NodeProgress, int64, error) {
	p := sub.initialProgress(node)
	rev, err := store.GetJSON(ctx, s.idx, progressKey(sub.UUID, node), &p)
	if errors.Is(err, store.ErrNotFound) {
		err = nil
	}
	return p, rev, err
}

// readProgress adds to progress that of the nodes it does not hold yet.
func (s *Service) readProgress(ctx context.Context, sub txRecord, nodes []string, progress map[string]NodeProgress) error {
	var keys []store.Key
	for _, n := range nodes {
		if _, ok := progress[n]; !ok {
			progress[n] = sub.initialProgress(n)
			keys = append(keys, progressKey(sub.UUID, n))
		}
	}
	items, err := s.getMany(ctx, keys)
	if err != nil {
		return err
	}
	for _, it := range items {
		var p NodeProgress
		if err := decodeItem(it, &p); err != nil {
			return err
		}
		progress[p.Node] = p
	}
	return nil
}

// everyWait names a compact wait of a sub-transaction: task Task on every node that has it.
type everyWait struct {
	Sub  string
	Task int
}

// everyWaitBytes is what one remembered compact wait takes: the entry, its key (a UUID and an int) and the count.
const everyWaitBytes = cache.EntryOverhead + 16 + 36 + 8 + 8

// everyBatch is how many nodes' progress everyPassed reads at once.
const everyBatch = 64

// everyPassed says whether task j's step is passed on every node of
// plan.Every[j], or names one where it failed. It reads the nodes in the
// plan's order from the first not known passed and stops at the first not
// passed yet, remembering how far it got: a node never unpasses a step of a
// sub-transaction, so the claims of thousands of nodes waiting for a task
// on thousands of others read each of them about once, not at every claim.
// The nodes that failed (the sub-transaction lists them) are read first, so
// that a failure is seen at once.
func (s *Service) everyPassed(ctx context.Context, sub txRecord, plan *frozenPlan, j int) (passed bool, failed *planner.StepRef, err error) {
	refs := plan.Every[j]
	if len(sub.FailedNodes) > 0 {
		failedNodes := make(map[string]bool, len(sub.FailedNodes))
		for _, n := range sub.FailedNodes {
			failedNodes[n] = true
		}
		var failedOn []planner.StepRef
		for _, r := range refs {
			if failedNodes[r.Node] {
				failedOn = append(failedOn, r)
			}
		}
		progress := map[string]NodeProgress{}
		if err := s.readProgress(ctx, sub, waitedNodes(failedOn, nil), progress); err != nil {
			return false, nil, err
		}
		for _, r := range failedOn {
			if progress[r.Node].failedAt(r.Step) {
				return false, &r, nil
			}
		}
	}
	key := everyWait{Sub: sub.UUID, Task: j}
	from, _ := s.passedEvery.Get(key)
	defer func() { s.passedEvery.Add(key, from) }()
	for from < len(refs) {
		batch := refs[from:min(from+everyBatch, len(refs))]
		progress := map[string]NodeProgress{}
		if err := s.readProgress(ctx, sub, waitedNodes(batch, nil), progress); err != nil {
			return false, nil, err
		}
		for _, r := range batch {
			switch p := progress[r.Node]; {
			case p.failedAt(r.Step):
				return false, &r, nil
			case !p.passed(r.Step):
				return false, nil, nil
			}
			from++
		}
	}
	return true, nil, nil
}

// waitedNodes lists the nodes of refs and of the groups of refs.
func waitedNodes(refs []planner.StepRef, groups [][]planner.StepRef) []string {
	var nodes []string
	for _, r := range refs {
		nodes = append(nodes, r.Node)
	}
	for _, group := range groups {
		for _, r := range group {
			nodes = append(nodes, r.Node)
		}
	}
	return nodes
}

// progressByNode reads the progress of every node of a sub-transaction.
func (s *Service) progressByNode(ctx context.Context, sub txRecord) (map[string]NodeProgress, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: prefix + "txnode#" + sub.UUID})
	if err != nil {
		return nil, err
	}
	byNode := make(map[string]NodeProgress, len(sub.Nodes))
	for _, it := range items {
		var p NodeProgress
		if err := decodeItem(it, &p); err != nil {
			return nil, err
		}
		byNode[p.Node] = p
	}
	for _, n := range sub.Nodes {
		if _, ok := byNode[n]; !ok {
			byNode[n] = sub.initialProgress(n)
		}
	}
	return byNode, nil
}

func progressOp(sub string, p NodeProgress, rev int64) store.Op {
	if rev == 0 {
		return store.Create(progressKey(sub, p.Node), mustJSON(p))
	}
	return store.Update(progressKey(sub, p.Node), mustJSON(p), rev)
}

// nextRunnable returns the position of the first step at or after from whose
// task an agent has to run (handedOut), or len(steps).
func (p *frozenPlan) nextRunnable(steps []planner.NodeStep, from int) int {
	for i := from; i < len(steps); i++ {
		if p.handedOut(steps[i]) {
			return i
		}
	}
	return len(steps)
}

// advance finds how far a node can go from step from: past every group,
// stage and skipped step whose waits are met, to the first step it has to
// run. blocked says that the step where it stopped (one to run, or one
// passed on the way) still waits for another node; failed names a task it
// waits for that failed (or was dep_failed): the step cannot run. A node has
// passed a step once its Next is beyond it (reported, or passed on the way)
// or it finished, and the step did not fail.
func (s *Service) advance(ctx context.Context, sub txRecord, plan *frozenPlan, steps []planner.NodeStep, from int) (i int, blocked bool, failed *NodeTaskRef, err error) {
	// The progress of the nodes waited for, read as steps need them: a
	// claim costs in proportion to what its node waits for, not to the run.
	progress := map[string]NodeProgress{}
	stepFailed := func(r planner.StepRef) bool { return progress[r.Node].failedAt(r.Step) }
	passed := func(r planner.StepRef) bool { return progress[r.Node].passed(r.Step) }
	// ref names another node's step: its steps are read from the plan (a split plan holds them apart).
	ref := func(r planner.StepRef) (*NodeTaskRef, error) {
		other, err := s.loadPlan(ctx, sub.Plan, r.Node)
		if err != nil {
			return nil, err
		}
		out := &NodeTaskRef{Node: r.Node}
		if theirs := other.steps(r.Node); r.Step < len(theirs) {
			out.Task = other.Tasks[theirs[r.Step].Task].ID
		}
		return out, nil
	}
	for i = from; i < len(steps); i++ {
		step := steps[i]
		if step.Waits() {
			if err := s.readProgress(ctx, sub, waitedNodes(step.After, step.AfterAny), progress); err != nil {
				return i, false, nil, err
			}
		}
		for _, r := range step.After {
			if stepFailed(r) {
				failed, err = ref(r)
				return i, false, failed, err
			}
		}
		for _, group := range step.AfterAny {
			if !slices.ContainsFunc(group, func(r planner.StepRef) bool { return !stepFailed(r) }) {
				failed, err = ref(group[0])
				return i, false, failed, err
			}
		}
		for _, j := range step.AfterEvery {
			all, failedOn, err := s.everyPassed(ctx, sub, plan, j)
			if err != nil || failedOn != nil {
				if err == nil {
					failed, err = ref(*failedOn)
				}
				return i, false, failed, err
			}
			if !all {
				return i, true, nil, nil
			}
		}
		if !allPassed(step.After, passed) {
			return i, true, nil, nil
		}
		for _, group := range step.AfterAny {
			if !slices.ContainsFunc(group, passed) {
				return i, true, nil, nil
			}
		}
		if plan.handedOut(step) {
			return i, false, nil, nil
		}
	}
	return len(steps), false, nil, nil
}

func allPassed(refs []planner.StepRef, passed func(planner.StepRef) bool) bool {
	for _, r := range refs {
		if !passed(r) {
			return false
		}
	}
	return true
}

// Claim hands a node's agent its next task in a running transaction. Claiming
// again before reporting returns the same task, so a lost answer is harmless;
// an agent repeats that claim every Claim.Heartbeat while it runs the task,
// which tells that it is alive (see enforceDeadlines).
func (s *Service) Claim(ctx context.Context, txID, node string) (Claim, error) {
	audit.Polling(ctx) // audited only when it changes progress (audit.Changed), not when idle or a heartbeat
	var c Claim
	err := store.RetryConflicts(ctx, "claim a task", func() error {
		var again bool
		var st *txState
		var err error
		if c, st, again, err = s.claimOnce(ctx, txID, node); err == nil && again {
			return store.ErrConflict // the node finished a sub-transaction: decide afresh
		}
		if err == nil && c.Action == ActionDone {
			c.NodeStatus, err = s.nodeOutcome(ctx, st, node)
		}
		return err
	})
	return c, err
}

// nodeOutcome says how a node did in a transaction, for a claim that tells
// it it is done: error when it failed in a sub-transaction, stopped when one
// of its sub-transactions ended, or never started, before it finished there,
// else ready.
func (s *Service) nodeOutcome(ctx context.Context, st *txState, node string) (string, error) {
	if slices.ContainsFunc(st.subs, func(sub txRecord) bool { return slices.Contains(sub.FailedNodes, node) }) {
		return StatusError, nil
	}
	for _, sub := range st.subs {
		if !slices.Contains(sub.Nodes, node) {
			continue
		}
		if sub.TimeStart == nil {
			return StatusStopped, nil
		}
		p, _, err := s.progressOf(ctx, sub, node)
		if err != nil || p.Status != StatusReady {
			return StatusStopped, err
		}
	}
	return StatusReady, nil
}

// claimOnce makes one attempt at Claim, on the state st it read; again means
// the state moved on (the node finished a sub-transaction) and the claim must
// be decided afresh.
func (s *Service) claimOnce(ctx context.Context, txID, node string) (c Claim, st *txState, again bool, err error) {
	st, err = s.loadTx(ctx, txID)
	if err != nil {
		return Claim{}, nil, false, err
	}
	c, again, err = s.claimIn(ctx, st, txID, node)
	return c, st, again, err
}

// claimIn decides a claim on the transaction's state st (see claimOnce).
func (s *Service) claimIn(ctx context.Context, st *txState, txID, node string) (c Claim, again bool, err error) {
	audit.Note(ctx, st.parent.ClusterID, 0) // the agent's write is under its cluster's environment
	if !st.involves(node) {
		return Claim{}, false, errs.NotFoundf("Node %s is not part of transaction %s", node, txID)
	}
	if st.parent.Status != StatusRunning {
		return st.claim(ActionDone, node), false, nil
	}
	sub := st.current()
	if !slices.Contains(sub.Nodes, node) {
		return st.claim(st.laterWork(node), node), false, nil
	}
	p, rev, err := s.progressOf(ctx, sub, node)
	if err != nil {
		return Claim{}, false, err
	}
	if p.Status == StatusReady || p.Status == StatusError {
		return st.claim(st.laterWork(node), node), false, nil
	}
	plan, err := s.loadPlan(ctx, sub.Plan, node)
	if err != nil {
		return Claim{}, false, err
	}
	steps := plan.steps(node)
	now := s.now()
	if p.CurrentTask != "" {
		// A heartbeat: recorded unless the node was seen lately.
		c, err := s.taskClaim(ctx, st, node, plan, steps[p.Next])
		if err != nil || s.seenLately(p, now) {
			return c, false, err
		}
		p.LastSeen = &now
		return c, false, s.idx.Write(ctx, progressOp(sub.UUID, p, rev), st.guardOp())
	}
	if sub.Stopping != "" {
		return st.claim(ActionDone, node), false, nil // the run stops: nothing new starts
	}
	// The next task, and the group, stage and skipped steps passed on the way,
	// must have what they wait for on other nodes done.
	i, blocked, failed, err := s.advance(ctx, sub, plan, steps, p.Next)
	if err != nil {
		return Claim{}, false, err
	}
	if failed != nil {
		// Astute's dep_failed: the step waits for a failed task, so the node fails.
		p.Next, p.LastSeen = i, &now
		failure := fmt.Sprintf("Task %s on node %s waits for task %s on node %s, which failed", plan.Tasks[steps[i].Task].ID, sub.nodeName(node), failed.Task, sub.nodeName(failed.Node))
		ops, err := s.failNodeOps(ctx, st, plan, &p, rev, "", failure, now)
		if err == nil {
			err = s.idx.Write(ctx, ops...)
		}
		if err != nil {
			return Claim{}, false, err
		}
		s.countEnd(st)
		return Claim{}, true, nil
	}
	var slot []store.Op
	if !blocked && i < len(steps) {
		if slot, blocked, err = s.takeSlot(ctx, sub.UUID, plan, plan.Tasks[steps[i].Task].ID, node); err != nil {
			return Claim{}, false, err
		}
	}
	if blocked {
		// Steps passed on the way are passed now: other nodes may wait for them.
		if passed := i > p.Next; passed || !s.seenLately(p, now) {
			p.Status, p.Next, p.LastSeen = StatusRunning, i, &now
			if err := s.idx.Write(ctx, progressOp(sub.UUID, p, rev), st.guardOp()); err != nil {
				return Claim{}, false, err
			}
			if passed {
				audit.Changed(ctx)
			}
		}
		return st.claim(ActionWait, node), false, nil
	}
	p.LastSeen = &now
	if i < len(steps) {
		c, err := s.taskClaim(ctx, st, node, plan, steps[i])
		if err != nil {
			return Claim{}, false, err
		}
		p.Status, p.Next, p.CurrentTask, p.CurrentStart = StatusRunning, i, plan.Tasks[steps[i].Task].ID, &now
		// The sub-transaction's guard keeps a task from starting once the run stops.
		if err := s.idx.Write(ctx, append(slot, progressOp(sub.UUID, p, rev), st.guardOp(), st.subGuardOp())...); err != nil {
			return Claim{}, false, err
		}
		audit.Changed(ctx)
		s.states.count(tasksFamily, StatusRunning)
		return c, false, nil
	}
	p.Status, p.Next = StatusReady, len(steps)
	if err := s.idx.Write(ctx, st.finishNodeOps([]store.Op{progressOp(sub.UUID, p, rev)}, now)...); err != nil {
		return Claim{}, false, err
	}
	audit.Changed(ctx)
	s.countEnd(st)
	return Claim{}, true, nil
}

// countEnd counts the end of the transaction when a committed write ended it.
func (s *Service) countEnd(st *txState) {
	if st.parent.Status != StatusRunning {
		s.states.count(runsFamily, st.parent.Status)
	}
}

func (s *Service) taskClaim(ctx context.Context, st *txState, node string, plan *frozenPlan, step planner.NodeStep) (Claim, error) {
	body, err := s.pinnedRenderer(st.parent.ClusterID, plan).body(ctx, node, step.Task)
	if err != nil {
		return Claim{}, err
	}
	c := st.claim(ActionTask, node)
	c.Position, c.Task, c.Heartbeat = &step.Task, body, s.heartbeat.Seconds()
	return c, nil
}

// taskSlots lists the nodes running a task whose plan limits how many may run it at once.
type taskSlots struct {
	Nodes []string `json:"nodes"`
}

func slotKey(sub, task string) store.Key {
	return store.Key{Partition: prefix + "txslot#" + sub, Sort: task}
}

// takeSlot returns the write that makes node a runner of a task the plan
// limits (none for a task without limit), or full when as many nodes as the
// limit run it already. The slot item's revision serializes concurrent claims.
func (s *Service) takeSlot(ctx context.Context, sub string, plan *frozenPlan, task, node string) (ops []store.Op, full bool, err error) {
	limit := plan.Limits[task]
	if limit <= 0 {
		return nil, false, nil
	}
	var slots taskSlots
	rev, err := store.GetJSON(ctx, s.idx, slotKey(sub, task), &slots)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return []store.Op{store.Create(slotKey(sub, task), mustJSON(taskSlots{Nodes: []string{node}}))}, false, nil
	case err != nil:
		return nil, false, err
	case len(slots.Nodes) >= limit:
		return nil, true, nil
	}
	slots.Nodes = append(slots.Nodes, node)
	return []store.Op{store.Update(slotKey(sub, task), mustJSON(slots), rev)}, false, nil
}

// releaseSlot returns the write that frees node's slot of a limited task it reports.
func (s *Service) releaseSlot(ctx context.Context, sub string, plan *frozenPlan, task, node string) ([]store.Op, error) {
	if plan.Limits[task] <= 0 {
		return nil, nil
	}
	var slots taskSlots
	rev, err := store.GetJSON(ctx, s.idx, slotKey(sub, task), &slots)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	slots.Nodes = slices.DeleteFunc(slots.Nodes, func(n string) bool { return n == node })
	return []store.Op{store.Update(slotKey(sub, task), mustJSON(slots), rev)}, nil
}

// Report records the result of the task a node claimed. An error fails the
// node, its sub-transaction and the transaction, aborts the pending
// sub-transactions and releases the cluster. Repeating the last report is harmless.
func (s *Service) Report(ctx context.Context, txID, node string, rep TaskReport) (NodeProgress, error) {
	taskID := rep.Task
	if taskID == "" {
		return NodeProgress{}, errs.Invalidf("task: is required")
	}
	if rep.Status != StatusReady && rep.Status != StatusError && rep.Status != StatusSkipped {
		return NodeProgress{}, errs.Invalidf("status: %q is not one of ready, skipped, error", rep.Status)
	}
	if len(rep.Output) > MaxReportOutput {
		return NodeProgress{}, errs.Invalidf("output: at most %d bytes (the tail of the task's output)", MaxReportOutput)
	}
	if rep.Duration != nil && (*rep.Duration < 0 || math.IsInf(*rep.Duration, 0) || math.IsNaN(*rep.Duration)) {
		return NodeProgress{}, errs.Invalidf("duration: must be a number of seconds, at least 0")
	}
	rep.Message = keptMessage(rep.Message, rep.Status)
	var out NodeProgress
	err := store.RetryConflicts(ctx, "report a task", func() error {
		st, err := s.loadTx(ctx, txID)
		if err != nil {
			return err
		}
		audit.Note(ctx, st.parent.ClusterID, 0) // the agent's write is under its cluster's environment
		if !st.involves(node) {
			return errs.NotFoundf("Node %s is not part of transaction %s", node, txID)
		}
		sub := st.current()
		p, rev, err := s.progressOf(ctx, sub, node)
		if err != nil {
			return err
		}
		if st.parent.Status != StatusRunning || p.CurrentTask != taskID {
			if prev, ok, err := s.reported(ctx, st, node, taskID, rep.Status); err != nil || ok {
				out = prev
				return err
			}
			if st.parent.Status != StatusRunning {
				return errs.Conflictf("Transaction %s is not running (status: %s)", txID, st.parent.Status)
			}
			return errs.Conflictf("Task %s is not running on node %s", taskID, node)
		}
		plan, err := s.loadPlan(ctx, sub.Plan, node)
		if err != nil {
			return err
		}
		slot, err := s.releaseSlot(ctx, sub.UUID, plan, taskID, node)
		if err != nil {
			return err
		}
		now := s.now()
		steps := plan.steps(node)
		result := TaskResult{Task: taskID, Status: rep.Status, Message: rep.Message, TaskRun: rep.TaskRun.kept(rep.Status), TimeStart: *p.CurrentStart, TimeEnd: now}
		fails := rep.Status == StatusError
		if fails && (st.parent.NoopRun || !plan.Tasks[steps[p.Next].Task].FailOnError()) {
			// Astute marks such a failure skipped: it fails neither the node nor what waits for it.
			result.Status, result.Message, fails = StatusSkipped, joinMessage(ignoredFailure, rep.Message), false
		}
		p.Results = append(p.Results, result)
		p.CurrentTask, p.CurrentStart, p.LastSeen = "", nil, &now
		p.Next++
		var ops []store.Op
		switch {
		case fails:
			failure := joinMessage(fmt.Sprintf("Task %s failed on node %s", taskID, sub.nodeName(node)), rep.Message)
			if ops, err = s.failNodeOps(ctx, st, plan, &p, rev, taskID, failure, now, slot...); err != nil {
				return err
			}
		case sub.Stopping != "":
			// The run stops: the node was running this task, and starts no other.
			ops = st.drainedOps(node, now, append(slot, progressOp(sub.UUID, p, rev))...)
		case plan.nextRunnable(steps, p.Next) < len(steps) || slices.ContainsFunc(steps[p.Next:], planner.NodeStep.Waits):
			// Something is left to run or wait for: the node's next claim goes on.
			ops = append(slot, progressOp(sub.UUID, p, rev), st.guardOp())
		default:
			p.Status = StatusReady
			ops = st.finishNodeOps(append(slot, progressOp(sub.UUID, p, rev)), now)
		}
		out = p
		if err := s.idx.Write(ctx, ops...); err != nil {
			return err
		}
		s.states.count(tasksFamily, result.Status)
		s.countEnd(st)
		return nil
	})
	return out, err
}

// ignoredFailure prefixes the message of a failure that does not count.
const ignoredFailure = "failed, ignored (fail_on_error false, or a noop run)"

func joinMessage(what, detail string) string {
	if detail == "" {
		return what
	}
	return what + ": " + detail
}

// reported finds the node's last reported result (not one dep_failed), in
// any sub-transaction, if it is this task with this status (an ignored
// failure is recorded skipped): the report is a repeat.
func (s *Service) reported(ctx context.Context, st *txState, node, taskID, status string) (NodeProgress, bool, error) {
	for i := st.parent.Current; i >= 0; i-- {
		if !slices.Contains(st.subs[i].Nodes, node) {
			continue
		}
		p, _, err := s.progressOf(ctx, st.subs[i], node)
		if err != nil {
			return NodeProgress{}, false, err
		}
		var last *TaskResult
		for i := len(p.Results) - 1; i >= 0 && last == nil; i-- {
			if p.Results[i].Status != StatusDepFailed {
				last = &p.Results[i]
			}
		}
		if last == nil {
			continue // not started here: the last result is in an earlier sub-transaction
		}
		same := last.Status == status || last.Status == StatusSkipped && status == StatusError
		return p, last.Task == taskID && same && p.CurrentTask == "", nil
	}
	return NodeProgress{}, false, nil
}

// Stop ends a running transaction in error ("Stopped"), aborting what is left
// and releasing the cluster; agents learn it from their next claim.
func (s *Service) Stop(ctx context.Context, txID string) (Transaction, error) {
	var out Transaction
	err := store.RetryConflicts(ctx, "stop transaction", func() error {
		st, err := s.loadTx(ctx, txID)
		if err != nil {
			return err
		}
		if st.parent.Status != StatusRunning {
			return errs.Conflictf("Transaction %s is not running (status: %s)", txID, st.parent.Status)
		}
		if err := s.idx.Write(ctx, st.abortOps("Stopped", s.now())...); err != nil {
			return err
		}
		s.states.count(runsFamily, "stopped")
		out = parentView(st.parent, st.subs)
		return nil
	})
	return out, err
}

// lookupTx finds a transaction, top-level or sub, by UUID.
func (s *Service) lookupTx(ctx context.Context, id string) (rec txRecord, isSub bool, err error) {
	if err := checkUUID(id); err != nil {
		return txRecord{}, false, err
	}
	items, err := s.idx.BatchGet(ctx, []store.Key{txKey(id), subKey(id)})
	if err != nil {
		return txRecord{}, false, err
	}
	it, ok := items[txKey(id)]
	if !ok {
		if it, isSub = items[subKey(id)]; !isSub {
			return txRecord{}, false, txNotFound(id)
		}
	}
	return rec, isSub, decodeItem(it, &rec)
}

// Transaction returns a top-level transaction with its sub-transactions, or a
// sub-transaction with the progress of each of its nodes. A transaction that
// missed a deadline is ended first.
func (s *Service) Transaction(ctx context.Context, id string) (Transaction, error) {
	rec, isSub, err := s.lookupTx(ctx, id)
	if err != nil {
		return Transaction{}, err
	}
	if rec.Status == StatusRunning || rec.Status == StatusPending {
		parent := rec.UUID
		if isSub {
			parent = rec.ParentUUID
		}
		if ended, err := s.checkDeadlines(ctx, parent); err != nil || ended {
			if err == nil {
				rec, isSub, err = s.lookupTx(ctx, id)
			}
			if err != nil {
				return Transaction{}, err
			}
		}
	}
	if !isSub {
		subs, _, err := s.loadSubs(ctx, rec.Subs)
		if err != nil {
			return Transaction{}, err
		}
		return parentView(rec, subs), nil
	}
	byNode, err := s.progressByNode(ctx, rec)
	if err != nil {
		return Transaction{}, err
	}
	v := Transaction{TransactionInfo: rec.TransactionInfo, Nodes: make([]NodeProgress, len(rec.Nodes))}
	ended := rec.TimeStart != nil && rec.Status != StatusRunning
	for i, n := range rec.Nodes {
		v.Nodes[i] = byNode[n]
		if ended && (v.Nodes[i].Status == StatusPending || v.Nodes[i].Status == StatusRunning) {
			v.Nodes[i].Status = StatusStopped // the run ended before the node finished
		}
	}
	return v, nil
}

// TransactionFilter selects top-level transactions.
type TransactionFilter struct {
	// ClusterID, when set, limits the list to one cluster.
	ClusterID *int64
	// Status, when set, keeps the transactions in this status.
	Status string
	// Limit caps the number of transactions looked at (0: no cap).
	Limit int
}

// Transactions lists top-level transactions, newest first.
func (s *Service) Transactions(ctx context.Context, f TransactionFilter) ([]Transaction, error) {
	var items []store.Item
	var err error
	if f.ClusterID != nil {
		items, err = s.clusterHistory(ctx, *f.ClusterID, f.Limit)
	} else {
		items, err = s.idx.Query(ctx, store.Query{Partition: prefix + "tx", Reverse: true, Limit: f.Limit})
	}
	if err != nil {
		return nil, err
	}
	var parents []txRecord
	var subIDs []string
	for _, it := range items {
		var parent txRecord
		if err := decodeItem(it, &parent); err != nil {
			return nil, err
		}
		if parent.Status == StatusRunning {
			// A run that missed a deadline is listed as it ended.
			if ended, err := s.checkDeadlines(ctx, parent.UUID); err != nil {
				return nil, err
			} else if ended {
				if _, err := store.GetJSON(ctx, s.idx, txKey(parent.UUID), &parent); err != nil {
					return nil, err
				}
			}
		}
		if f.Status == "" || parent.Status == f.Status {
			parents = append(parents, parent)
			subIDs = append(subIDs, parent.Subs...)
		}
	}
	subs, _, err := s.loadSubs(ctx, subIDs)
	if err != nil {
		return nil, err
	}
	out := make([]Transaction, len(parents))
	for i, parent := range parents {
		out[i] = parentView(parent, subs[:len(parent.Subs)])
		subs = subs[len(parent.Subs):]
	}
	return out, nil
}

// clusterHistory reads a cluster's top-level transaction items, newest first.
func (s *Service) clusterHistory(ctx context.Context, cluster int64, limit int) ([]store.Item, error) {
	refs, err := s.idx.Query(ctx, store.Query{Partition: historyPartition(cluster), Reverse: true, Limit: limit})
	if err != nil {
		return nil, err
	}
	keys := make([]store.Key, len(refs))
	for i, ref := range refs {
		keys[i] = txKey(ref.Sort)
	}
	found, err := s.getMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	items := make([]store.Item, 0, len(keys))
	for _, k := range keys {
		if it, ok := found[k]; ok {
			items = append(items, it)
		}
	}
	return items, nil
}
