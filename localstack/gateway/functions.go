package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuningbox/tuningbox/localstack/lambdaruntime"
)

// initTimeout is Lambda's limit on a function's init phase.
const initTimeout = 10 * time.Second

// maxInstances bounds the concurrent execution environments of a function
// without reserved concurrency; a request beyond them waits for one to be
// free. A function with reserved concurrency has that many, and throttles
// an invocation beyond them, as Lambda does.
const maxInstances = 4

// function runs a function's bootstrap as Lambda does: one process per
// execution environment, one event at a time each, started on demand (a cold
// start), kept warm afterwards, killed when it overruns its timeout or memory.
type function struct {
	spec      *functionSpec
	bootstrap string
	env       []string
	logs      io.Writer

	slots chan struct{} // one token per allowed instance
	mu    sync.Mutex
	idle  []*instance
	stats functionStats
}

type functionStats struct {
	inits     durations // process start -> first /next
	cold      durations // invokes of a fresh instance (init not included)
	warm      durations // invokes of an instance that had served before
	errors    int       // invocations that failed (error, timeout, killed)
	throttled int       // invocations refused beyond the reserved concurrency
	maxRSSKB  int64     // peak resident set of any instance
}

type instance struct {
	api     *lambdaruntime.Server
	cmd     *exec.Cmd
	exited  chan struct{}
	started time.Time
	served  int
}

// invocationError is a failed invocation, as Lambda reports it.
type invocationError struct {
	Type    string
	Message string
}

func (e *invocationError) Error() string { return e.Type + ": " + e.Message }

func newFunction(spec *functionSpec, binDir string, base []string, logs io.Writer) (*function, error) {
	bootstrap := filepath.Join(binDir, spec.name, "bootstrap")
	if binDir == "" {
		// The template's own asset runs only on its architecture.
		if (spec.arch == "arm64") != (runtime.GOARCH == "arm64") {
			return nil, fmt.Errorf("function %s is built for %s; give -bin with bootstraps built for this host", spec.name, spec.arch)
		}
		bootstrap = filepath.Join(spec.asset, "bootstrap")
	}
	if _, err := os.Stat(bootstrap); err != nil {
		return nil, fmt.Errorf("function %s: %w", spec.name, err)
	}
	env := slices.Clone(base)
	for k, v := range spec.env {
		env = append(env, k+"="+v)
	}
	env = append(env,
		"AWS_LAMBDA_FUNCTION_NAME="+spec.name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(spec.memoryMB),
		"AWS_LAMBDA_FUNCTION_VERSION=$LATEST",
		"_HANDLER=bootstrap",
		"TZ=UTC",
		// Lambda does not tell the Go runtime its memory; the stack sets GOMEMLIMIT the same way (infra/function.go).
		fmt.Sprintf("GOMEMLIMIT=%dMiB", spec.memoryMB*9/10),
	)
	instances := maxInstances
	if spec.reserved > 0 {
		instances = spec.reserved
	}
	f := &function{spec: spec, bootstrap: bootstrap, env: env, logs: logs, slots: make(chan struct{}, instances)}
	return f, nil
}

