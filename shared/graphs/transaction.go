package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

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

// DryRunMessage is the message of a dry run, which ends as soon as it is planned.
const DryRunMessage = "Dry run: planned; no node ran anything"

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
	if err := s.decodeTx(it, &st.parent); err != nil {
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
		if err := s.decodeTx(it, &subs[i]); err != nil {
			return nil, nil, err
		}
		revs[i] = it.Revision
	}
	return subs, revs, nil
}

// recordAt names a version of a transaction's record: a key at a revision
// always holds the same value.
type recordAt struct {
	key store.Key
	rev int64
}

// decodedRecord is a decoded transaction record and the size of its JSON.
type decodedRecord struct {
	rec  txRecord
	size int64
}

// decodeTx decodes a transaction's record through the cache of decoded
// records: every claim and report of a run reads its record and its
// sub-transactions', which on 5,000 nodes (their ids, FQDNs, idle nodes)
// took three quarters of a claim's CPU to decode again each time.
func (s *Service) decodeTx(it store.Item, rec *txRecord) error {
	at := recordAt{key: it.Key, rev: it.Revision}
	if d, ok := s.txRecords.Get(at); ok {
		*rec = d.rec.clone()
		return nil
	}
	*rec = txRecord{}
	if err := decodeItem(it, rec); err != nil {
		return err
	}
	s.txRecords.Add(at, decodedRecord{rec: rec.clone(), size: int64(len(it.Value))})
	return nil
}

// clone copies the lists callers change in place; the FQDNs and the
// request are never changed once stored.
func (r txRecord) clone() txRecord {
	r.Subs, r.Nodes, r.Idle, r.Draining = slices.Clone(r.Subs), slices.Clone(r.Nodes), slices.Clone(r.Idle), slices.Clone(r.Draining)
	r.FailedNodes, r.FailedTasks = slices.Clone(r.FailedNodes), slices.Clone(r.FailedTasks)
	return r
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
	return rec, isSub, s.decodeTx(it, &rec)
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
