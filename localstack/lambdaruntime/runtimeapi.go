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
	"time"
)

// MaxResponseBytes is Lambda's limit on a synchronous invocation's response
// payload (6 MB); the Runtime API refuses a larger /response with 413.
const MaxResponseBytes = 6 * 1024 * 1024

// Server is the Lambda Runtime API (2018-06-01) for one function process:
// the process long-polls /next for an event and posts the outcome to
// /{id}/response or /{id}/error; /init/error reports a failed start-up.
// The local API Gateway (localstack/gateway) and the bootstrap tests share it.
type Server struct {
	// Addr is host:port, the value of AWS_LAMBDA_RUNTIME_API.
	Addr    string
	srv     *http.Server
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
	id       string
	payload  []byte
	deadline time.Time
	sent     time.Time // when /next handed it out
	done     chan Outcome
}

// Outcome is what the function posted for an invocation.
type Outcome struct {
	Response  []byte // body of /response
	ErrorBody []byte // body of /error, or the Runtime API's own error (response too large)
	ErrorType string // Lambda-Runtime-Function-Error-Type of /error ("Unhandled" without one), or Function.ResponseSizeTooLarge; "" on success
	Received  time.Time
}

const apiPrefix = "/2018-06-01/runtime"

// NewServer starts a Runtime API on a free loopback port.
func NewServer() (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{
		Addr:       ln.Addr().String(),
		pending:    make(chan *invocation),
		inflight:   map[string]*invocation{},
		nextCalled: make(chan struct{}),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+apiPrefix+"/invocation/next", s.next)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/response", s.result)
	mux.HandleFunc("POST "+apiPrefix+"/invocation/{id}/error", s.result)
	mux.HandleFunc("POST "+apiPrefix+"/init/error", s.initError)
	s.srv = &http.Server{Handler: mux}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server.
func (s *Server) Close() error { return s.srv.Close() }

func (s *Server) next(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.firstNext.IsZero() {
		s.firstNext = time.Now()
		close(s.nextCalled)
	}
	s.mu.Unlock()
	select {
	case inv := <-s.pending:
		s.mu.Lock()
		s.inflight[inv.id] = inv
		inv.sent = time.Now()
		s.mu.Unlock()
		h := w.Header()
		h.Set("Lambda-Runtime-Aws-Request-Id", inv.id)
		h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(inv.deadline.UnixMilli(), 10))
		h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:tuningbox")
		h.Set("Lambda-Runtime-Trace-Id", "Root=1-00000000-000000000000000000000000;Sampled=0")
		h.Set("Content-Type", "application/json")
		w.Write(inv.payload)
	case <-r.Context().Done(): // the process went away while waiting
	}
}

// result takes the outcome of an invocation, from /response or /error. A
// response over MaxResponseBytes is refused as Lambda refuses it, and the
// invocation fails with Function.ResponseSizeTooLarge.
func (s *Server) result(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	received := time.Now()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	inv, ok := s.inflight[r.PathValue("id")]
	delete(s.inflight, r.PathValue("id"))
	s.mu.Unlock()
	if !ok {
		http.Error(w, "unknown request id", http.StatusBadRequest)
		return
	}
	out := Outcome{Received: received}
	switch {
	case r.Pattern == "POST "+apiPrefix+"/invocation/{id}/error":
		out.ErrorBody, out.ErrorType = body, r.Header.Get("Lambda-Runtime-Function-Error-Type")
		if out.ErrorType == "" {
			out.ErrorType = "Unhandled" // what Lambda reports for a function error without a type
		}
	case len(body) > MaxResponseBytes:
		msg := fmt.Sprintf(`{"errorMessage":"Response payload size (%d bytes) exceeded maximum allowed payload size (%d bytes).","errorType":"Function.ResponseSizeTooLarge"}`, len(body), MaxResponseBytes)
		out.ErrorBody, out.ErrorType = []byte(msg), "Function.ResponseSizeTooLarge"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		w.Write([]byte(msg))
		inv.done <- out
		return
	default:
		out.Response = body
	}
	w.WriteHeader(http.StatusAccepted)
	inv.done <- out
}

func (s *Server) initError(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.initErrors = append(s.initErrors, body)
	s.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// Invoke hands payload to the function with the given deadline and waits for
// its outcome. took is the time from the function receiving the event to the
// Runtime API receiving the answer.
func (s *Server) Invoke(ctx context.Context, payload []byte, deadline time.Time) (out Outcome, took time.Duration, err error) {
	s.mu.Lock()
	s.seq++
	inv := &invocation{id: fmt.Sprintf("req-%04d", s.seq), payload: payload, deadline: deadline, done: make(chan Outcome, 1)}
	s.mu.Unlock()
	select {
	case s.pending <- inv:
	case <-ctx.Done():
		return Outcome{}, 0, errors.New("the function did not ask for the event")
	}
	select {
	case out = <-inv.done:
		s.mu.Lock()
		sent := inv.sent
		s.mu.Unlock()
		return out, out.Received.Sub(sent), nil
	case <-ctx.Done():
		return Outcome{}, 0, errors.New("the function did not answer")
	}
}

// NextCalled is closed when the function first asks for an event.
func (s *Server) NextCalled() <-chan struct{} { return s.nextCalled }

// InitErrors returns the bodies posted to /init/error.
func (s *Server) InitErrors() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([][]byte(nil), s.initErrors...)
}

// InitTime waits for the first /next call and returns its delay after start.
func (s *Server) InitTime(ctx context.Context, start time.Time) (time.Duration, error) {
	select {
	case <-s.nextCalled:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.firstNext.Sub(start), nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}
