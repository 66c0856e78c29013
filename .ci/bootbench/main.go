// Command bootbench measures each Lambda function's start-up on the local
// Runtime API (localstack/lambdaruntime): for every bootstrap under -bin, -runs
// cold starts at full CPU and -runs under a cgroup CPU quota of Lambda's share
// at -memory MB (1,769 MB is one vCPU), each the time from exec to the first
// GET /next (init), the CPU the process used by then (all its threads,
// /proc/PID/task/*/schedstat) and its first invocation. It prints a table per
// function with the size of the arm64 bootstrap of make build (-sizes) and the
// package initializers' own time (GODEBUG=inittrace=1, one run at full CPU).
// With -plan, an embedded store holding .ci/fuelscale's cluster, it then
// runs the graphs function over a copy of it at -plan-memory's share and at
// full CPU, and times every page of the cluster's serialized_tasks and its
// deploy against the function's timeout, with the largest answer (Lambda's
// 6 MB) and the peak resident memory against the function's.
//
// The functions run with the aws backend against the emulator that the
// environment's AWS_ENDPOINT_URL names (.ci/bench_bootstraps.sh starts moto),
// with Lambda's environment otherwise: static credentials in the
// environment, AWS_LAMBDA_FUNCTION_MEMORY_SIZE, GOMEMLIMIT at 90 % of it as
// the stack sets it, the -env settings, nothing of the host's but PATH.
// Everything listens on 127.0.0.1.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tuningbox/tuningbox/localstack/lambdaruntime"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/store/awsstore"
)

