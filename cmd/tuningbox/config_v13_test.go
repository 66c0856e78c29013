package main

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
)

// TestConfigMergeExplainAsOfDiff drives the 1.3 reads from the CLI against a
// real server: --merge, --explain, --as-of on get, and diff --to-node, --to-env, --as-of.
func TestConfigMergeExplainAsOfDiff(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	global := []string{"--env", "1", "--resource", "astute"}
	node1 := append([]string{"--level", "nodes=node-1.domain.tld"}, global...)
	mustCLI(t, url, `{"nova": {"workers": 4, "debug": false}, "ntp": ["a"]}`, append([]string{"config", "set"}, global...)...)
	before := time.Now().UTC().Format(time.RFC3339Nano)
	time.Sleep(5 * time.Millisecond)
	mustCLI(t, url, `{"nova": {"debug": true}, "ntp": ["b"]}`, append([]string{"config", "override"}, node1...)...)

	get := func(args ...string) string {
		return mustCLI(t, url, "", append(append([]string{"config", "get"}, node1...), args...)...)
	}
	assertJSON(t, get(), `{"nova": {"debug": true}, "ntp": ["b"]}`)
	assertJSON(t, get("--merge", "deep"), `{"nova": {"workers": 4, "debug": true}, "ntp": ["b", "a"]}`)
	assertJSON(t, get("--as-of", before), `{"nova": {"workers": 4, "debug": false}, "ntp": ["a"]}`)
	if ex := get("--merge", "deep", "--explain"); !strings.Contains(ex, `"nova.workers"`) || !strings.Contains(ex, `"principal": "`+testAdmin+`"`) {
		t.Errorf("explain:\n%s", ex)
	}

	diff := mustCLI(t, url, "", append([]string{"config", "diff", "--to-node", "node-2.domain.tld"}, node1...)...)
	want := "--- astute of environment 1 at nodes=node-1.domain.tld, effective\n" +
		"+++ astute of environment 1 at nodes=node-2.domain.tld, effective\n" +
		"~ nova.debug: true -> false\n+ nova.workers: 4\n~ ntp: [\"b\"] -> [\"a\"]\n2 changed, 1 added, 0 removed\n"
	if diff != want {
		t.Errorf("diff --to-node:\n%s\nwant:\n%s", diff, want)
	}
	if d := mustCLI(t, url, "", append([]string{"config", "diff", "--as-of", before}, node1...)...); !strings.Contains(d, "~ nova.debug: false -> true\n") || !strings.Contains(d, "as of "+before) {
		t.Errorf("diff --as-of:\n%s", d)
	}
	mustCLI(t, url, "", "env", "create", "--id", "2", "--components", "fuel", "--levels", "nodes")
	if d := mustCLI(t, url, "", append([]string{"config", "diff", "--to-env", "2"}, global...)...); !strings.Contains(d, "- nova.workers: 4\n") {
		t.Errorf("diff --to-env:\n%s", d)
	}
	if _, err := cli(t, url, "", append([]string{"config", "get", "--as-of", "yesterday"}, node1...)...); err == nil || !strings.Contains(err.Error(), "RFC 3339") {
		t.Errorf("bad --as-of: %v", err)
	}
}

// TestConfigDryRun: --dry-run on set, override, delete, rollback and import
// stores nothing and prints the version and each affected node's changes.
func TestConfigDryRun(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	global := []string{"--env", "1", "--resource", "astute"}
	node1 := append([]string{"--level", "nodes=7"}, global...)
	run := func(stdin string, args ...string) string { return mustCLI(t, url, stdin, args...) }
	run(`{"a": 1, "b": {"c": 2}}`, append([]string{"config", "set"}, global...)...)
	run(`{"a": 5}`, append([]string{"config", "set"}, global...)...)

	out := run(`{"a": 2, "b": {"c": 2}}`, append([]string{"config", "set", "--dry-run"}, global...)...)
	want := "dry run: astute of environment 1 at global values would become version 3; nothing stored\n" +
		"node node-1.domain.tld:\n  ~ a: 5 -> 2\n  + b.c: 2\n" +
		"node node-2.domain.tld:\n  ~ a: 5 -> 2\n  + b.c: 2\n"
	if out != want {
		t.Errorf("set --dry-run:\n%s\nwant:\n%s", out, want)
	}
	if out := run("", append([]string{"config", "override", "--dry-run", "--key", "a", "--value", "9"}, node1...)...); !strings.Contains(out, "version 1;") || !strings.Contains(out, "node node-1.domain.tld:\n  ~ a: 5 -> 9\n") || strings.Contains(out, "node-2") {
		t.Errorf("override --dry-run:\n%s", out)
	}
	if out := run("", append([]string{"config", "delete", "--dry-run", "--key", "a"}, global...)...); !strings.Contains(out, "  - a: 5\n") {
		t.Errorf("delete --dry-run:\n%s", out)
	}
	if out := run("", append([]string{"config", "rollback", "--dry-run", "--to", "1"}, global...)...); !strings.Contains(out, "would become version 3") || !strings.Contains(out, "  + b.c: 2\n") {
		t.Errorf("rollback --dry-run:\n%s", out)
	}
	if out := run("", append([]string{"config", "set", "--dry-run", "--key", "a", "--value", "5"}, global...)...); !strings.Contains(out, "no node's effective document would change") {
		t.Errorf("a write that changes nothing:\n%s", out)
	}
	// Nothing was stored.
	assertJSON(t, run("", append([]string{"config", "get"}, node1...)...), `{"a": 5}`)
	if h := run("", append([]string{"config", "history"}, global...)...); strings.Count(strings.TrimSpace(h), "\n") != 2 {
		t.Errorf("history after dry runs:\n%s", h)
	}
}

