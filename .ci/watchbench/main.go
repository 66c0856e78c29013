// Command watchbench measures what idle watchers cost (part of `make bench`):
// the whole application handler over an embedded store whose index calls are
// counted, on 127.0.0.1; -clients clients each loop a GET ...?effective&wait=25
// with If-None-Match on one node's effective document for -duration while
// nothing changes. It reports the store reads per waiting client per minute,
// the server's goroutines and the process's RSS (clients included), then one
// write and how long the waiters take to see it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// countingIndex counts every index call the server makes.
type countingIndex struct {
	store.Index
	calls atomic.Int64
}

func (c *countingIndex) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.calls.Add(1)
	return c.Index.Get(ctx, k)
}

func (c *countingIndex) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	c.calls.Add(1)
	return c.Index.BatchGet(ctx, keys)
}

func (c *countingIndex) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	c.calls.Add(1)
	return c.Index.Query(ctx, q)
}

const (
	admin    = "bench"
	password = "bench-watch-secret"
)

func main() {
	clients := flag.Int("clients", 200, "waiting clients")
	duration := flag.Duration("duration", time.Minute, "idle window measured")
	flag.Parse()
	dir, err := os.MkdirTemp("", "watchbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	b, err := bolt.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer b.Close()
	idx := &countingIndex{Index: b.Index}
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		log.Fatal(err)
	}
	cfg.AdminUser, cfg.AdminPassword = admin, password
	h, err := server.NewHandler(store.Backend{Index: idx, Blobs: b.Blobs}, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *clients + 8}}
	call := func(method, path, body string, header ...string) (*http.Response, []byte) {
		req, _ := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		req.SetBasicAuth(admin, password)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		resp, err := client.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode >= 400 {
			log.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, data)
		}
		return resp, data
	}
	call("POST", "/api/v1/config/components", `{"name":"bench","resource_definitions":[{"name":"astute"}]}`)
	_, envBody := call("POST", "/api/v1/config/environments", `{"id":1,"components":["bench"],"hierarchy_levels":["role","nodes"]}`)
	call("POST", "/api/v1/nodes", `{"fqdn":"node-1","environment_id":1,"levels":{"role":"controller"}}`)
	call("PUT", "/api/v1/config/environments/1/resources/astute/values", `{"a":1,"b":{"c":[1,2,3]}}`)
	var env struct{ UUID string }
	if err := json.Unmarshal(envBody, &env); err != nil {
		log.Fatal(err)
	}
	url := "/api/v1/config/environments/" + env.UUID + "/role/controller/nodes/node-1/resources/astute/values?effective&wait=25"
	resp, _ := call("GET", url, "", "OpenStack-API-Version", "config 1.3")
	etag := resp.Header.Get("ETag")

	runtime.GC()
	rssBefore, goroutinesBefore := rss(), runtime.NumGoroutine()
	ctx, stop := context.WithCancel(context.Background())
	var (
		wg      sync.WaitGroup
		answers atomic.Int64
		changed atomic.Int64
		woke    sync.Map
	)
	var wrote atomic.Int64 // unix nanos of the write, 0 before it
	for i := range *clients {
		wg.Go(func() {
			for ctx.Err() == nil {
				req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+url, nil)
				req.SetBasicAuth(admin, password)
				req.Header.Set("OpenStack-API-Version", "config 1.3")
				req.Header.Set("If-None-Match", etag)
				resp, err := client.Do(req)
				if err != nil {
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				answers.Add(1)
				if resp.StatusCode == http.StatusOK {
					changed.Add(1)
					if w := wrote.Load(); w != 0 {
						woke.Store(i, time.Since(time.Unix(0, w)))
					}
					return
				}
			}
		})
	}
	time.Sleep(2 * time.Second) // every client is waiting
	calls0 := idx.calls.Load()
	start := time.Now()
	time.Sleep(*duration)
	idle := time.Since(start)
	idleCalls := idx.calls.Load() - calls0
	rssWaiting, goroutinesWaiting := rss(), runtime.NumGoroutine()
	perClientMinute := float64(idleCalls) / float64(*clients) / idle.Minutes()
	fmt.Printf("watch: %d clients waiting (wait=25, If-None-Match) for %v: %d store reads (%.2f per waiting client per minute), %d answers (304) in the window or before\n",
		*clients, idle.Round(time.Second), idleCalls, perClientMinute, answers.Load())
	fmt.Printf("watch: RSS %d MiB before the clients, %d MiB with them waiting (clients in the same process); goroutines %d -> %d\n",
		rssBefore>>20, rssWaiting>>20, goroutinesBefore, goroutinesWaiting)

	wrote.Store(time.Now().UnixNano())
	call("PUT", "/api/v1/config/environments/1/resources/astute/values", `{"a":2,"b":{"c":[1,2,3]}}`)
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
	}
	stop()
	var slowest time.Duration
	woke.Range(func(_, v any) bool {
		slowest = max(slowest, v.(time.Duration))
		return true
	})
	fmt.Printf("watch: one write woke %d of %d waiters with 200, the last %v after the write\n", changed.Load(), *clients, slowest.Round(time.Millisecond))
}

// rss is the process's resident set size in bytes.
func rss() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(rest), "%d", &kb)
			return kb << 10
		}
	}
	return 0
}
