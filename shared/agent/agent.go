// Package agent runs a node's tasks of the deployment graphs executed on its
// cluster: it claims them from the graphs API (long-polling when there is no
// work), runs them (shell, puppet apply, upload_file, copy_files, sync; reboot
// only when allowed) with their timeouts and retries in their own process
// groups, claims again as a heartbeat while a task runs, and reports each
// result with its exit code, duration and the tail of its output, retrying
// while the server is unreachable. `tuningbox agent` is its command.
package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/retry"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Options are what an agent is told (the flags of `tuningbox agent`).
type Options struct {
	// Node names the agent's node: FQDN, id or UUID.
	Node string
	// Once ends Run when the node has nothing left to do in the running transactions.
	Once bool
	// Workdir holds the tasks' working directory and their logs (logs/<transaction>/<task>.log).
	Workdir string
	// Wait is how long one claim waits for work on the server (long poll; 0 polls).
	Wait time.Duration
	// AllowReboot performs reboot tasks; otherwise they are reported skipped.
	AllowReboot bool
	// Puppet is the command puppet tasks run.
	Puppet string
	// StopGrace is how long a stopped task may take to exit after SIGTERM before SIGKILL.
	StopGrace time.Duration
	// Root, when set, is where the tasks' absolute paths lead: the files
	// upload_file and copy_files write, sync's destination and the working
	// directory are taken below it (a staging or test sandbox, not a
	// security boundary: commands still see the whole machine).
	Root string
	// CopyFrom is the Fuel master's file tree as this node sees it, where
	// copy_files reads its sources (Astute read them on the master): "" is
	// Root, or / without one.
	CopyFrom string
}

// Agent runs one node's tasks through api.
type Agent struct {
	api  *client.Client
	opts Options
	log  *slog.Logger
	node *client.Node
}

// New returns the agent of opts.Node talking to the server through api.
func New(api *client.Client, opts Options, log *slog.Logger) *Agent {
	if opts.Workdir == "" {
		opts.Workdir = filepath.Join(os.TempDir(), "tuningbox-agent-"+pathSafe(opts.Node))
	}
	if opts.Puppet == "" {
		opts.Puppet = "puppet"
	}
	return &Agent{api: api, opts: opts, log: log}
}

// pathSafe makes a node reference usable as a file name.
func pathSafe(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r < ' ' {
			return '_'
		}
		return r
	}, s)
}

// Back-off of claims answered "wait" (other nodes are still on what this node waits for),
// and of idle polls when --wait is 0.
const (
	waitBackoffMin = 100 * time.Millisecond
	waitBackoffMax = 2 * time.Second
	idleBackoffMax = 30 * time.Second
)

// Errors that end Run with Once: the node failed (one of its tasks, or one
// it waited for), or the run stopped before the node finished its part.
var (
	ErrTaskFailed  = errors.New("a task of this node failed")
	ErrNodeFailed  = errors.New("this node failed in the run: a task it waited for failed")
	ErrNodeStopped = errors.New("the run stopped before this node finished its tasks")
)

// Run claims, runs and reports the node's tasks until ctx ends (SIGINT/SIGTERM:
// the task in flight is stopped and reported failed) or, with Once, until the
// node has no more work: nil, or an error when the node failed or the run
// stopped before it finished (onceResult).
func (a *Agent) Run(ctx context.Context) error {
	ref, err := a.api.Ref(ctx, client.KindNode, a.opts.Node)
	if err != nil {
		return fmt.Errorf("node %s: %w", a.opts.Node, err)
	}
	if a.node, err = a.api.Node(ctx, ref); err != nil {
		return fmt.Errorf("node %s: %w", a.opts.Node, err)
	}
	for _, dir := range []string{a.opts.Workdir, a.opts.Root} {
		if err := os.MkdirAll(cmp.Or(dir, "."), 0o700); err != nil {
			return err
		}
	}
	a.log.Info("agent started", "node", a.node.ID, "fqdn", a.node.FQDN, "cluster", a.node.EnvironmentID, "once", a.opts.Once)
	failed := false
	lastTx := "" // the transaction whose task the node ran last
	backoff := time.Duration(0)
	for {
		wait := a.opts.Wait
		if a.opts.Once {
			wait = 0
		}
		c, err := a.api.ClaimWork(ctx, string(a.node.EnvironmentID), string(a.node.ID), wait)
		if ctx.Err() != nil {
			return a.stopped(failed, false)
		}
		if err != nil {
			// The server may be restarting: retry after a pause, unless it refused us.
			if !client.IsTemporary(err) {
				return err
			}
			a.log.Warn("claim failed", "err", err)
			backoff = nextBackoff(backoff, waitBackoffMin, idleBackoffMax)
			if !sleep(ctx, backoff) {
				return a.stopped(failed, false)
			}
			continue
		}
		switch c.Action {
		case "task":
			backoff, lastTx = 0, c.Transaction
			ok, err := a.runAndReport(ctx, c)
			if err != nil {
				return err
			}
			failed = failed || !ok
			if ctx.Err() != nil {
				return a.stopped(failed, !ok)
			}
		case "wait":
			backoff = nextBackoff(backoff, waitBackoffMin, waitBackoffMax)
			if !sleep(ctx, backoff) {
				return a.stopped(failed, false)
			}
		case "idle", "done":
			if a.opts.Once {
				return a.onceResult(ctx, c, lastTx, failed)
			}
			// The server already waited for work (long poll); without it, back off.
			if wait > 0 {
				backoff = 0
			} else {
				backoff = nextBackoff(backoff, time.Second, idleBackoffMax)
				if !sleep(ctx, backoff) {
					return a.stopped(failed, false)
				}
			}
		default:
			return fmt.Errorf("the server answered the claim with action %q", c.Action)
		}
	}
}

