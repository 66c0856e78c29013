package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/wire"
)

func newGraphRunCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "run",
		Short: "List, show, follow, stop and retry runs of graphs (transactions)",
		Long: `A run (a transaction) is what graph execute starts: one sub-transaction per
graph type, each run by the agents of its nodes. A failed task fails its node:
the node runs nothing more, and tasks waiting for the failed one are
dep_failed. The run goes on while each group of nodes (the graph's group tasks)
has lost no more nodes than its fault_tolerance allows; a node in no group is
critical. Past that it stops: tasks in flight finish, nothing new starts, and
it ends in error. Otherwise it ends ready, listing the nodes that failed. A run
also ends in error when it was stopped, or a critical node did not claim
within the claim timeout (unreachable), its agent stopped sending heartbeats
(lost) or its task ran past its timeout (a node its group may lose fails
alone). graph run retry runs it again.`,
	}
	cmd.SetFlagErrorFunc(flagError)
	cmd.AddCommand(newGraphRunListCmd(), newGraphRunShowCmd(), newGraphRunWaitCmd(), newGraphRunStopCmd(), newGraphRunRetryCmd())
	return cmd
}

// runColumns are what `graph run list` prints in table form.
var runColumns = []string{"uuid", "status", "cluster_id", "graphs", "time_start", "time_end", "message"}

func newGraphRunListCmd() *cobra.Command {
	var (
		f      client.TransactionFilter
		format string
	)
	cmd := &cobra.Command{
		Use:   "list [-e ENV] [--status S]",
		Short: "List runs, newest first",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			if f.Cluster != "" {
				if f.Cluster, err = c.Ref(cmd.Context(), client.KindEnvironment, f.Cluster); err != nil {
					return err
				}
			}
			runs, err := c.Transactions(cmd.Context(), f)
			if err != nil {
				return err
			}
			rows := toObjects(runs)
			if format == formatTable {
				for i, r := range runs {
					row := rows[i].(map[string]any)
					row["graphs"] = subStatuses(r.SubTransactions)
				}
			}
			return renderObjects(cmd.OutOrStdout(), format, rows, runColumns)
		},
	}
	flags := cmd.Flags()
	flags.StringVarP(&f.Cluster, "env", "e", "", "only this environment's (cluster) runs: id or UUID")
	flags.StringVar(&f.Status, "status", "", "only runs in this status: running, ready or error")
	flags.IntVar(&f.Limit, "limit", 0, "look at this many of the newest runs at most (default: the server's cap)")
	addListFormat(cmd, &format)
	return cmd
}

// subStatuses shows sub-transactions as "type:status".
func subStatuses(subs []client.Transaction) string {
	parts := make([]string, len(subs))
	for i, s := range subs {
		parts[i] = s.GraphType + ":" + s.Status
	}
	return strings.Join(parts, ",")
}

// runView is a run with the detail (each node's progress) of every sub-transaction that has started.
type runView struct {
	client.Transaction
	Details []client.Transaction `json:"details"`
}

func loadRun(ctx context.Context, c *client.Client, id string) (*runView, error) {
	top, err := c.Transaction(ctx, id)
	if err != nil {
		return nil, err
	}
	if top.ParentUUID != "" {
		return nil, usagef("%s is a sub-transaction of run %s: give the run", id, top.ParentUUID)
	}
	r := &runView{Transaction: *top}
	for _, sub := range top.SubTransactions {
		if sub.Status == wire.StatusPending {
			continue
		}
		d, err := c.Transaction(ctx, sub.UUID)
		if err != nil {
			return nil, err
		}
		r.Details = append(r.Details, *d)
	}
	return r, nil
}

