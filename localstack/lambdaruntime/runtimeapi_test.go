package lambdaruntime

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// runtimeAPI is the Lambda Runtime API (2018-06-01) for one function process:
// the process long-polls /next for an event and posts the outcome to
// /{id}/response or /{id}/error; /init/error reports a failed start-up.
type runtimeAPI struct {
	addr    string
	pending chan *invocation

	mu         sync.Mutex
	inflight   map[string]*invocation
	seq        int
	firstNext  time.Time
	nextCalled chan struct{} // closed on the first /next call
	initErrors [][]byte
}

// invocation is one event handed to the function.
type invocation struct {
	id      string
	payload []byte
	sent    time.Time // when /next handed it out
	done    chan outcome
}

// outcome is what the function posted for an invocation.
type outcome struct {
	response  []byte // body of /response
	errorBody []byte // body of /error
	errorType string // Lambda-Runtime-Function-Error-Type of /error
	received  time.Time
}

const apiPrefix = "/2018-06-01/runtime"

// newRuntimeAPI serves the Runtime API on 127.0.0.1 until the test ends.
func newRuntimeAPI(t *testing.T) *runtimeAPI {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	api := &runtimeAPI{
		addr:       ln.Addr().String(),
		pending:    make(chan *invocation),
		inflight:   map[string]*invocation{},
		nextCalled: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/invocation/next", api.next)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/response", api.result)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/error", api.result)
	mux.HandleFunc("POST "+apiPrefix+"/init/error", api.initError)
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return api
}

func (a *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	if a.firstNext.IsZero() {
		a.firstNext = time.Now()
		close(a.nextCalled)
	}
	a.mu.Unlock()
	select {
	case inv := <-a.pending:
		a.mu.Lock()
		a.inflight[inv.id] = inv
		inv.sent = time.Now()
		a.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(30*time.Second).UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:tuningbox")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
		h.Set("Content-Type", "application/json")
		w.Write(inv.payload)
	case <-r.Context().Done(): // the process went away while waiting
	}
}

// result takes the outcome of an invocation, from /response or /error.
func (a *runtimeAPI) result(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	received := time.Now()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	a.mu.Lock()
	inv, ok := a.inflight[r.PathValue("id")]
	delete(a.inflight, r.PathValue("id"))
	a.mu.Unlock()
	if !ok {
		http.Error(w, "unknown request id", http.StatusBadRequest)
		return
	}
	out := outcome{received: received}
	if r.Pattern == "POST "+apiPrefix+"/invocation/{id}/error" {
		out.errorBody, out.errorType = body, r.Header.Get("Lambda-Runtime-Function-Error-Type")
	} else {
		out.response = body
	}
	w.WriteHeader(http.StatusAccepted)
	inv.done <- out
}

func (a *runtimeAPI) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	a.mu.Lock()
	a.initErrors = append(a.initErrors, body)
	a.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// invoke hands payload to the function and waits for its outcome. took is the
// time from the function receiving the event to the Runtime API receiving the answer.
func (a *runtimeAPI) invoke(ctx context.Context, payload []byte) (out outcome, took time.Duration, err error) {
	a.mu.Lock()
	a.seq++
	inv := &invocation{id: fmt.Sprintf("req-%04d", a.seq), payload: payload, done: make(chan outcome, 1)}
	a.mu.Unlock()
	select {
	case a.pending <- inv:
	case <-ctx.Done():
		return outcome{}, 0, errors.New("the function did not ask for the event")
	}
	select {
	case out = <-inv.done:
		a.mu.Lock()
		sent := inv.sent
		a.mu.Unlock()
		return out, out.received.Sub(sent), nil
	case <-ctx.Done():
		return outcome{}, 0, errors.New("the function did not answer")
	}
}

// initTime waits for the first /next call and returns its delay after start.
func (a *runtimeAPI) initTime(ctx context.Context, start time.Time) (time.Duration, error) {
	select {
	case <-a.nextCalled:
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.firstNext.Sub(start), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