// onceResult ends Run with Once once claim says there is no more work: an
// error when one of the node's tasks failed, or the server says the node
// failed or did not finish. A run that has ended answers a claim in the
// cluster idle, so the node's outcome is then asked of the run it took part in.
func (a *Agent) onceResult(ctx context.Context, claim *client.Claim, lastTx string, failed bool) error {
	status := claim.NodeStatus
	if status == "" && lastTx != "" {
		final, err := a.api.Claim(ctx, lastTx, string(a.node.ID))
		if err != nil {
			return fmt.Errorf("the outcome of transaction %s: %w", lastTx, err)
		}
		status = final.NodeStatus
	}
	a.log.Info("no more work", "failed", failed, "node_status", status)
	switch {
	case failed:
		return ErrTaskFailed
	case status == wire.StatusError:
		return ErrNodeFailed
	case status == wire.StatusStopped:
		return ErrNodeStopped
	}
	return nil
}

// stopped ends the agent on SIGINT/SIGTERM: an error when the stop
// interrupted a task, or, with Once, when one of its tasks failed.
func (a *Agent) stopped(failed, interrupted bool) error {
	a.log.Info("agent stopped", "interrupted_task", interrupted)
	switch {
	case interrupted:
		return errors.New("stopped while running a task (reported failed)")
	case a.opts.Once && failed:
		return ErrTaskFailed
	}
	return nil
}

// nextBackoff doubles d within [lo, hi], with jitter so that many agents spread out.
func nextBackoff(d, lo, hi time.Duration) time.Duration {
	d = min(max(2*d, lo), hi)
	return d - time.Duration(rand.Int64N(int64(d)/4+1))
}

// sleep waits d; false when ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// task is what the agent reads of a claimed task (the rest of its fields
// are the server's).
type task struct {
	ID         string          `json:"id"`
	Type       string          `json:"type"`
	Parameters json.RawMessage `json:"parameters"`
}

// claimed is a claim with its task read.
type claimed struct {
	*client.Claim
	Task task
}

// readTask reads a claim's task; ok is false when the claim has none.
func readTask(doc wire.TaskDocument) (t task, ok bool, err error) {
	if len(doc) == 0 || string(doc) == "null" {
		return task{}, false, nil
	}
	if err := json.Unmarshal(doc, &t); err != nil {
		return task{}, false, fmt.Errorf("the claimed task: %w", err)
	}
	return t, true, nil
}

