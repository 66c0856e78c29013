package graphs

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
)

// MaxReportMessage bounds the message a result keeps. A node's results share
// one index item, so, as with the output, a failed task's result keeps up to
// MaxReportMessage bytes of its message and any other result 256; a
// longer message keeps its head and its tail around a note of what was cut
// (what went wrong is said first or last). The transaction's message quotes
// the failed task's as kept.
const MaxReportMessage = 4 << 10

// keptMessage returns a report's message as its result keeps it.
func keptMessage(msg, status string) string {
	if status == StatusError {
		return cutMiddle(msg, MaxReportMessage)
	}
	return cutMiddle(msg, keptOutput)
}

// cutMiddle returns s if it has at most limit bytes, else its head and tail
// (cut at whole characters) around a note of how many bytes were cut, in at
// most limit bytes.
func cutMiddle(s string, limit int) string {
	if len(s) <= limit {
		return s
	}
	const note = " [... %d bytes cut ...] "
	// The note with len(s) is at least as long as with the count it will show.
	keep := max(limit-len(fmt.Sprintf(note, len(s))), 0)
	head, tail := s[:keep/2], s[len(s)-(keep-keep/2):]
	head, tail = strings.ToValidUTF8(head, ""), strings.ToValidUTF8(tail, "")
	return head + fmt.Sprintf(note, len(s)-len(head)-len(tail)) + tail
}

// TaskReport is an agent's result for the task it claimed.
type TaskReport struct {
	Task string `json:"task"`
	// Status is ready, skipped (the agent decided not to run it) or error.
	Status  string `json:"status"`
	Message string `json:"message"`
	TaskRun
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
