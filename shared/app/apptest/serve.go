package apptest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Build builds the tuningbox binary (cmd/tuningbox) into a temporary
// directory of the test and returns its path.
func Build(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	bin := filepath.Join(t.TempDir(), "tuningbox")
	build := exec.Command("go", "build", "-o", bin, "./cmd/tuningbox")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..", "..") // the module's root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// ServeOptions are what StartServe runs `tuningbox serve` with.
type ServeOptions struct {
	// Admin and Password are the bootstrap administrator.
	Admin, Password string
	// Args are serve's flags after --listen and --data.
	Args []string
	// Env is the process's environment (os.Environ() when nil), to which the
	// embedded backend and the administrator are added.
	Env []string
	// OnLog, when set, is given each line of the server's log.
	OnLog func(line []byte)
}

// Serve is a running `tuningbox serve`.
type Serve struct {
	// URL is where it listens: http(s)://127.0.0.1:PORT.
	URL string
	PID int
}

// StartServe runs bin's `serve` on a free loopback port over a temporary data
// directory, returns once it listens (its "listening" log line) and stops it
// by its PID when the test ends: SIGTERM, then SIGKILL after 15 s.
func StartServe(t testing.TB, bin string, opts ServeOptions) *Serve {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0", "--data", filepath.Join(t.TempDir(), "data")}, opts.Args...)...)
	env := opts.Env
	if env == nil {
		env = os.Environ()
	}
	cmd.Env = append(env, "TUNINGBOX_BACKEND=embedded", "TUNINGBOX_ADMIN_USER="+opts.Admin, "TUNINGBOX_ADMIN_PASSWORD="+opts.Password)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		_ = syscall.Kill(cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
			<-done
		}
	})
	listening := make(chan string, 1)
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 2<<20)
		for sc.Scan() {
			var line struct{ Msg, URL string }
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "listening" {
				listening <- line.URL
			}
			if opts.OnLog != nil {
				opts.OnLog(sc.Bytes())
			}
		}
		_ = cmd.Wait()
	}()
	s := &Serve{PID: cmd.Process.Pid}
	select {
	case s.URL = <-listening:
	case <-done:
		t.Fatal("tuningbox serve exited before listening")
	case <-time.After(60 * time.Second):
		t.Fatal("tuningbox serve did not listen within 60 s")
	}
	if !strings.HasPrefix(s.URL, "http://127.0.0.1:") && !strings.HasPrefix(s.URL, "https://127.0.0.1:") {
		t.Fatalf("server listens on %s, want loopback", s.URL)
	}
	return s
}
