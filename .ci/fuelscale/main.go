// Command fuelscale measures the whole planning path at Fuel scale (part of
// `make bench`, issue 33): fuel-library's default graph and role metadata
// (testdata/fuel/release) on -nodes nodes, each with real astute data (the
// three testdata/fuel/hiera files, made unique per node: uid, fqdn, name)
// stored in the ConfigDB at the node level as the graph's deployment data. It
// times the data load, GET /clusters/1/serialized_tasks (every page; the
// answer's size), PUT /clusters/1/deploy and the transaction's plan, then
// -agents agents claiming and reporting at full speed (claim latency), then
// -pollers real agents long-polling a dry run, and samples the server's RssAnon.
//
// With -url it drives a running `tuningbox serve` (whose PID -pid names, for
// its memory); without, it serves the application in this process over an
// embedded store in a temporary directory, where -cpuprofile and -memprofile
// profile the plan and the execution (not the load); its CPU time and RssAnon
// are then the whole process's, the client's included.
// Everything runs on 127.0.0.1.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/agent"
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func main() {
	nodes := flag.Int("nodes", 1000, "nodes in the cluster")
	fuel := flag.String("fuel", "testdata/fuel", "Fuel's data (release/, hiera/)")
	url := flag.String("url", "", "a running serve's base URL (default: serve in this process)")
	pid := flag.Int("pid", 0, "the running serve's PID, for its RssAnon")
	user := flag.String("user", "bench", "administrator")
	password := flag.String("password", "bench-fuelscale-secret", "the administrator's password")
	loaders := flag.Int("loaders", 4, "concurrent clients loading the data")
	cpuProfile := flag.String("cpuprofile", "", "in process: write a CPU profile of plan and execute here")
	memProfile := flag.String("memprofile", "", "in process: write a heap profile (allocations) of plan and execute here")
	explain := flag.Bool("explain", true, "also time serialized_tasks?explain")
	peakProfile := flag.String("peakprofile", "", "in process: write here the heap profile of the largest live heap seen after a collection during plan and execute")
	agents := flag.Int("agents", 20, "agents claiming and reporting at full speed after the deploy (0: none)")
	agentTime := flag.Duration("agent-time", 20*time.Second, "how long the agents run")
	agentProfile := flag.String("agentprofile", "", "in process: write a CPU profile of the agents' runs here")
	pollers := flag.Int("pollers", 0, "then, on a dry run, this many real agents long-polling (one per node) for -agent-time")
	flag.Parse()

	if *url == "" {
		srv, closeStore := serveInProcess(*user, *password)
		defer closeStore()
		defer srv.Close()
		*url, *pid = srv.URL, os.Getpid()
	}
	c := &caller{base: strings.TrimRight(*url, "/"), user: *user, password: *password,
		http: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: max(*loaders, *agents) + 2}}}
	peak := sampleAnon(*pid)

	start := time.Now()
	setUp(c, *fuel)
	docs := nodeDocuments(*fuel)
	loadNodes(c, *nodes, docs, *loaders)
	fmt.Printf("fuelscale %d nodes: data load %.1f s (%d nodes, ~%d KB of astute data each, %d clients); serve RssAnon %d MiB\n",
		*nodes, time.Since(start).Seconds(), *nodes, len(docs["compute"].encode(1))>>10, *loaders, anonBytes(*pid)>>20)

	stopProfiles := startProfiles(*cpuProfile)
	cpuStart := cpuSeconds(*pid)
	stopPeak := profilePeak(*peakProfile)
	planStart := time.Now()
	answer := c.readPages("/api/v1/clusters/1/serialized_tasks?graph_type=default")
	planTime := time.Since(planStart)
	fmt.Printf("fuelscale %d nodes: GET serialized_tasks %.2f s (first page %.2f s), answer %.1f MB (%d tasks) in %d pages of at most %.1f MB; serve RssAnon %d MiB\n",
		*nodes, planTime.Seconds(), answer.first.Seconds(), float64(answer.bytes)/1e6, answer.tasks, answer.pages, float64(answer.largest)/1e6, anonBytes(*pid)>>20)
	deployStart := time.Now()
	var tx struct {
		UUID            string `json:"uuid"`
		SubTransactions []struct {
			UUID string `json:"uuid"`
		} `json:"sub_transactions"`
	}
	c.decode("PUT", "/api/v1/clusters/1/deploy?graph_type=default", &tx)
	deployTime := time.Since(deployStart)
	stopProfiles()
	stopPeak()
	writeHeapProfile(*memProfile)
	fmt.Printf("fuelscale %d nodes: PUT deploy %.2f s; plan and execute %.2f s, serve's CPU time %.2f s; serve RssAnon %d MiB, peak %d MiB\n",
		*nodes, deployTime.Seconds(), (planTime + deployTime).Seconds(), cpuSeconds(*pid)-cpuStart, anonBytes(*pid)>>20, peak.Load()>>20)
	if *explain {
		timeExplained(c, *nodes, planTime)
	}
	planRead := time.Now()
	plan := c.readPages("/api/v1/transactions/" + tx.SubTransactions[0].UUID + "/plan")
	fmt.Printf("fuelscale %d nodes: GET the transaction's plan %.2f s, %.1f MB in %d pages of at most %.1f MB\n",
		*nodes, time.Since(planRead).Seconds(), float64(plan.bytes)/1e6, plan.pages, float64(plan.largest)/1e6)
	stopAgentProfile := startProfiles(*agentProfile)
	defer stopAgentProfile()
	if *agents > 0 {
		run := runAgents(c, tx.UUID, *nodes, *agents, *agentTime)
		fmt.Printf("fuelscale %d nodes: %d agents for %v: %d claims (%.0f/s), %d reports, %d error answers; claim latency p50 %v, p99 %v, max %v; serve RssAnon %d MiB, peak %d MiB\n",
			*nodes, *agents, *agentTime, len(run.latencies), float64(len(run.latencies))/agentTime.Seconds(), run.reports, run.errors,
			run.quantile(0.5), run.quantile(0.99), run.quantile(1), anonBytes(*pid)>>20, peak.Load()>>20)
	}
	if *pollers > 0 {
		c.call("POST", "/api/v1/transactions/"+tx.UUID+"/stop", "")
		c.call("PUT", "/api/v1/clusters/1/deploy?graph_type=default&dry_run", "")
		run := runPollers(c, min(*pollers, *nodes), *agentTime)
		fmt.Printf("fuelscale %d nodes: %d agents (tuningbox agent --wait 25s, a dry run) for %v: %d claims, %.1f per agent per minute; %d tasks reported; claim latency p50 %v, p99 %v; %d error answers; serve RssAnon %d MiB, peak %d MiB\n",
			*nodes, min(*pollers, *nodes), *agentTime, len(run.latencies), float64(len(run.latencies))/float64(min(*pollers, *nodes))/agentTime.Minutes(),
			run.reports, run.quantile(0.5), run.quantile(0.99), run.errors, anonBytes(*pid)>>20, peak.Load()>>20)
	}
}