// runAndReport runs a claimed task and reports its result; ok is false when it failed.
func (a *Agent) runAndReport(ctx context.Context, claim *client.Claim) (ok bool, err error) {
	t, ok, err := readTask(claim.Task)
	switch {
	case err != nil:
		return false, err
	case !ok:
		return false, errors.New("the server handed out a task claim without a task")
	}
	c := &claimed{Claim: claim, Task: t}
	start := time.Now()
	tctx, end := context.WithCancelCause(ctx)
	stopHeartbeat := a.heartbeat(tctx, c, end)
	rep := a.execute(tctx, c)
	stopHeartbeat()
	end(nil)
	d := time.Since(start).Seconds()
	rep.Task, rep.Duration = t.ID, &d
	if ctx.Err() != nil && rep.Status == "error" {
		rep.Message = "interrupted: the agent was stopped; " + rep.Message
	}
	a.log.Info("task finished", "transaction", c.Transaction, "task", t.ID, "type", t.Type, "status", rep.Status,
		"exit_code", rep.ExitCode, "duration", d, "message", rep.Message)
	// The report goes out even when the agent is being stopped, retried while
	// the server is unreachable or failing: for reportPatience, or a short
	// while when the agent is stopping.
	patience := reportPatience
	if ctx.Err() != nil {
		patience = stopReportPatience
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), patience)
	defer cancel()
	var last error
	err = reportRetry.Do(rctx, func() error {
		last = a.api.Report(rctx, c.Transaction, string(a.node.ID), rep)
		if client.IsTemporary(last) {
			a.log.Warn("report failed; retrying", "task", t.ID, "err", last)
		}
		return last
	}, client.IsTemporary)
	switch {
	case err == nil:
		return rep.Status != "error", nil
	case !client.IsTemporary(last):
		// 409: the transaction ended meanwhile (stopped, or another node failed).
		a.log.Warn("report refused", "task", t.ID, "err", last)
		return rep.Status != "error", nil
	}
	return false, fmt.Errorf("report %s: %w", t.ID, last)
}

// errRunEnded ends a task whose transaction ended while it ran (stopped,
// failed on another node or on a deadline): its result would be refused.
var errRunEnded = errors.New("the transaction ended while the task ran")

// heartbeat claims the task again every c.Heartbeat while it runs, which tells
// the server that the node is alive. When the answer is no longer this task
// (the transaction ended meanwhile), it ends the task through end. A failed
// heartbeat is only logged: the server may be restarting.
func (a *Agent) heartbeat(ctx context.Context, c *claimed, end context.CancelCauseFunc) (stop func()) {
	every := wire.Seconds(c.Heartbeat)
	if every <= 0 {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
			}
			again, err := a.api.Claim(ctx, c.Transaction, string(a.node.ID))
			if err != nil {
				if ctx.Err() == nil {
					a.log.Warn("heartbeat failed", "task", c.Task.ID, "err", err)
				}
				continue
			}
			if again.Action != "task" || again.Task.ID() != c.Task.ID || again.SubTransaction != c.SubTransaction {
				end(fmt.Errorf("%w (transaction %s)", errRunEnded, again.TransactionStatus))
				return
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
	}
}

// reportRetry paces the retries of a report: its patience bounds them.
var reportRetry = retry.Policy{Attempts: 100, Base: waitBackoffMin, Max: 5 * waitBackoffMax}

// How long a task's report is retried while the server is unreachable: a
// restarting server is waited for; a stopping agent waits only briefly.
const (
	reportPatience     = 2 * time.Minute
	stopReportPatience = 10 * time.Second
)

// taskParams are the parameters the agent's task types read.
type taskParams struct {
	Cmd            string            `json:"cmd"`
	Cwd            string            `json:"cwd"`
	Timeout        float64           `json:"timeout"`
	Retries        int               `json:"retries"`
	Interval       float64           `json:"interval"`
	Env            map[string]string `json:"env"`
	PuppetManifest string            `json:"puppet_manifest"`
	PuppetModules  string            `json:"puppet_modules"`
	Path           string            `json:"path"`
	Data           *string           `json:"data"`
	Permissions    string            `json:"permissions"`
	DirPermissions string            `json:"dir_permissions"`
	Files          []struct {
		Src string `json:"src"`
		Dst string `json:"dst"`
	} `json:"files"`
	Src string `json:"src"`
	Dst string `json:"dst"`
}

