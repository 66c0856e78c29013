package graphs

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Claim states what a node's agent is to do next (the API's type): "task"
// (run Task, then report its result), "wait" (claim again later: other
// nodes are still busy or this node's next graph has not started) or "done"
// (nothing left for this node in this transaction); Heartbeat, with a task,
// is how often the agent claims again while it runs it (see Service.Claim).
type Claim = wire.Claim

// Claim actions.
const (
	ActionTask = "task"
	ActionWait = "wait"
	ActionDone = "done"
)

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
