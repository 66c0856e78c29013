// Package apptest runs the whole tuningbox handler, every endpoint group, over
// a fresh in-memory store for tests of the wiring, the CLI and the policy.
package apptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes/routestest"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// Stack is the handler of every group and what it was built from.
type Stack struct {
	Handler http.Handler
	// Unchecked is Handler without the OpenAPI check of every exchange, for benchmarks.
	Unchecked http.Handler
	Backend   store.Backend
	Config    app.Config
}

// New builds the handler over a fresh in-memory store (shared/store/mem),
// with admin/password as the bootstrap administrator, logging to logger. Every
// exchange with it is checked against the OpenAPI document (routestest).
func New(t testing.TB, admin, password string, logger *slog.Logger) *Stack {
	t.Helper()
	b := mem.New()
	h, cfg, err := Handler(b, admin, password, logger)
	if err != nil {
		t.Fatal(err)
	}
	return &Stack{Handler: routestest.Validating(t, h), Unchecked: h, Backend: b, Config: cfg}
}

// Handler builds the whole handler over b with the default configuration and
// admin/password as the bootstrap administrator; it needs no testing.TB, so
// that Example functions can serve it too.
func Handler(b store.Backend, admin, password string, logger *slog.Logger) (http.Handler, app.Config, error) {
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		return nil, cfg, err
	}
	cfg.AdminUser, cfg.AdminPassword = admin, password
	h, err := server.NewHandler(b, cfg, logger)
	return h, cfg, err
}

// Server serves New's handler (logs discarded) on a loopback test server and
// returns its URL: the local server.
func Server(t testing.TB, admin, password string) string {
	t.Helper()
	return serve(t, New(t, admin, password, slog.New(slog.DiscardHandler)).Handler)
}

// LambdaServer serves the stack's functions (Functions, logs discarded) on a
// loopback test server and returns its URL, so that every test through it
// also checks each function's grants; with TUNINGBOX_TEST_GATEWAY set, the
// URL of a fresh local API Gateway in front of the Lambda functions instead
// (StartGateway). Its semantics are Lambda's: a revoked token or a deleted
// user may pass the authorizer's caches for a while.
func LambdaServer(t testing.TB, admin, password string) string {
	t.Helper()
	if url := StartGateway(t, admin, password, nil); url != "" {
		return url
	}
	return serve(t, Functions(t, admin, password, slog.New(slog.DiscardHandler)).Handler)
}

func serve(t testing.TB, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// StartGateway starts the local API Gateway (localstack/gateway) over a fresh
// table and bucket, with admin/password as an administrator, when
// TUNINGBOX_TEST_GATEWAY names its binary (run-integration.sh builds it and sets
// the gateway's own TUNINGBOX_GATEWAY_* settings and the emulators' AWS_*
// endpoints), and returns its URL; "" when it is not set. onLog, when not nil,
// gets each log line of the functions (without the gateway's "[function] " prefix).
// The gateway stops, by its PID, when the test ends.
func StartGateway(t testing.TB, admin, password string, onLog func(line []byte)) string {
	t.Helper()
	bin := os.Getenv("TUNINGBOX_TEST_GATEWAY")
	if bin == "" {
		return ""
	}
	name := fmt.Sprintf("tb-test-%d-%08x", os.Getpid(), rand.Uint32())
	cmd := exec.Command(bin, "-table", name, "-bucket", name, "-parameter", "AdminUser="+firstAdmin)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		tail []string // the last lines of its log, shown when the test fails
	)
	logged := make(chan struct{})
	go func() {
		defer close(logged)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 2<<20)
		for sc.Scan() {
			line := sc.Bytes()
			mu.Lock()
			tail = append(tail[max(0, len(tail)-99):], string(line))
			mu.Unlock()
			if onLog != nil && bytes.HasPrefix(line, []byte("[")) {
				if _, rest, ok := bytes.Cut(line, []byte("] ")); ok {
					onLog(rest)
				}
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		stopped := make(chan struct{})
		go func() { cmd.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-stopped
		}
		<-logged
		if t.Failed() {
			mu.Lock()
			t.Logf("gateway log (last lines):\n%s", strings.Join(tail, "\n"))
			mu.Unlock()
		}
	})
	var started struct {
		URL     string            `json:"url"`
		Outputs map[string]string `json:"outputs"`
	}
	sc := bufio.NewScanner(stdout)
	if !sc.Scan() || json.Unmarshal(sc.Bytes(), &started) != nil || started.URL == "" {
		cmd.Process.Kill()
		<-logged
		mu.Lock()
		defer mu.Unlock()
		t.Fatalf("the gateway did not start:\n%s", strings.Join(tail, "\n"))
	}
	go io.Copy(io.Discard, stdout)
	createAdmin(t, started.URL, started.Outputs["AdminSecretArn"], admin, password)
	return started.URL
}

// firstAdmin is the stack's first administrator in a test gateway: a name
// the tests' own administrators do not take.
const firstAdmin = "first-admin"

// createAdmin does what an operator does after the stack's first deploy:
// read the first administrator from its secret (the stack output
// AdminSecretArn, in the emulated Secrets Manager) and, logged in as that
// administrator, create the administrator admin/password.
func createAdmin(t testing.TB, url, secretARN, admin, password string) {
	t.Helper()
	if secretARN == "" {
		t.Fatal("the gateway names no AdminSecretArn")
	}
	value, err := app.ReadSecret(t.Context(), secretARN)
	if err != nil {
		t.Fatal(err)
	}
	var first struct{ Username, Password string }
	if err := json.Unmarshal([]byte(value), &first); err != nil || first.Username == "" || first.Password == "" {
		t.Fatalf("the admin secret holds no username and password: %v", err)
	}
	body, _ := json.Marshal(map[string]string{"name": admin, "password": password, "role": "admin"})
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url+"/api/v1/users", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.SetBasicAuth(first.Username, first.Password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if answer, _ := io.ReadAll(resp.Body); resp.StatusCode != http.StatusCreated {
		t.Fatalf("create the administrator %s as the first administrator %s: %d %s", admin, first.Username, resp.StatusCode, answer)
	}
}