// execute runs a task by its type and says how it went.
func (a *Agent) execute(ctx context.Context, c *claimed) client.TaskReport {
	t := c.Task
	var p taskParams
	if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
		if err := json.Unmarshal(t.Parameters, &p); err != nil {
			return client.TaskReport{Status: "error", Message: "parameters: " + err.Error()}
		}
	}
	p = a.sandboxed(p)
	switch {
	case c.DryRun && !c.NoopRun:
		return client.TaskReport{Status: "ready", Message: "dry run: not run"}
	case c.NoopRun && t.Type != "puppet":
		return client.TaskReport{Status: "skipped", Message: "noop run: only puppet tasks run (with --noop)"}
	}
	switch t.Type {
	case "shell":
		if p.Cmd == "" {
			return client.TaskReport{Status: "error", Message: "parameters.cmd is required"}
		}
		return a.runWithRetries(ctx, c, p, []string{"/bin/sh", "-c", p.Cmd}, isZero)
	case "puppet":
		if p.PuppetManifest == "" {
			return client.TaskReport{Status: "error", Message: "parameters.puppet_manifest is required"}
		}
		pdir := filepath.Join(a.opts.Workdir, "puppet")
		args := []string{a.opts.Puppet, "apply", "--detailed-exitcodes", "--color=false",
			"--vardir=" + filepath.Join(pdir, "var"), "--logdir=" + filepath.Join(pdir, "log")}
		if p.PuppetModules != "" {
			args = append(args, "--modulepath="+p.PuppetModules)
		}
		if c.NoopRun {
			args = append(args, "--noop")
		}
		args = append(args, p.PuppetManifest)
		// --detailed-exitcodes: 0 no changes, 2 changes; 4 and 6 mean failures.
		return a.runWithRetries(ctx, c, p, args, func(code int) bool { return code == 0 || code == 2 })
	case "upload_file":
		return fileReport(uploadFile(p))
	case "copy_files":
		return fileReport(copyFiles(p))
	case "sync":
		if p.Src == "" || p.Dst == "" {
			return client.TaskReport{Status: "error", Message: "parameters.src and parameters.dst are required"}
		}
		return a.runWithRetries(ctx, c, p, []string{"rsync", "-a", "--delete", p.Src, p.Dst}, isZero)
	case "reboot":
		if !a.opts.AllowReboot {
			return client.TaskReport{Status: "skipped", Message: "reboot not performed: the agent runs without --allow-reboot"}
		}
		// The report goes out first; the machine reboots a minute later.
		return a.runWithRetries(ctx, c, p, []string{"shutdown", "-r", "+1"}, isZero)
	case "role":
		return client.TaskReport{Status: "skipped", Message: "role tasks only group others"}
	default:
		return client.TaskReport{Status: "error", Message: fmt.Sprintf("task type %s is not run by the tuningbox agent", t.Type)}
	}
}

func isZero(code int) bool { return code == 0 }

// sandboxed returns the task's paths as this agent uses them: below Root,
// and copy_files' sources below CopyFrom.
func (a *Agent) sandboxed(p taskParams) taskParams {
	below := func(dir, path string) string {
		if dir == "" || !filepath.IsAbs(path) {
			return path
		}
		return filepath.Join(dir, path)
	}
	from := cmp.Or(a.opts.CopyFrom, a.opts.Root)
	p.Path, p.Dst, p.Cwd = below(a.opts.Root, p.Path), below(a.opts.Root, p.Dst), below(a.opts.Root, p.Cwd)
	p.Files = slices.Clone(p.Files)
	for i := range p.Files {
		p.Files[i].Src, p.Files[i].Dst = below(from, p.Files[i].Src), below(a.opts.Root, p.Files[i].Dst)
	}
	return p
}

func fileReport(msg string, err error) client.TaskReport {
	if err != nil {
		return client.TaskReport{Status: "error", Message: err.Error()}
	}
	return client.TaskReport{Status: "ready", Message: msg}
}

func parseMode(s string, def os.FileMode) (os.FileMode, error) {
	if s == "" {
		return def, nil
	}
	m, err := strconv.ParseUint(s, 8, 32)
	if err != nil || m > 0o7777 {
		return 0, fmt.Errorf("permissions %q: expected an octal mode such as 0644", s)
	}
	return os.FileMode(m), nil
}

// uploadFile writes parameters.data to parameters.path.
func uploadFile(p taskParams) (string, error) {
	if p.Path == "" || p.Data == nil {
		return "", errors.New("parameters.path and parameters.data are required")
	}
	return writeFileAtomic(p.Path, strings.NewReader(*p.Data), p)
}

// copyFiles copies parameters.files[].src to .dst on this node.
func copyFiles(p taskParams) (string, error) {
	if len(p.Files) == 0 {
		return "", errors.New("parameters.files is required")
	}
	for _, f := range p.Files {
		if f.Src == "" || f.Dst == "" {
			return "", errors.New("parameters.files[]: src and dst are required")
		}
		in, err := os.Open(f.Src)
		if err != nil {
			return "", err
		}
		_, err = writeFileAtomic(f.Dst, in, p)
		in.Close()
		if err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("copied %d files", len(p.Files)), nil
}

// writeFileAtomic writes r to path through a temporary file, so the file is
// either the old one or the whole new one.
func writeFileAtomic(path string, r io.Reader, p taskParams) (string, error) {
	mode, err := parseMode(p.Permissions, 0o644)
	if err != nil {
		return "", err
	}
	dirMode, err := parseMode(p.DirPermissions, 0o755)
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), dirMode); err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tuningbox-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, r)
	if err == nil {
		err = tmp.Chmod(mode)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("wrote %d bytes to %s", n, path), nil
}