// TestConfigWatch: config watch prints the document, then the next one as soon as it changes.
func TestConfigWatch(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	global := []string{"--env", "1", "--resource", "astute"}
	mustCLI(t, url, `{"a": 1}`, append([]string{"config", "set"}, global...)...)
	done := make(chan string)
	go func() {
		out, err := cli(t, url, "", append([]string{"config", "watch", "--count", "2", "--level", "nodes=7"}, global...)...)
		if err != nil {
			out += err.Error()
		}
		done <- out
	}()
	// The write goes in while the watch waits; watching the first answer needs no timing.
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	mustCLI(t, url, "", append([]string{"config", "set", "--key", "a", "--value", "2"}, global...)...)
	select {
	case out := <-done:
		if out != "{\n  \"a\": 1\n}\n{\n  \"a\": 2\n}\n" {
			t.Errorf("watch printed:\n%s", out)
		}
		t.Logf("watch saw the change %v after the write", time.Since(start))
	case <-time.After(40 * time.Second):
		t.Fatal("watch did not see the change")
	}
}

// TestConfigKeyHistory: config history names each version's author, and
// with --key lists only the versions that changed that key.
func TestConfigKeyHistory(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	node1 := []string{"--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute"}
	run := func(stdin string, args ...string) string {
		return mustCLI(t, url, stdin, append(append([]string{"config"}, args...), node1...)...)
	}
	run(`{"glance": {"image_cache_max_size": 1024}, "debug": false}`, "set")
	run("", "set", "--key", "glance.image_cache_max_size", "--value", "2048")
	run("", "set", "--key", "debug", "--value", "true")

	versions := strings.Split(strings.TrimSpace(run("", "history")), "\n")
	if len(versions) != 4 || !strings.Contains(versions[0], "AUTHOR") || !strings.Contains(versions[1], testAdmin+" (admin)") {
		t.Errorf("history table:\n%s", strings.Join(versions, "\n"))
	}

	changes := strings.Split(strings.TrimSpace(run("", "history", "--key", "glance.image_cache_max_size")), "\n")
	if len(changes) != 3 || !strings.HasPrefix(changes[0], "VERSION") ||
		!strings.HasPrefix(changes[1], "2 ") || !strings.Contains(changes[1], "changed  1024  2048") ||
		!strings.HasPrefix(changes[2], "1 ") || !strings.Contains(changes[2], "added    -     1024") ||
		!strings.Contains(changes[1], testAdmin+" (admin)") {
		t.Errorf("key history table:\n%s", strings.Join(changes, "\n"))
	}
	if one := run("", "history", "--key", "glance.image_cache_max_size", "--limit", "1", "--format", "json"); strings.Count(one, `"version"`) != 1 || !strings.Contains(one, `"request_id"`) {
		t.Errorf("key history --limit 1 as JSON:\n%s", one)
	}
	if _, err := cli(t, url, "", append([]string{"config", "history", "--limit", "3"}, node1...)...); err == nil {
		t.Error("--limit without --key was accepted")
	}
}

// TestConfigWatchRetriesAThrottledWatch: config watch reads on the watchers'
// path, and a watch the server could not answer (on AWS, one beyond the
// watchers' reserved pool: API Gateway's 500) is retried, not the end.
func TestConfigWatchRetriesAThrottledWatch(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	global := []string{"--env", "1", "--resource", "astute"}
	mustCLI(t, url, `{"a": 1}`, append([]string{"config", "set"}, global...)...)
	target, err := neturl.Parse(url)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var watches []int // the status of each watch, the first one refused
	proxy := httputil.NewSingleHostReverseProxy(target)
	throttling := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, client.WatchPrefix+"/config/environments/") {
			proxy.ServeHTTP(w, r)
			return
		}
		mu.Lock()
		first := len(watches) == 0
		mu.Unlock()
		status := http.StatusInternalServerError
		if first {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(`{"message":"Internal Server Error"}`))
		} else {
			recorder := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
			proxy.ServeHTTP(recorder, r)
			status = recorder.status
		}
		mu.Lock()
		watches = append(watches, status)
		mu.Unlock()
	}))
	defer throttling.Close()
	out, err := cli(t, throttling.URL, "", append([]string{"config", "watch", "--count", "1", "--level", "nodes=7"}, global...)...)
	if err != nil || out != "{\n  \"a\": 1\n}\n" {
		t.Errorf("watch printed %q, %v", out, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(watches) != 2 || watches[0] != http.StatusInternalServerError || watches[1] != http.StatusOK {
		t.Errorf("watches on %s: %v, want a refused one then 200", client.WatchPrefix, watches)
	}
}

// statusRecorder keeps the status a handler answered.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(status int) {
	r.status = status
	r.ResponseWriter.WriteHeader(status)
}
