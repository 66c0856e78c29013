package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
)

// TestGCIntervalZeroKeepsTheRoute: `--gc-interval 0` stops the automatic
// sweeps only: an administrator still sweeps with POST /api/v1/store/gc. (The
// server also sets the Go runtime's memory limit from its cache budget.)
func TestGCIntervalZeroKeepsTheRoute(t *testing.T) {
	dataDir := t.TempDir()
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "gc-admin-password")
	if _, _, err := runCLI(t, "", "user", "create", "admin", "--role", "admin", "--data", dataDir); err != nil {
		t.Fatal(err)
	}
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.GCInterval = dataDir, 0
	addr := freeLoopbackAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, addr, "", "", newServerTLSConfig(), 5*time.Second) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	req, err := http.NewRequest(http.MethodPost, "http://"+addr+"/api/v1/store/gc?min_age=0s", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth("admin", "gc-admin-password")
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			if time.Now().After(deadline) {
				t.Fatalf("server not up: %v", err)
			}
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"removed":0`) {
			t.Fatalf("POST /api/v1/store/gc with --gc-interval 0: %d %s", resp.StatusCode, body)
		}
		break
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		// serve also set the runtime's soft memory limit from the cache budget.
		if got, want := debug.SetMemoryLimit(-1), cfg.CacheBytes+64<<20; got != want {
			t.Errorf("memory limit %d, want %d", got, want)
		}
	}
}