// summary is a run's one-line state: "Run U: status[: message][; failed nodes: N (FQDN), ...]".
func (r *runView) summary() string {
	s := fmt.Sprintf("Run %s: %s", r.UUID, r.Status)
	if r.Message != "" {
		s += ": " + r.Message
	}
	if len(r.FailedNodes) > 0 {
		names := make([]string, len(r.FailedNodes))
		for i, n := range r.FailedNodes {
			names[i] = nodeName(r.Transaction, n)
		}
		s += "; failed nodes: " + strings.Join(names, ", ")
	}
	return s
}

// nodeName names a node of a run by id, and by FQDN when the run knows it.
func nodeName(tx client.Transaction, id string) string {
	if fqdn := tx.FQDNs[id]; fqdn != "" {
		return id + " (" + fqdn + ")"
	}
	return id
}

// nodeRow is one node of a started sub-transaction: graph, node, status,
// current task (with how long it ran), done, failures (the failed tasks, then
// those not run because a task they wait for failed).
func nodeRow(sub client.Transaction, p client.NodeProgress, now time.Time) []string {
	if sub.TimeEnd != nil {
		now = *sub.TimeEnd
	}
	task := p.CurrentTask
	if task != "" && p.CurrentStart != nil {
		task += fmt.Sprintf(" (%s)", now.Sub(*p.CurrentStart).Round(time.Second))
	}
	var failures, depFailed []string
	for _, r := range p.Results {
		switch r.Status {
		case wire.StatusError:
			failures = append(failures, r.Task+": "+r.Message)
		case wire.StatusDepFailed:
			depFailed = append(depFailed, r.Task)
		}
	}
	if len(depFailed) > 0 {
		failures = append(failures, "dep_failed: "+strings.Join(depFailed, ", "))
	}
	status := p.Status
	if status == wire.StatusRunning && p.CurrentTask == "" {
		status = "waiting"
	}
	return []string{sub.GraphType, nodeName(sub, p.Node), status, task, strconv.Itoa(len(p.Results)), strings.Join(failures, "; ")}
}

var nodeHeader = []string{"GRAPH", "NODE", "STATUS", "TASK", "DONE", "FAILURES"}

func (r *runView) rows(now time.Time) [][]string {
	var rows [][]string
	for _, sub := range r.Details {
		for _, p := range sub.Nodes {
			rows = append(rows, nodeRow(sub, p, now))
		}
	}
	return rows
}

func newGraphRunShowCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "show RUN",
		Short: "Show a run: per node of each started graph its status, current task and failures",
		Args:  exactArgs("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			r, err := loadRun(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if format != formatTable {
				return renderObject(w, format, toObject(r), nil)
			}
			fmt.Fprintf(w, "%s\nGraphs: %s\n", r.summary(), subStatuses(r.SubTransactions))
			return printTable(w, nodeHeader, r.rows(time.Now()))
		},
	}
	addListFormat(cmd, &format)
	return cmd
}

// runPollInterval is how often `graph run wait` reads the run (a variable for the tests).
var runPollInterval = time.Second

// exitStatus ends the command with a chosen exit status.
type exitStatus struct {
	code int
	msg  string
}

func (e *exitStatus) Error() string { return e.msg }

func newGraphRunWaitCmd() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "wait RUN [--timeout D]",
		Short: "Follow a run until it ends: exit 0 when ready, 1 when it failed or was stopped, 2 on --timeout",
		Long: `Follow a run until it ends, showing each node's progress: on a terminal one
updating line per node, otherwise one line per change. Exit status 0 when the
run ends ready, 1 when it ends in error (a task failed, it was stopped, a node
was unreachable or lost, a task timed out), 2 when --timeout passes first.`,
		Args: exactArgs("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if timeout < 0 {
				return usagef("--timeout must not be negative")
			}
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			var show progressView = &changeLines{w: w, seen: map[string]string{}}
			if stdoutIsTerminal(w) {
				show = &liveLines{w: w}
			}
			var deadline time.Time
			if timeout > 0 {
				deadline = time.Now().Add(timeout)
			}
			tick := time.NewTicker(runPollInterval)
			defer tick.Stop()
			for {
				r, err := loadRun(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				show.update(r, time.Now())
				switch r.Status {
				case wire.StatusReady:
					return nil
				case wire.StatusError:
					return &exitStatus{code: 1, msg: r.summary()}
				}
				if !deadline.IsZero() && time.Now().After(deadline) {
					return &exitStatus{code: 2, msg: fmt.Sprintf("run %s still %s after %s", r.UUID, r.Status, timeout)}
				}
				select {
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				case <-tick.C:
				}
			}
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", 0, "give up (exit 2) after this long (0: wait for the end)")
	return cmd
}