func main() {
	bin := flag.String("bin", "", "directory of host bootstraps, <function>/bootstrap")
	sizes := flag.String("sizes", "bin", "directory of the arm64 bootstraps of make build, whose sizes the table shows")
	runs := flag.Int("runs", 7, "cold starts per function and CPU setting")
	memory := flag.Int("memory", 256, "the function's memory setting (MB), which sets its CPU share")
	period := flag.Int("period", 100000, "the CFS period of the quota (µs)")
	cgroupRoot := flag.String("cgroup", "/sys/fs/cgroup/cpu", "the cgroup v1 cpu controller's mount")
	table := flag.String("table", "tuningbox-bootbench", "the DynamoDB table")
	bucket := flag.String("bucket", "tuningbox-bootbench", "the S3 bucket")
	var settings []string
	flag.Func("env", "KEY=VALUE: a setting of the functions' environment as the stack sets it (repeated)", func(v string) error {
		if !strings.Contains(v, "=") {
			return fmt.Errorf("%q is not KEY=VALUE", v)
		}
		settings = append(settings, v)
		return nil
	})
	planData := flag.String("plan", "", "an embedded store holding cluster 1 of .ci/fuelscale: also time the graphs function planning and deploying it at the share")
	planMemory := flag.Int("plan-memory", 1024, "the graphs function's memory (MB) for -plan: the stack's graphsMemoryMB")
	timeout := flag.Duration("timeout", 28*time.Second, "the graphs function's timeout, for -plan")
	flag.Parse()
	log.SetFlags(0)

	ctx := context.Background()
	if err := awsstore.EnsureResources(ctx, awsstore.Config{Table: *table, Bucket: *bucket, PathStyle: true}); err != nil {
		log.Fatalf("create the table and bucket on the emulator: %v", err)
	}
	limited, err := newCgroup(*cgroupRoot, *memory, *period)
	if err != nil {
		log.Printf("no CPU quota (%v): the column at the share is left out", err)
	} else {
		defer limited.remove()
	}

	base := []string{
		"PATH=" + os.Getenv("PATH"),
		"AWS_LAMBDA_FUNCTION_NAME=tuningbox-bootbench",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test", "AWS_SESSION_TOKEN=test",
		"AWS_ENDPOINT_URL=" + os.Getenv("AWS_ENDPOINT_URL"),
		"_HANDLER=bootstrap", "TZ=UTC",
		"TUNINGBOX_TABLE=" + *table, "TUNINGBOX_BUCKET=" + *bucket, "TUNINGBOX_S3_PATH_STYLE=true",
	}
	base = append(base, settings...)
	env := withMemory(base, *memory)
	functions, err := os.ReadDir(*bin)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Start-up on the local Runtime API, aws backend on %s; median of %d cold starts (min-max)\n", os.Getenv("AWS_ENDPOINT_URL"), *runs)
	fmt.Printf("settings: %s\n", strings.Join(settings, " "))
	fmt.Println("CPU / share: the CPU by /next spread evenly at the share; under quota: as CFS throttles it, full speed until the period's quota is spent")
	fmt.Printf("share: %s\n\n", limited)
	fmt.Printf("%-11s %10s %12s %18s %18s %11s %20s %20s\n", "function", "arm64 size", "package init", "init, full CPU", "CPU by /next", "CPU / share", "init under quota", "1st invoke, quota")
	for _, fn := range functions {
		bootstrap := filepath.Join(*bin, fn.Name(), "bootstrap")
		size := "-"
		if st, err := os.Stat(filepath.Join(*sizes, fn.Name(), "bootstrap")); err == nil {
			size = fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
		}
		event := firstEvent(fn.Name())
		inits, err := packageInit(ctx, bootstrap, env)
		if err != nil {
			log.Fatalf("%s: %v", fn.Name(), err)
		}
		var full, fullCPU, atShare, invoke []time.Duration
		for range *runs {
			s, err := coldStart(ctx, bootstrap, env, nil, event)
			if err != nil {
				log.Fatalf("%s: %v", fn.Name(), err)
			}
			full, fullCPU = append(full, s.init), append(fullCPU, s.cpu)
			if limited != nil {
				// A new period: the quota the previous start used in its own is not this one's.
				time.Sleep(time.Duration(*period) * time.Microsecond)
				s, err := coldStart(ctx, bootstrap, env, limited, event)
				if err != nil {
					log.Fatalf("%s at the share: %v", fn.Name(), err)
				}
				atShare, invoke = append(atShare, s.init), append(invoke, s.invoke)
			}
		}
		fmt.Printf("%-11s %10s %9.1f ms %18s %18s %8.0f ms %20s %20s\n", fn.Name(), size, ms(inits), spread(full), spread(fullCPU),
			ms(median(fullCPU))/share(*memory), spread(atShare), spread(invoke))
	}
	if *planData == "" {
		return
	}
	planLimited, err := newCgroup(*cgroupRoot, *planMemory, *period)
	if err != nil {
		log.Printf("no CPU quota (%v): the graphs function runs at full CPU only", err)
	} else {
		defer planLimited.remove()
	}
	fmt.Printf("\ngraphs function at %d MB (share: %s)\n", *planMemory, planLimited)
	for _, cg := range []*cgroup{nil, planLimited} {
		if err := plan(ctx, filepath.Join(*bin, "graphs", "bootstrap"), withMemory(base, *planMemory), cg, *planData, *timeout, *planMemory); err != nil {
			log.Fatalf("plan: %v", err)
		}
	}
}

