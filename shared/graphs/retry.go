package graphs

import (
	"context"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Retry executes an ended transaction again, as a new transaction: the whole
// execution as it was requested or, with failedOnly, what did not succeed.
// That is, in each graph, the nodes that failed or did not finish, with the
// tasks those nodes failed, did not run (dep_failed) or did not reach. They
// share one task list, so a node also runs again a task that only another
// of them failed. A graph that never started runs again whole.
func (s *Service) Retry(ctx context.Context, txID string, failedOnly bool) (Transaction, error) {
	st, err := s.loadTx(ctx, txID)
	if err != nil {
		return Transaction{}, err
	}
	if st.parent.Status == StatusRunning {
		return Transaction{}, errs.Conflictf("Transaction %s is still running", txID)
	}
	req := st.request()
	if failedOnly {
		if req.Graphs, err = s.unfinished(ctx, st, req.Graphs); err != nil {
			return Transaction{}, err
		}
		if len(req.Graphs) == 0 {
			return Transaction{}, errs.Invalidf("Transaction %s has no failed or unfinished node to run again", txID)
		}
	}
	return s.Execute(ctx, req)
}

// request is the execution that made the transaction, one graph per
// sub-transaction; a transaction stored before requests were kept gives its
// graph types, nodes and options.
func (st *txState) request() ExecuteRequest {
	if st.parent.Request != nil {
		req := *st.parent.Request
		req.Graphs = slices.Clone(req.Graphs)
		return req
	}
	info := st.parent.TransactionInfo
	cluster, timeout := info.ClusterID, info.claimTimeout().Seconds()
	req := ExecuteRequest{Cluster: &cluster, DryRun: info.DryRun && !info.NoopRun, NoopRun: info.NoopRun, Force: info.Force, Debug: info.Debug, ClaimTimeout: &timeout}
	for _, sub := range st.subs {
		run := GraphRun{Type: sub.GraphType}
		for _, n := range sub.Nodes {
			run.Nodes = append(run.Nodes, NodeID(n))
		}
		req.Graphs = append(req.Graphs, run)
	}
	return req
}

// unfinished narrows each graph run to its nodes that did not finish ready
// and the tasks, from the first that failed or was not passed, that they were
// to run (see Retry).
func (s *Service) unfinished(ctx context.Context, st *txState, runs []GraphRun) ([]GraphRun, error) {
	var out []GraphRun
	for i, sub := range st.subs {
		run := runs[i]
		if sub.TimeStart == nil {
			out = append(out, run)
			continue
		}
		progress, err := s.progressByNode(ctx, sub)
		if err != nil {
			return nil, err
		}
		plan, err := s.loadPlan(ctx, sub.Plan)
		if err != nil {
			return nil, err
		}
		again := make([]bool, len(plan.Tasks))
		run.Nodes = nil
		for _, n := range sub.Nodes {
			p := progress[n]
			if p.Status == StatusReady {
				continue
			}
			from := p.Next
			if p.FailedAt != nil {
				from = *p.FailedAt
			}
			steps := plan.steps(n)
			for _, step := range steps[min(from, len(steps)):] {
				if plan.handedOut(step) {
					again[step.Task] = true
				}
			}
			run.Nodes = append(run.Nodes, NodeID(n))
		}
		run.Tasks = nil
		for t, yes := range again {
			if yes {
				run.Tasks = append(run.Tasks, plan.Tasks[t].ID)
			}
		}
		if len(run.Tasks) > 0 { // (an empty list would run every task)
			out = append(out, run)
		}
	}
	return out, nil
}
