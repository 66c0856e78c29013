package lambdaruntime

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/events"
)

// repoRoot is the module root seen from this package.
const repoRoot = "../.."

// Built once by TestMain: the bootstrap of each function with fixtures, and
// the seeded store that every test copies.
var (
	bootstraps = map[string]string{}
	seeded     string
)

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	fixtures, err := events.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	dir, err := os.MkdirTemp("", "tuningbox-bootstrap-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	seeded = filepath.Join(dir, "seeded")
	if err := events.SeedStore(seeded); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	for _, group := range events.Groups(fixtures) {
		out := filepath.Join(dir, group, "bootstrap")
		if err := buildBootstrap(group, out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		bootstraps[group] = out
	}
	return m.Run()
}

// buildBootstrap builds functions/<fn> for the host with the flags of make build.
func buildBootstrap(fn, out string) error {
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", out, "./functions/"+fn)
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if msg, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("build functions/%s: %v\n%s", fn, err, msg)
	}
	return nil
}

// seededDataDir returns a data directory holding its own copy of the store every fixture expects.
func seededDataDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := events.CopyStore(seeded, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// function is a running bootstrap process and its Runtime API.
type function struct {
	api     *Server
	cmd     *exec.Cmd
	started time.Time
	stderr  *syncBuffer
	exited  chan struct{} // closed when the process has exited; then err is set
	err     error
}

// syncBuffer collects the process's log while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startFunction runs a bootstrap with a Lambda-like environment (nothing of
// the host's but PATH) and the given settings; the test's end kills it.
func startFunction(t *testing.T, bootstrap string, settings ...string) *function {
	t.Helper()
	api, err := NewServer()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { api.Close() })
	cmd := exec.Command(bootstrap)
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"),
		"AWS_LAMBDA_RUNTIME_API=" + api.Addr,
		"AWS_LAMBDA_FUNCTION_NAME=tuningbox-test",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
		"AWS_REGION=us-east-1",
		"_HANDLER=bootstrap",
		"TZ=UTC",
	}, settings...)
	f := &function{api: api, cmd: cmd, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = f.stderr
	f.started = time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		f.err = cmd.Wait()
		close(f.exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-f.exited
		if t.Failed() {
			t.Logf("%s log:\n%s", filepath.Base(filepath.Dir(bootstrap)), f.stderr)
		}
	})
	return f
}

// embedded are the settings of a function serving the fixtures from the embedded store in dir.
func embedded(dir string) []string {
	env := []string{"TUNINGBOX_BACKEND=embedded", "TUNINGBOX_DATA=" + dir}
	for k, v := range events.Settings {
		env = append(env, k+"="+v)
	}
	return env
}

// ready waits until the function asks for its first event and returns its init time.
func (f *function) ready(t *testing.T) time.Duration {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	go func() {
		select {
		case <-f.exited:
			cancel() // no /next will come
		case <-ctx.Done():
		}
	}()
	d, err := f.api.InitTime(ctx, f.started)
	if err != nil {
		t.Fatalf("the function never asked for an event (exit: %v)", f.err)
	}
	return d
}