// countingTransport records each claim's latency, the reports and the error answers the agents get.
type countingTransport struct {
	next http.RoundTripper
	mu   sync.Mutex
	run  agentRun
	// statuses counts the error answers by status and the path's last segment.
	statuses map[string]int
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := t.next.RoundTrip(req)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case err != nil && req.Context().Err() != nil:
		// A claim in flight when the run ended: no answer.
	case err != nil || resp.StatusCode >= 400:
		t.run.errors++
		status := http.StatusBadGateway
		if err == nil {
			status = resp.StatusCode
		}
		t.statuses[fmt.Sprintf("%d %s", status, req.URL.Path[strings.LastIndexByte(req.URL.Path, '/')+1:])]++
	case strings.HasSuffix(req.URL.Path, "/claim"):
		t.run.latencies = append(t.run.latencies, time.Since(start))
	case strings.HasSuffix(req.URL.Path, "/result"):
		t.run.reports++
	}
	return resp, err
}

// runPollers runs the real agent (shared/agent, as `tuningbox agent --wait
// 25s`) for nodes 1..n for d, on the running dry run: each long-polls its
// cluster, claims its tasks and reports them without running them.
func runPollers(c *caller, n int, d time.Duration) agentRun {
	transport := &countingTransport{next: &http.Transport{MaxIdleConnsPerHost: n + 2}, statuses: map[string]int{}}
	api, err := client.New(c.base, client.WithBasicAuth(c.user, c.password), client.WithHTTPClient(&http.Client{Transport: transport}))
	if err != nil {
		log.Fatal(err)
	}
	workdir, err := os.MkdirTemp("", "fuelscale-agents")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(workdir)
	ctx, stop := context.WithTimeout(context.Background(), d)
	defer stop()
	var wg sync.WaitGroup
	for id := 1; id <= n; id++ {
		wg.Go(func() {
			a := agent.New(api, agent.Options{Node: strconv.Itoa(id), Wait: 25 * time.Second, Workdir: filepath.Join(workdir, strconv.Itoa(id))}, slog.New(slog.DiscardHandler))
			_ = a.Run(ctx) // ends when ctx does
		})
	}
	wg.Wait()
	transport.mu.Lock()
	defer transport.mu.Unlock()
	slices.Sort(transport.run.latencies)
	if len(transport.statuses) > 0 {
		fmt.Printf("fuelscale: the agents' error answers: %v\n", transport.statuses)
	}
	return transport.run
}