// withMemory is env with a function's memory, and the Go runtime's soft
// limit at 90 % of it as infra/function.go sets it.
func withMemory(env []string, mb int) []string {
	return append(slices.Clip(env), "AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+strconv.Itoa(mb), fmt.Sprintf("GOMEMLIMIT=%dMiB", mb*9/10))
}

// share is the vCPU Lambda gives mb of memory (1,769 MB: one).
func share(mb int) float64 { return float64(mb) / 1769 }

// plan runs the graphs function over a copy of the embedded store in data,
// in cg (full CPU when nil), and sends it what the CLI sends to preview and
// deploy the cluster: every page of GET serialized_tasks, then PUT deploy,
// each timed against the function's timeout and Lambda's 6 MB answer, and
// the process's peak resident memory (VmHWM) after them.
func plan(ctx context.Context, bootstrap string, env []string, cg *cgroup, data string, timeout time.Duration, memory int) error {
	dir, err := os.MkdirTemp("", "bootbench-plan-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := exec.Command("cp", "-a", data+"/.", dir).Run(); err != nil {
		return fmt.Errorf("copy the store: %w", err)
	}
	env = append(slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "TUNINGBOX_") }),
		"TUNINGBOX_BACKEND=embedded", "TUNINGBOX_DATA="+dir)
	p, err := launch(bootstrap, env, cg)
	if err != nil {
		return err
	}
	defer p.stop()
	if _, err := p.ready(ctx); err != nil {
		return err
	}
	where := "full CPU"
	if cg != nil {
		where = "at the share"
	}
	cpuBefore, err := cpuTime(p.cmd.Process.Pid)
	if err != nil {
		return err
	}
	var pages []time.Duration
	var total time.Duration
	var largest int
	for path, query := "/api/v1/clusters/1/serialized_tasks", "graph_type=default"; path != ""; {
		out, took, err := p.invoke(ctx, apiEvent("GET", path, query), timeout)
		if err != nil {
			return fmt.Errorf("page %d: %w", len(pages)+1, err)
		}
		pages, total, largest = append(pages, took), total+took, max(largest, len(out.Response))
		if path, query, err = nextPage(out.Response); err != nil {
			return err
		}
	}
	out, deploy, err := p.invoke(ctx, apiEvent("PUT", "/api/v1/clusters/1/deploy", "graph_type=default"), timeout)
	if err != nil {
		return fmt.Errorf("deploy: %w", err)
	}
	if status, body, err := answer(out.Response); err != nil || status/100 != 2 {
		return fmt.Errorf("deploy: %d %.300s %v", status, body, err)
	}
	cpu, err := cpuTime(p.cmd.Process.Pid)
	if err != nil {
		return err
	}
	peak, err := peakRSS(p.cmd.Process.Pid)
	if err != nil {
		return err
	}
	verdict := "within"
	if peak > int64(memory)<<20 {
		verdict = "OVER"
	}
	fmt.Printf("%s, timeout %v: serialized_tasks %d pages in %.1f s (slowest page %.1f s, largest answer %.1f MB of 6 MB), deploy %.1f s, CPU %.1f s, peak RSS %d MB, %s the function's %d MB\n",
		where, timeout, len(pages), total.Seconds(), slices.Max(pages).Seconds(), float64(largest)/1e6, deploy.Seconds(), (cpu - cpuBefore).Seconds(),
		peak>>20, verdict, memory)
	return nil
}

// answer is the status and body of an API Gateway response.
func answer(response []byte) (int, []byte, error) {
	var a struct {
		StatusCode int    `json:"statusCode"`
		Body       string `json:"body"`
		Base64     bool   `json:"isBase64Encoded"`
	}
	if err := json.Unmarshal(response, &a); err != nil {
		return 0, nil, err
	}
	if !a.Base64 {
		return a.StatusCode, []byte(a.Body), nil
	}
	body, err := base64.StdEncoding.DecodeString(a.Body)
	return a.StatusCode, body, err
}

// nextPage reads the next page's path and query from an answer's links
// (none: the last page).
func nextPage(response []byte) (path, query string, err error) {
	status, body, err := answer(response)
	if err != nil {
		return "", "", err
	}
	var page struct {
		Links []struct {
			Href string `json:"href"`
		} `json:"links"`
	}
	if status != 200 || json.Unmarshal(body, &page) != nil {
		return "", "", fmt.Errorf("status %d: %.300s", status, body)
	}
	if len(page.Links) == 0 {
		return "", "", nil
	}
	path, query, _ = strings.Cut(page.Links[0].Href, "?")
	return path, query, nil
}

