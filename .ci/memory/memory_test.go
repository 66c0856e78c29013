// Package memorytest measures the anonymous memory of a real `tuningbox serve`
// under large reads: 30 versions of a 7 MB document, read by concurrent
// clients as versions, as_of reads, explain answers and diffs. The process's
// RssAnon (/proc/PID/status) must stay within 1.25 x its cache budget plus
// 64 MiB. It runs only with TUNINGBOX_MEMORY_TEST=1 (make memory, part of make
// test): it takes about a minute of both cores.
package memorytest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app/apptest"
)

const (
	adminUser     = "admin"
	adminPassword = "memory-test-secret"
	// cacheBudget is serve's default budget (shared/app.DefaultCacheBytes):
	// the workload below is sized against it.
	cacheBudget = 256 << 20
	// documentBytes is the size of each version of the large document.
	documentBytes = 7_000_000
	versions      = 30
	// sections are the document's top-level keys; each version changes a tenth of them.
	sections = 1000
	clients  = 3
)

// anonLimit is the bound the issue sets: 1.25 x the cache budget plus 64 MiB
// (384 MiB for the default 256 MiB).
func anonLimit(budget int64) int64 { return budget + budget/4 + 64<<20 }

func TestLargeReadsStayWithinTheBudget(t *testing.T) {
	if os.Getenv("TUNINGBOX_MEMORY_TEST") != "1" {
		t.Skip("set TUNINGBOX_MEMORY_TEST=1 (make memory) to measure serve's memory under 7 MB reads")
	}
	start := time.Now()
	srv := startServer(t)
	peak := srv.sampleAnon(t)

	srv.call(t, "POST", "/api/v1/config/components", `{"name":"mem","resource_definitions":[{"name":"big"}]}`, nil)
	var env struct{ ID string }
	srv.call(t, "POST", "/api/v1/config/environments", `{"components":["mem"],"hierarchy_levels":["role"]}`, &env)
	if env.ID == "" {
		t.Fatal("no environment created")
	}
	global := "/api/v1/config/environments/" + env.ID + "/resources/big/values"
	role := "/api/v1/config/environments/" + env.ID + "/role/controller/resources/big/values"
	srv.call(t, "PUT", role, `{"section-0001":{"role":"controller"},"extra":true}`, nil)
	var instants []string
	for v := 1; v <= versions; v++ {
		srv.call(t, "PUT", global, string(document(v)), nil)
		instants = append(instants, time.Now().UTC().Format(time.RFC3339Nano))
	}
	written, writePeak := time.Since(start), peak()

	// Each client reads every version in its own order, as a version, at an
	// instant (effective, then explained) and as a diff against the one before.
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := range versions {
				v := (i*7+c*11)%versions + 1
				at := instants[v-1]
				srv.call(t, "GET", global+"?version="+strconv.Itoa(v), "", nil)
				srv.call(t, "GET", role+"?effective&as_of="+at, "", nil)
				var explained struct{ Keys map[string]json.RawMessage }
				srv.call(t, "GET", role+"?effective&explain&as_of="+at, "", &explained)
				if len(explained.Keys) != sections+1 {
					t.Errorf("explain at version %d: %d keys, want %d", v, len(explained.Keys), sections+1)
				}
				from := max(v-1, 1)
				diff := fmt.Sprintf(`{"from":{"environment":%q,"levels":{},"resource":"big","version":%d},"to":{"version":%d}}`, env.ID, from, v)
				var changes struct{ Changed map[string]any }
				srv.call(t, "POST", "/api/v1/config/diff", diff, &changes)
				if from != v && len(changes.Changed) == 0 {
					t.Errorf("diff of versions %d and %d is empty", from, v)
				}
			}
		})
	}
	wg.Wait()
	limit := anonLimit(cacheBudget)
	got := peak()
	t.Logf("RssAnon peak %d MiB (limit %d MiB = 1.25 x %d MiB + 64 MiB), %d MiB while writing; writes %s, whole run %s",
		got>>20, limit>>20, cacheBudget>>20, writePeak>>20, written.Round(time.Second), time.Since(start).Round(time.Second))
	if got > limit {
		t.Errorf("RssAnon peaked at %d MiB, above 1.25 x the %d MiB budget + 64 MiB = %d MiB", got>>20, cacheBudget>>20, limit>>20)
	}
}

// document is version v of the large document: sections objects of about
// documentBytes/sections bytes each; version v writes its number into every
// tenth section (and into each of its hosts), so consecutive versions differ
// in a fifth of the sections.
func document(v int) []byte {
	var b bytes.Buffer
	b.Grow(documentBytes + documentBytes/10)
	b.WriteByte('{')
	item := strings.Repeat("x", 40)
	for s := range sections {
		if s > 0 {
			b.WriteByte(',')
		}
		rev := 0
		if s%10 == v%10 {
			rev = v
		}
		fmt.Fprintf(&b, `"section-%04d":{"rev":%d,"enabled":%t,"hosts":[`, s, rev, s%2 == 0)
		for h := 0; b.Len() < (s+1)*documentBytes/sections-20; h++ {
			if h > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"name":"host-%d-%d","%s":%d}`, s, h, item, h*rev)
		}
		b.WriteString("]}")
	}
	b.WriteByte('}')
	return b.Bytes()
}

// server is a running `tuningbox serve`.
type server struct {
	url string
	pid int
}

// startServer builds tuningbox and starts `serve` with the default cache
// budget (apptest.StartServe), its memory limit its own: none inherited.
func startServer(t *testing.T) *server {
	t.Helper()
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return name == "GOMEMLIMIT" || name == "GOGC"
	})
	p := apptest.StartServe(t, apptest.Build(t), apptest.ServeOptions{Admin: adminUser, Password: adminPassword, Env: env,
		Args: []string{"--cache-bytes", strconv.Itoa(cacheBudget), "--gc-interval", "0"}})
	return &server{url: p.URL, pid: p.PID}
}

// sampleAnon reads the server's RssAnon every 20 ms until the test ends; the
// returned function gives the highest value seen so far.
func (s *server) sampleAnon(t *testing.T) func() int64 {
	var mu sync.Mutex
	var peak int64
	stop := make(chan struct{})
	stopped := make(chan struct{})
	sample := func() {
		n, err := rssAnon(s.pid)
		if err != nil {
			return // the process is gone: its last samples count
		}
		mu.Lock()
		peak = max(peak, n)
		mu.Unlock()
	}
	go func() {
		defer close(stopped)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				sample()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-stopped })
	return func() int64 {
		sample()
		mu.Lock()
		defer mu.Unlock()
		return peak
	}
}

// rssAnon is the RssAnon line of /proc/PID/status, in bytes.
func rssAnon(pid int) (int64, error) {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, "RssAnon:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no RssAnon", pid)
}

// call sends one request as the administrator at microversion 1.3, fails the
// test on anything but a 2xx, and decodes the answer into out when it is set.
func (s *server) call(t *testing.T, method, path, body string, out any) {
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return
	}
	req.SetBasicAuth(adminUser, adminPassword)
	req.Header.Set("OpenStack-API-Version", "config 1.3")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("%s %s: %v", method, path, err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 500))
		t.Errorf("%s %s: %d %s", method, path, resp.StatusCode, msg)
		return
	}
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			t.Errorf("%s %s: decode the answer: %v", method, path, err)
		}
		return
	}
	_, _ = io.Copy(io.Discard, resp.Body)
}