// outputTail is how much of a task's output goes into its report.
const outputTail = 4096

// runWithRetries runs argv as the task, again up to parameters.retries times
// while it fails, parameters.interval seconds apart.
func (a *Agent) runWithRetries(ctx context.Context, c *claimed, p taskParams, argv []string, success func(int) bool) client.TaskReport {
	var rep client.TaskReport
	for attempt := 0; ; attempt++ {
		rep = a.runProcess(ctx, c, p, argv, success)
		if rep.Status != "error" || attempt >= p.Retries || ctx.Err() != nil {
			if attempt > 0 {
				rep.Message = fmt.Sprintf("%s (attempt %d of %d)", rep.Message, attempt+1, p.Retries+1)
			}
			return rep
		}
		if !sleep(ctx, wire.Seconds(max(p.Interval, 1))) {
			return rep
		}
	}
}

// runProcess runs argv in its own process group with the task's environment,
// keeps its whole output in the workdir's log and its tail for the report,
// and ends the group on timeout or when the agent stops.
func (a *Agent) runProcess(ctx context.Context, c *claimed, p taskParams, argv []string, success func(int) bool) client.TaskReport {
	timeout := wire.DefaultTaskTimeout
	if p.Timeout > 0 {
		timeout = wire.Seconds(p.Timeout)
	}
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logDir := filepath.Join(a.opts.Workdir, "logs", pathSafe(c.Transaction))
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return client.TaskReport{Status: "error", Message: err.Error()}
	}
	logFile, err := os.OpenFile(filepath.Join(logDir, pathSafe(c.Task.ID)+".log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return client.TaskReport{Status: "error", Message: err.Error()}
	}
	defer logFile.Close()
	tail := &tailBuffer{max: outputTail}
	cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
	cmd.Dir = p.Cwd
	if cmd.Dir == "" {
		cmd.Dir = a.opts.Workdir
	}
	cmd.Env = a.taskEnv(c, p)
	cmd.Stdout = io.MultiWriter(logFile, tail)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = a.opts.StopGrace
	err = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // whatever of the group is left
	}
	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	rep := client.TaskReport{TaskRun: wire.TaskRun{ExitCode: &code, Output: tail.String()}}
	var exitErr *exec.ExitError
	switch {
	case tctx.Err() == context.DeadlineExceeded && ctx.Err() == nil:
		rep.Status, rep.Message = "error", fmt.Sprintf("timed out after %s", timeout)
	case errors.Is(context.Cause(ctx), errRunEnded):
		rep.Status, rep.Message = "error", "task stopped: "+context.Cause(ctx).Error()
	case ctx.Err() != nil:
		rep.Status, rep.Message = "error", "task stopped"
	case err != nil && !errors.As(err, &exitErr):
		rep.Status, rep.Message, rep.ExitCode = "error", err.Error(), nil
	case success(code):
		rep.Status, rep.Message = "ready", fmt.Sprintf("exit status %d", code)
	default:
		rep.Status, rep.Message = "error", fmt.Sprintf("exit status %d", code)
		if last := lastLine(rep.Output); last != "" {
			rep.Message += ": " + last
		}
	}
	return rep
}

// taskEnv is the agent's environment without its credentials, the task's
// env parameter and the TUNINGBOX_ variables naming the node, transaction and task.
func (a *Agent) taskEnv(c *claimed, p taskParams) []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if name != "TUNINGBOX_PASSWORD" && name != "TUNINGBOX_TOKEN" {
			env = append(env, kv)
		}
	}
	for k, v := range p.Env {
		env = append(env, k+"="+v)
	}
	return append(env,
		"TUNINGBOX_NODE_FQDN="+a.node.FQDN,
		"TUNINGBOX_NODE_ID="+string(a.node.ID),
		"TUNINGBOX_NODE_UUID="+a.node.UUID,
		"TUNINGBOX_TRANSACTION_ID="+c.Transaction,
		"TUNINGBOX_GRAPH_TYPE="+c.GraphType,
		"TUNINGBOX_TASK_ID="+c.Task.ID,
	)
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	return strings.TrimSpace(s[strings.LastIndexByte(s, '\n')+1:])
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.ToValidUTF8(string(t.buf), "")
}