// peakRSS is the process's peak resident memory (VmHWM), in bytes.
func peakRSS(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// start is one cold start's measurements.
type start struct{ init, cpu, invoke time.Duration }

// process is a bootstrap running on its own Runtime API.
type process struct {
	api    *lambdaruntime.Server
	cmd    *exec.Cmd
	stderr lockedBuffer
	began  time.Time
}

// lockedBuffer is the process's log, which its copying goroutine writes while we read.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

// launch runs bootstrap with env (in cg unless nil); stop ends it.
func launch(bootstrap string, env []string, cg *cgroup) (*process, error) {
	api, err := lambdaruntime.NewServer()
	if err != nil {
		return nil, err
	}
	p := &process{api: api, cmd: exec.Command(bootstrap)}
	if cg != nil {
		// The shell puts itself into the cgroup, then becomes the bootstrap: its
		// few hundred microseconds count as the function's.
		p.cmd = exec.Command("/bin/sh", "-c", `echo $$ > "$0" && exec "$1"`, cg.procs(), bootstrap)
	}
	p.cmd.Env = append(slices.Clip(env), "AWS_LAMBDA_RUNTIME_API="+api.Addr)
	p.cmd.Stderr = &p.stderr
	p.began = time.Now()
	if err := p.cmd.Start(); err != nil {
		api.Close()
		return nil, err
	}
	return p, nil
}

func (p *process) stop() {
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.api.Close()
}

// ready waits for the first /next and returns the init time.
func (p *process) ready(ctx context.Context) (time.Duration, error) {
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	d, err := p.api.InitTime(wait, p.began)
	if err != nil {
		return 0, fmt.Errorf("no first /next: %v\n%s", err, p.stderr.Bytes())
	}
	return d, nil
}

// invoke sends one event with Lambda's deadline of timeout and returns the answer and its time.
func (p *process) invoke(ctx context.Context, event []byte, timeout time.Duration) (lambdaruntime.Outcome, time.Duration, error) {
	wait, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	out, took, err := p.api.Invoke(wait, event, time.Now().Add(timeout))
	if err != nil {
		return out, took, fmt.Errorf("%v\n%s", err, p.stderr.Bytes())
	}
	if out.ErrorType != "" {
		return out, took, fmt.Errorf("the invocation failed: %s %s\n%s", out.ErrorType, out.ErrorBody, p.stderr.Bytes())
	}
	return out, took, nil
}

// coldStart runs bootstrap (in cg unless nil) until its first /next, reads
// the CPU it used, sends it event, and stops it.
func coldStart(ctx context.Context, bootstrap string, env []string, cg *cgroup, event []byte) (start, error) {
	p, err := launch(bootstrap, env, cg)
	if err != nil {
		return start{}, err
	}
	defer p.stop()
	var s start
	if s.init, err = p.ready(ctx); err != nil {
		return s, err
	}
	if s.cpu, err = cpuTime(p.cmd.Process.Pid); err != nil {
		return s, err
	}
	_, s.invoke, err = p.invoke(ctx, event, 30*time.Second)
	return s, err
}

// cpuTime is the CPU time every thread of the process has run (schedstat, ns).
func cpuTime(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("no threads of %d: %v", pid, err)
	}
	var total time.Duration
	for _, t := range tasks {
		data, err := os.ReadFile(t)
		if err != nil {
			return 0, err
		}
		ns, err := strconv.ParseInt(strings.Fields(string(data))[0], 10, 64)
		if err != nil {
			return 0, err
		}
		total += time.Duration(ns)
	}
	return total, nil
}

// initLine is one package initializer of GODEBUG=inittrace=1.
var initLine = regexp.MustCompile(`^init \S+ @\S+ ms, ([0-9.]+) ms clock`)

// packageInit is the time the package initializers take at full CPU (one
// run, until the process asks for its first event).
func packageInit(ctx context.Context, bootstrap string, env []string) (time.Duration, error) {
	p, err := launch(bootstrap, append(slices.Clip(env), "GODEBUG=inittrace=1"), nil)
	if err != nil {
		return 0, err
	}
	defer p.stop()
	if _, err := p.ready(ctx); err != nil {
		return 0, err
	}
	var total float64
	lines := bufio.NewScanner(bytes.NewReader(p.stderr.Bytes()))
	for lines.Scan() {
		if m := initLine.FindStringSubmatch(lines.Text()); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			total += v
		}
	}
	return time.Duration(total * float64(time.Millisecond)), nil
}