// start runs a new execution environment and waits for its init to end.
func (f *function) start(extraEnv ...string) (*instance, error) {
	api, err := lambdaruntime.NewServer()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(f.bootstrap)
	cmd.Env = append(slices.Clone(f.env), extraEnv...)
	cmd.Env = append(cmd.Env, "AWS_LAMBDA_RUNTIME_API="+api.Addr)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	go prefixLines(f.logs, pr, f.spec.name)
	inst := &instance{api: api, cmd: cmd, exited: make(chan struct{}), started: time.Now()}
	if err := cmd.Start(); err != nil {
		api.Close()
		return nil, err
	}
	go func() {
		cmd.Wait()
		pw.Close()
		api.Close()
		close(inst.exited)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	go func() {
		select {
		case <-inst.exited:
			cancel()
		case <-ctx.Done():
		}
	}()
	d, err := api.InitTime(ctx, inst.started)
	if err != nil {
		inst.kill()
		return nil, &invocationError{"Runtime.ExitError", fmt.Sprintf("init failed (%v): %s", err, cmd.ProcessState)}
	}
	f.mu.Lock()
	f.stats.inits = append(f.stats.inits, d)
	f.mu.Unlock()
	return inst, nil
}

func (inst *instance) kill() {
	inst.cmd.Process.Kill()
	<-inst.exited
}

// invoke runs one event on a free execution environment (a new one when none is idle).
func (f *function) invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if f.spec.reserved > 0 {
		select {
		case f.slots <- struct{}{}:
		default:
			f.count(func(s *functionStats) { s.throttled++ })
			return nil, &invocationError{"TooManyRequestsException", fmt.Sprintf("Rate Exceeded: all %d reserved executions are busy", f.spec.reserved)}
		}
	} else {
		select {
		case f.slots <- struct{}{}:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	defer func() { <-f.slots }()
	f.mu.Lock()
	var inst *instance
	if n := len(f.idle); n > 0 {
		inst, f.idle = f.idle[n-1], f.idle[:n-1]
	}
	f.mu.Unlock()
	if inst == nil {
		var err error
		if inst, err = f.start(); err != nil {
			f.count(func(s *functionStats) { s.errors++ })
			return nil, err
		}
	}
	out, err := f.run(ctx, inst, payload)
	if err != nil {
		inst.kill() // Lambda discards an environment after a timeout or a crash
		f.count(func(s *functionStats) { s.errors++ })
		return nil, err
	}
	f.mu.Lock()
	f.idle = append(f.idle, inst)
	f.mu.Unlock()
	return out, nil
}

func (f *function) run(ctx context.Context, inst *instance, payload []byte) ([]byte, error) {
	deadline := time.Now().Add(f.spec.timeout)
	ictx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	go func() {
		select {
		case <-inst.exited:
			cancel()
		case <-ictx.Done():
		}
	}()
	out, took, err := inst.api.Invoke(ictx, payload, deadline)
	rss, peak := inst.memory()
	f.count(func(s *functionStats) { s.maxRSSKB = max(s.maxRSSKB, peak) })
	switch {
	case err != nil && time.Now().After(deadline):
		return nil, &invocationError{"Sandbox.Timedout", fmt.Sprintf("Task timed out after %v", f.spec.timeout)}
	case err != nil:
		return nil, &invocationError{"Runtime.ExitError", fmt.Sprintf("the runtime exited: %v", inst.cmd.ProcessState)}
	case rss > int64(f.spec.memoryMB)*1024:
		return nil, &invocationError{"Runtime.OutOfMemory", fmt.Sprintf("resident set %d MB over the function's %d MB", rss/1024, f.spec.memoryMB)}
	case out.ErrorType != "":
		return nil, &invocationError{out.ErrorType, string(out.ErrorBody)}
	}
	f.count(func(s *functionStats) {
		if inst.served == 0 {
			s.cold = append(s.cold, took)
		} else {
			s.warm = append(s.warm, took)
		}
	})
	inst.served++
	return out.Response, nil
}

func (f *function) count(update func(*functionStats)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	update(&f.stats)
}

// memory reads the process's resident set and its peak, in KiB, from /proc.
func (inst *instance) memory() (rss, peak int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", inst.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, value, _ := strings.Cut(line, ":")
		kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			rss = kb
		case "VmHWM":
			peak = kb
		}
	}
	return rss, peak
}

// close stops every execution environment.
func (f *function) close() {
	f.mu.Lock()
	idle := f.idle
	f.idle = nil
	f.mu.Unlock()
	for _, inst := range idle {
		inst.kill()
	}
}

// prefixLines copies a function's log lines to w, each prefixed with its name.
func prefixLines(w io.Writer, r io.Reader, name string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	l := log.New(w, "", 0)
	for sc.Scan() {
		l.Printf("[%s] %s", name, sc.Bytes())
	}
	io.Copy(io.Discard, r)
}

// durations summarizes timings as n, median and p90.
type durations []time.Duration

func (d durations) String() string {
	if len(d) == 0 {
		return "n=0"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("n=%d median=%v p90=%v max=%v", len(s), at(0.5), at(0.9), at(1))
}