// invoke sends one event and returns the outcome and the invoke time.
func (f *function) invoke(t *testing.T, payload []byte) (Outcome, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, took, err := f.api.Invoke(ctx, payload, time.Now().Add(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	return out, took
}

func goldenResponse(t *testing.T, fx events.Fixture) []byte {
	t.Helper()
	want, err := os.ReadFile(filepath.Join(repoRoot, "events", fx.GoldenFile()))
	if err != nil {
		t.Fatal(err)
	}
	return want
}

func checkResponse(t *testing.T, fx events.Fixture, out Outcome) {
	t.Helper()
	if out.ErrorBody != nil {
		t.Fatalf("the function failed the invocation: %s %s", out.ErrorType, out.ErrorBody)
	}
	got, err := events.NormalizeResponse(out.Response)
	if err != nil {
		t.Fatal(err)
	}
	if want := goldenResponse(t, fx); !bytes.Equal(got.Marshal(), want) {
		t.Errorf("response differs from the golden file\n got: %s\nwant: %s", got.Marshal(), want)
	}
}

// durations summarizes timings as min/median/p90/max.
type durations []time.Duration

func (d durations) String() string {
	if len(d) == 0 {
		return "none"
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[int(q*float64(len(s)-1))].Round(10 * time.Microsecond) }
	return fmt.Sprintf("n=%d min=%v median=%v p90=%v max=%v", len(s), at(0), at(0.5), at(0.9), at(1))
}

// TestBootstrapServesEveryFixture starts each function's bootstrap on a freshly
// seeded store per fixture, sends the fixture, and expects the golden response.
func TestBootstrapServesEveryFixture(t *testing.T) {
	fixtures, err := events.Load()
	if err != nil {
		t.Fatal(err)
	}
	inits, firstInvokes := map[string]durations{}, map[string]durations{}
	for _, fx := range fixtures {
		t.Run(fx.Name, func(t *testing.T) {
			f := startFunction(t, bootstraps[fx.Group], embedded(seededDataDir(t))...)
			inits[fx.Group] = append(inits[fx.Group], f.ready(t))
			out, took := f.invoke(t, fx.Payload)
			firstInvokes[fx.Group] = append(firstInvokes[fx.Group], took)
			checkResponse(t, fx, out)
		})
	}
	for _, group := range slices.Sorted(maps.Keys(inits)) {
		t.Logf("%s: init (start -> first /next) %v", group, inits[group])
		t.Logf("%s: first invoke of a process %v", group, firstInvokes[group])
	}
}

// TestBootstrapWarmInvokes sends every read-only fixture of a group to one
// process many times and reports the warm invoke time, after a first round
// that warms the caches (the first request of a process checks its password
// with bcrypt).
func TestBootstrapWarmInvokes(t *testing.T) {
	const rounds = 50
	fixtures, err := events.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, group := range events.Groups(fixtures) {
		t.Run(group, func(t *testing.T) {
			f := startFunction(t, bootstraps[group], embedded(seededDataDir(t))...)
			f.ready(t)
			var warm durations
			for round := range rounds {
				for _, fx := range fixtures {
					if fx.Group != group || !readOnly(t, fx) {
						continue
					}
					out, took := f.invoke(t, fx.Payload)
					checkResponse(t, fx, out)
					if round > 0 {
						warm = append(warm, took)
					}
				}
			}
			t.Logf("%s: warm invoke %v", group, warm)
		})
	}
}

// readOnly reports whether the fixture is a GET, which leaves the store as seeded.
func readOnly(t *testing.T, fx events.Fixture) bool {
	t.Helper()
	var ev struct {
		HTTPMethod     string `json:"httpMethod"`
		RequestContext struct {
			HTTP struct {
				Method string `json:"method"`
			} `json:"http"`
		} `json:"requestContext"`
	}
	if err := json.Unmarshal(fx.Payload, &ev); err != nil {
		t.Fatal(err)
	}
	return ev.HTTPMethod == "GET" || ev.RequestContext.HTTP.Method == "GET"
}

// An event that is not an API Gateway request is answered with a JSON 400
// (never an invocation error, which API Gateway would turn into a 502), and
// the process goes on serving.
func TestBootstrapAnswersAnUndecodableEvent(t *testing.T) {
	f := startFunction(t, bootstraps["config"], embedded(seededDataDir(t))...)
	f.ready(t)
	out, _ := f.invoke(t, []byte(`"not an API Gateway event"`))
	var resp struct {
		StatusCode int               `json:"statusCode"`
		Headers    map[string]string `json:"headers"`
		Body       string            `json:"body"`
	}
	if out.ErrorType != "" || json.Unmarshal(out.Response, &resp) != nil {
		t.Fatalf("want a response, got response %s error %s %s", out.Response, out.ErrorType, out.ErrorBody)
	}
	if resp.StatusCode != 400 || resp.Headers["Content-Type"] != "application/json" || !strings.Contains(resp.Body, "malformed API Gateway event") {
		t.Errorf("response %+v", resp)
	}
	fixtures, err := events.Load()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(fixtures, func(fx events.Fixture) bool { return fx.Name == "v2/config-list-components" })
	out, _ = f.invoke(t, fixtures[i].Payload)
	checkResponse(t, fixtures[i], out)
}

// A function whose configuration is wrong stops before asking for any event,
// with a non-zero exit status and the reason in its log.
func TestBootstrapExitsOnBadConfiguration(t *testing.T) {
	f := startFunction(t, bootstraps["config"], "TUNINGBOX_BACKEND=aws") // no table, no bucket
	select {
	case <-f.exited:
	case <-time.After(10 * time.Second):
		t.Fatal("the function did not exit")
	}
	var exit *exec.ExitError
	if !errors.As(f.err, &exit) || exit.ExitCode() == 0 {
		t.Errorf("exit: %v, want a non-zero status", f.err)
	}
	select {
	case <-f.api.NextCalled():
		t.Error("the function asked for an event")
	default:
	}
	if !strings.Contains(f.stderr.String(), "TUNINGBOX_TABLE") {
		t.Errorf("log does not name the missing setting:\n%s", f.stderr)
	}
	t.Logf("start-up errors posted to /init/error: %d", len(f.api.InitErrors()))
}

// The auth function that cannot start still answers CloudFormation's event
// for Custom::FirstAdministrator (FAILED with the reason; a Delete succeeds),
// then exits: without the answer the stack waited for the ServiceTimeout.
func TestBootstrapAnswersCloudFormationWhenItCannotStart(t *testing.T) {
	for requestType, wantStatus := range map[string]string{"Create": "FAILED", "Delete": "SUCCESS"} {
		t.Run(requestType, func(t *testing.T) {
			answers := make(chan map[string]any, 1)
			cloudFormation := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var answer map[string]any
				if r.Method != http.MethodPut || json.NewDecoder(r.Body).Decode(&answer) != nil {
					t.Errorf("CloudFormation got %s %s", r.Method, r.URL)
				}
				answers <- answer
			}))
			defer cloudFormation.Close()
			f := startFunction(t, bootstraps["auth"], "TUNINGBOX_BACKEND=aws") // no table, no bucket
			f.ready(t)
			event, _ := json.Marshal(map[string]any{
				"RequestType": requestType, "ResponseURL": cloudFormation.URL + "/answer", "StackId": "arn:aws:cloudformation:us-east-1:123456789012:stack/Tuningbox/1",
				"RequestId": "request-1", "LogicalResourceId": "FirstAdministrator", "PhysicalResourceId": "administrator/admin",
				"ResourceType": "Custom::FirstAdministrator", "ResourceProperties": map[string]any{"AdminSecret": "arn:aws:secretsmanager:us-east-1:123456789012:secret:admin"},
			})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			go f.api.Invoke(ctx, event, time.Now().Add(30*time.Second))
			select {
			case answer := <-answers:
				if answer["Status"] != wantStatus || answer["RequestId"] != "request-1" ||
					wantStatus == "FAILED" && !strings.Contains(fmt.Sprint(answer["Reason"]), "TUNINGBOX_TABLE") {
					t.Errorf("answer %v, want %s", answer, wantStatus)
				}
			case <-ctx.Done():
				t.Fatal("CloudFormation got no answer")
			}
			select {
			case <-f.exited:
			case <-ctx.Done():
				t.Fatal("the function did not exit after its answer")
			}
		})
	}
}