// firstEvent is the first event a cold function gets: for an endpoint group a
// read of one of its routes as API Gateway sends it, the authorizer's answer
// in its context; for the authorizer a request with an unknown API token
// (one lookup of its keyed hash, no bcrypt); for gc its schedule's event.
func firstEvent(function string) []byte {
	path := map[string]string{
		"config": "/api/v1/config/components", "graphs": "/api/v1/releases", "claims": "/api/v1/releases",
		"templates": "/api/v1/deploy_templates", "auth": "/api/v1/users",
	}[function]
	var ev any
	switch {
	case function == "authorizer":
		bearer := "Bearer " + auth.TokenPrefix + base64.RawURLEncoding.EncodeToString(make([]byte, 32))
		ev = map[string]any{"version": "2.0", "type": "REQUEST", "routeArn": "arn:aws:execute-api:us-east-1:123456789012:api/$default/GET/api/v1/releases",
			"identitySource": []string{bearer}, "routeKey": "ANY /api/v1/releases", "rawPath": "/api/v1/releases",
			"headers":        map[string]string{"authorization": bearer},
			"requestContext": map[string]any{"http": map[string]any{"method": "GET", "path": "/api/v1/releases", "sourceIp": "127.0.0.1"}}}
	case function == "gc":
		ev = map[string]any{"source": "aws.events", "detail-type": "Scheduled Event", "detail": map[string]any{}}
	case path != "":
		return apiEvent("GET", path, "")
	default:
		log.Fatalf("no first event for function %s", function)
	}
	data, _ := json.Marshal(ev)
	return data
}

// apiEvent is a request as an HTTP API sends it (payload 2.0), with the
// authorizer's answer for an administrator in its context.
func apiEvent(method, path, query string) []byte {
	data, _ := json.Marshal(map[string]any{"version": "2.0", "routeKey": "ANY " + path, "rawPath": path, "rawQueryString": query,
		"headers": map[string]string{"accept": "application/json"},
		"requestContext": map[string]any{
			"http":       map[string]any{"method": method, "path": path, "protocol": "HTTP/1.1", "sourceIp": "127.0.0.1"},
			"authorizer": map[string]any{"lambda": authapi.EncodeAuthorizerContext(auth.Principal{User: "bench", Role: auth.Admin})},
			"requestId":  "bootbench", "stage": "$default"}})
	return data
}

// cgroup is a cgroup v1 cpu group with a CFS quota.
type cgroup struct {
	dir                   string
	memory, quota, period int
}

// newCgroup is a group with the CPU share of mb of memory, as a quota per period (µs).
func newCgroup(root string, mb, period int) (*cgroup, error) {
	dir := filepath.Join(root, fmt.Sprintf("tuningbox-bootbench-%d-%d", os.Getpid(), mb))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	quota := int(share(mb) * float64(period))
	cg := &cgroup{dir, mb, quota, period}
	for file, value := range map[string]int{"cpu.cfs_period_us": period, "cpu.cfs_quota_us": quota} {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(strconv.Itoa(value)), 0o644); err != nil {
			cg.remove()
			return nil, err
		}
	}
	return cg, nil
}

func (c *cgroup) procs() string { return filepath.Join(c.dir, "cgroup.procs") }

func (c *cgroup) String() string {
	if c == nil {
		return "none"
	}
	return fmt.Sprintf("cgroup v1 cpu.cfs_quota_us=%d per cpu.cfs_period_us=%d (%d MB of 1,769 MB per vCPU = %.3f vCPU)", c.quota, c.period, c.memory, share(c.memory))
}

// remove deletes the group, whose processes have all ended.
func (c *cgroup) remove() {
	if err := os.Remove(c.dir); err != nil {
		log.Printf("remove %s: %v", c.dir, err)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// spread is "median (min-max)" in milliseconds.
func spread(d []time.Duration) string {
	if len(d) == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f (%.1f-%.1f)", ms(median(d)), ms(slices.Min(d)), ms(slices.Max(d)))
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}