// progressView shows a run's progress as `graph run wait` follows it.
type progressView interface {
	update(r *runView, now time.Time)
}

// changeLines prints a line for each node whose state changed, and the run's state when it changes.
type changeLines struct {
	w    io.Writer
	seen map[string]string
}

func (v *changeLines) update(r *runView, now time.Time) {
	for _, sub := range r.Details {
		for _, p := range sub.Nodes {
			row := nodeRow(sub, p, now)
			row[3] = p.CurrentTask // without the running time, which changes every time
			line := fmt.Sprintf("%s node %s: %s", row[0], row[1], strings.Join(nonEmpty(row[2:]), " "))
			if key := sub.UUID + "/" + p.Node; v.seen[key] != line {
				v.seen[key] = line
				fmt.Fprintf(v.w, "%s %s\n", now.UTC().Format(time.TimeOnly), line)
			}
		}
	}
	if line := r.summary(); v.seen[""] != line {
		v.seen[""] = line
		fmt.Fprintf(v.w, "%s %s\n", now.UTC().Format(time.TimeOnly), line)
	}
}

func nonEmpty(parts []string) []string {
	var out []string
	for i, p := range parts {
		switch {
		case p == "" || (i == 2 && p == "0"):
		case i == 2: // done count
			out = append(out, p+" done")
		default:
			out = append(out, p)
		}
	}
	return out
}

// liveLines redraws one line per node (and the run's line) in place on a terminal.
type liveLines struct {
	w     io.Writer
	lines int
}

func (v *liveLines) update(r *runView, now time.Time) {
	var b strings.Builder
	if v.lines > 0 {
		fmt.Fprintf(&b, "\x1b[%dA\x1b[J", v.lines) // back to the first line, clearing the old ones
	}
	_ = printTable(&b, nodeHeader, r.rows(now))
	b.WriteString(r.summary() + "\n")
	v.lines = strings.Count(b.String(), "\n")
	io.WriteString(v.w, b.String())
}

func newGraphRunRetryCmd() *cobra.Command {
	var (
		failed bool
		format string
	)
	cmd := &cobra.Command{
		Use:   "retry RUN [--failed]",
		Short: "Run an ended run again, as a new run: the whole of it, or with --failed what failed or did not finish",
		Long: `Run an ended run again, as a new run with the same graphs, nodes, tasks and
options. With --failed, only the nodes that failed or did not finish, with the
tasks they failed, did not run (dep_failed) or did not reach; a graph that
never started runs whole. Prints the new run: follow it with graph run wait.`,
		Args: exactArgs("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			tx, err := c.RetryTransaction(cmd.Context(), args[0], failed)
			if err != nil {
				return err
			}
			return renderObject(cmd.OutOrStdout(), format, transactionRow(toObject(tx), format), transactionFields)
		},
	}
	cmd.Flags().BoolVar(&failed, "failed", false, "only the failed and unfinished nodes, with the tasks they did not complete")
	addListFormat(cmd, &format)
	return cmd
}

func newGraphRunStopCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "stop RUN",
		Short: "Stop a running run: it ends in error (Stopped); agents stop its tasks at their next heartbeat",
		Args:  exactArgs("RUN"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := newAPIClient()
			if err != nil {
				return err
			}
			tx, err := c.StopTransaction(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "Run %s stopped (%s)\n", tx.UUID, tx.Status)
			return err
		},
	}
}