// serveInProcess serves the application on 127.0.0.1 over an embedded store in a temporary directory.
func serveInProcess(user, password string) (*httptest.Server, func()) {
	dir, err := os.MkdirTemp("", "fuelscale")
	if err != nil {
		log.Fatal(err)
	}
	b, err := bolt.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		log.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = user, password
	h, err := server.NewHandler(store.Backend{Index: b.Index, Blobs: b.Blobs}, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	return httptest.NewServer(h), func() { b.Close(); os.RemoveAll(dir) }
}

// setUp creates the release (fuel-library's role metadata and default
// graph), the ConfigDB environment 1 with the node level, and cluster 1 on the release.
func setUp(c *caller, fuel string) {
	release := yamlJSON(filepath.Join(fuel, "release", "release-metadata.yaml"))
	c.call("POST", "/api/v1/releases", `{"name":"mitaka-9.0","version":"9.0",`+string(release[1:]))
	tasks := yamlJSON(filepath.Join(fuel, "release", "tasks-default.yaml"))
	c.call("POST", "/api/v1/releases/1/deployment_graphs/default", `{"tasks":`+string(tasks)+`}`)
	c.call("POST", "/api/v1/config/components", `{"name":"fuel","resource_definitions":[{"name":"astute"}]}`)
	c.call("POST", "/api/v1/config/environments", `{"id":1,"components":["fuel"],"hierarchy_levels":["nodes"]}`)
	c.call("PUT", "/api/v1/clusters/1", `{"release_id":1,"plugins":[]}`)
}

// roleData is one role's astute.yaml, made a node's own by encode.
type roleData map[string]any

// encode returns the data as node id's: its own uid, names and fqdn.
func (d roleData) encode(id int) []byte {
	own := maps.Clone(d)
	own["uid"] = strconv.Itoa(id)
	own["user_node_name"] = fmt.Sprintf("node-%d", id)
	own["fqdn"] = fmt.Sprintf("node-%d.test.domain.local", id)
	out, err := json.Marshal(own)
	if err != nil {
		log.Fatal(err)
	}
	return out
}

// nodeDocuments reads the shared nodes' data by role; the controllers that
// are not the primary get the primary's data with their own role.
func nodeDocuments(fuel string) map[string]roleData {
	docs := map[string]roleData{}
	for _, name := range []string{"primary-controller", "compute", "ceph-osd"} {
		var d roleData
		if err := json.Unmarshal(yamlJSON(filepath.Join(fuel, "hiera", "neut_vlan.ceph-"+name+".yaml")), &d); err != nil {
			log.Fatal(err)
		}
		docs[name] = d
	}
	controller := maps.Clone(docs["primary-controller"])
	controller["roles"] = []string{"controller"}
	docs["controller"] = controller
	return docs
}

// roleOf is node id's role: three controllers (the first the primary), then computes and Ceph OSDs in turn.
func roleOf(id int) string {
	switch {
	case id == 1:
		return "primary-controller"
	case id <= 3:
		return "controller"
	case id%2 == 0:
		return "compute"
	default:
		return "ceph-osd"
	}
}

// loadNodes registers the nodes in environment 1 and stores each one's astute data at its node level.
func loadNodes(c *caller, n int, docs map[string]roleData, clients int) {
	var next atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for id := int(next.Add(1)); id <= n; id = int(next.Add(1)) {
				role := roleOf(id)
				node, _ := json.Marshal(map[string]any{"id": id, "fqdn": fmt.Sprintf("node-%d.test.domain.local", id), "environment_id": 1, "roles": []string{role}})
				c.call("POST", "/api/v1/nodes", string(node))
				c.call("PUT", fmt.Sprintf("/api/v1/config/environments/1/nodes/%d/resources/astute/values", id), string(docs[role].encode(id)))
			}
		})
	}
	wg.Wait()
}

// caller sends the bench's requests as the administrator; any error answer ends the bench.
type caller struct {
	base, user, password string
	http                 *http.Client
}

func (c *caller) send(method, path, body string) *http.Response {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.SetBasicAuth(c.user, c.password)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	if resp.StatusCode >= 400 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		log.Fatalf("%s %s: %s %s", method, path, resp.Status, data)
	}
	return resp
}

func (c *caller) call(method, path, body string) {
	resp := c.send(method, path, body)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// decode sends a request and decodes its answer into out.
func (c *caller) decode(method, path string, out any) {
	resp := c.send(method, path, "")
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		log.Fatalf("%s %s: %v", method, path, err)
	}
}

// pagedAnswer is what reading a listing page by page took.
type pagedAnswer struct {
	pages, tasks   int
	bytes, largest int64
	first          time.Duration
}

// readPages reads a listing by node and every page its next links lead to,
// counting the task bodies (`"task":{`) of serialized_tasks.
func (c *caller) readPages(path string) pagedAnswer {
	var out pagedAnswer
	start := time.Now()
	for path != "" {
		resp := c.send("GET", path, "")
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			log.Fatal(err)
		}
		if out.pages == 0 {
			out.first = time.Since(start)
		}
		out.pages++
		out.bytes += int64(len(body))
		out.largest = max(out.largest, int64(len(body)))
		out.tasks += bytes.Count(body, []byte(`"task":{`))
		var page struct {
			Links []struct {
				Href string `json:"href"`
			} `json:"links"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			log.Fatal(err)
		}
		path = ""
		if len(page.Links) > 0 {
			path = page.Links[0].Href
		}
	}
	return out
}

// agentRun is what the agents saw: each claim's latency, reports, error answers.
type agentRun struct {
	latencies       []time.Duration
	reports, errors int
}

func (a agentRun) quantile(q float64) time.Duration {
	if len(a.latencies) == 0 {
		return 0
	}
	return a.latencies[int(q*float64(len(a.latencies)-1))].Round(time.Millisecond)
}

// runAgents plays agents on the transaction for d: each takes the next node
// in turn, claims there and reports a task it gets done at once.
func runAgents(c *caller, tx string, nodes, agents int, d time.Duration) agentRun {
	var mu sync.Mutex
	var run agentRun
	var next atomic.Int64
	deadline := time.Now().Add(d)
	var wg sync.WaitGroup
	for range agents {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				node := int(next.Add(1))%nodes + 1
				start := time.Now()
				status, answer := c.try("POST", fmt.Sprintf("/api/v1/transactions/%s/nodes/%d/claim", tx, node), "")
				took := time.Since(start)
				var claim struct {
					Action string `json:"action"`
					Task   struct {
						ID string `json:"id"`
					} `json:"task"`
				}
				reported, failed := 0, 0
				if status >= 400 || json.Unmarshal(answer, &claim) != nil {
					failed++
				} else if claim.Action == "task" {
					report, _ := json.Marshal(map[string]string{"task": claim.Task.ID, "status": "ready"})
					if status, _ := c.try("POST", fmt.Sprintf("/api/v1/transactions/%s/nodes/%d/result", tx, node), string(report)); status >= 400 {
						failed++
					} else {
						reported++
					}
				}
				mu.Lock()
				run.latencies = append(run.latencies, took)
				run.reports += reported
				run.errors += failed
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(run.latencies)
	return run
}

// try sends a request whose error answers are counted, not fatal; a
// connection the server closed (its write timeout) counts as a 502.
func (c *caller) try(method, path, body string) (int, []byte) {
	req, err := http.NewRequest(method, c.base+path, strings.NewReader(body))
	if err != nil {
		log.Fatal(err)
	}
	req.SetBasicAuth(c.user, c.password)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return http.StatusBadGateway, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, data
}

// yamlJSON reads a YAML file as the CLI does, as JSON.
func yamlJSON(path string) []byte {
	raw, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	v, err := puppetyaml.Decode(raw)
	if err != nil {
		log.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		log.Fatal(err)
	}
	return out
}

// anonBytes is a process's RssAnon (0 without a PID).
func anonBytes(pid int) int64 {
	if pid == 0 {
		return 0
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}

// cpuSeconds is the CPU time (user and system) a process used so far: on a
// shared machine it is what a request cost, whatever else runs.
func cpuSeconds(pid int) float64 {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// The fields after the command's closing parenthesis; utime and stime are the 14th and 15th of the line.
	fields := strings.Fields(string(data[bytes.LastIndexByte(data, ')')+1:]))
	utime, _ := strconv.ParseFloat(fields[11], 64)
	stime, _ := strconv.ParseFloat(fields[12], 64)
	return (utime + stime) / clockTicks
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/PID/stat's times (100 on Linux).
const clockTicks = 100

// sampleAnon keeps the peak of a process's RssAnon, sampled every 50 ms.
func sampleAnon(pid int) *atomic.Int64 {
	var peak atomic.Int64
	go func() {
		for {
			if v := anonBytes(pid); v > peak.Load() {
				peak.Store(v)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}()
	return &peak
}

// profilePeak writes to path (nothing when empty) the heap profile taken
// when the live heap after a collection was the largest seen, until the
// function returned is called: what the heap held at its peak.
func profilePeak(path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var largest uint64
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
			}
			if metrics.Read(sample); sample[0].Value.Uint64() > largest {
				largest = sample[0].Value.Uint64()
				f, err := os.Create(path)
				if err != nil {
					log.Fatal(err)
				}
				if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
					log.Fatal(err)
				}
				f.Close()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// startProfiles starts a CPU profile to path (none when empty); the function returned stops it.
func startProfiles(path string) func() {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		log.Fatal(err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}

// timeExplained times the preview explained (serialized_tasks?explain):
// what the "why" of every task on every node costs beside the plain one.
func timeExplained(c *caller, nodes int, planTime time.Duration) {
	explainStart := time.Now()
	explained := c.readPages("/api/v1/clusters/1/serialized_tasks?graph_type=default&explain")
	explainTime := time.Since(explainStart)
	fmt.Printf("fuelscale %d nodes: GET serialized_tasks?explain %.2f s, %.2f x the plain one; answer %.1f MB in %d pages of at most %.1f MB\n",
		nodes, explainTime.Seconds(), explainTime.Seconds()/planTime.Seconds(), float64(explained.bytes)/1e6, explained.pages, float64(explained.largest)/1e6)
}

func writeHeapProfile(path string) {
	if path == "" {
		return
	}
	f, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		log.Fatal(err)
	}
}
