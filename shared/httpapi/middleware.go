package httpapi

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// DefaultMaxBody is the default cap on request bodies (10 MiB).
const DefaultMaxBody = 10 << 20

// RequestIDHeader names every answer's request id (OpenStack's header, as
// Nova and Ironic answer it); the audit record of a write, the document
// version it created and the request's log line name the request by it too.
const RequestIDHeader = "X-Openstack-Request-Id"

// wrapping is what Wrap's requests share: the bounds of a request body (its
// size, applied by Wrap; its JSON nesting, LimitBodyDepth, applied after the
// route's policy) and the request logger.
type wrapping struct {
	maxBody  int64
	maxDepth int
	logger   *slog.Logger
}

// exchange is one request's state in Wrap, in one allocation: the writer
// that records its answer, and what its context carries under exchangeKey
// (one context value for all of it).
type exchange struct {
	statusRecorder
	*wrapping
	requestID string
	version   Version // the negotiated microversion (RequestVersion)
	// idHeader is the RequestIDHeader's value, kept here so that setting it allocates nothing.
	idHeader [1]string
}

type exchangeKey struct{}

func exchangeOf(ctx context.Context) *exchange {
	ex, _ := ctx.Value(exchangeKey{}).(*exchange)
	return ex
}

// LoggerFrom returns the logger of the request's middleware (Options.Logger),
// or slog's default outside of it.
func LoggerFrom(ctx context.Context) *slog.Logger {
	if ex := exchangeOf(ctx); ex != nil && ex.logger != nil {
		return ex.logger
	}
	return slog.Default()
}

// RequestID returns the id of the request Wrap serves under ctx ("" outside Wrap).
func RequestID(ctx context.Context) string {
	if ex := exchangeOf(ctx); ex != nil {
		return ex.requestID
	}
	return ""
}

type upstreamIDKey struct{}

// WithUpstreamRequestID returns ctx carrying the id a gateway in front of the
// handler gave the request (API Gateway's requestContext.requestId): Wrap
// names the request by it instead of a new one, so API Gateway's logs and
// ours name a request alike.
func WithUpstreamRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, upstreamIDKey{}, id)
}

// requestIDOf is the upstream id of r, or a new one: "req-" and a random
// (version 4) UUID, as OpenStack services name their requests. An id names a
// request and guards nothing: its bits come from math/rand/v2's generator
// (ChaCha8, seeded by the system), without crypto/rand's system call.
func requestIDOf(r *http.Request) string {
	if id, ok := r.Context().Value(upstreamIDKey{}).(string); ok && id != "" {
		return id
	}
	var u [16]byte
	binary.LittleEndian.PutUint64(u[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(u[8:], rand.Uint64())
	u[6], u[8] = u[6]&0x0f|0x40, u[8]&0x3f|0x80
	var id [40]byte
	n := copy(id[:], "req-")
	for i := range u {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			id[n] = '-'
			n++
		}
		n += hex.Encode(id[n:], u[i:i+1])
	}
	return string(id[:])
}

// unwrapped are the bounds of a request outside Wrap: the default size, no depth bound.
var unwrapped = &wrapping{maxBody: DefaultMaxBody}

func limitsOf(r *http.Request) *wrapping {
	if ex := exchangeOf(r.Context()); ex != nil {
		return ex.wrapping
	}
	return unwrapped
}

func maxBodyOf(r *http.Request) int64 { return limitsOf(r).maxBody }

// Options configure the middleware chain around a group's routes.
type Options struct {
	// MaxBody caps request bodies; 0 means DefaultMaxBody.
	MaxBody int64
	// MaxDepth, when positive, is the deepest nesting of arrays and objects a
	// JSON request body may have: the router checks it (LimitBodyDepth) after
	// the route's policy, so a caller without the right is refused (403)
	// before its body is read; 0: unchecked.
	MaxDepth int
	// Logger receives one structured line per request; nil disables request logs.
	Logger *slog.Logger
	// Authenticate, when set, runs before every route, with r as it came and
	// ctx, the context the middleware made for it; it returns the context r
	// goes on with (what it recorded on ctx), or an error. The request is
	// given its context once, after it: a request copy each was a fair part
	// of a cached read's allocations.
	Authenticate func(ctx context.Context, r *http.Request) (context.Context, error)
	// Observe, when set, is told of every answered request: the request as the
	// handler saw it last (with what Authenticate recorded), its status and how
	// long it took. It runs on every request: it must not allocate.
	Observe func(r *http.Request, status int, elapsed time.Duration)
	// Timeout, when positive, is the deadline of the context of every request
	// that may write (IsSafeMethod's are reads): retries stop and no write
	// starts after it (answered 503), so nothing commits once the server has
	// given the client up (http.Server.WriteTimeout must be longer). A read
	// has nothing to stop (a long poll bounds itself, ?wait), and a deadline,
	// a timer per request, was a fair part of the cost of Hiera's reads.
	Timeout time.Duration
}

// IsSafeMethod reports whether method only reads (RFC 9110's safe methods the API serves).
func IsSafeMethod(method string) bool { return method == http.MethodGet || method == http.MethodHead }

// DefaultTimeout is the request deadline of the server's handler, below the
// local server's 60 s write timeout.
const DefaultTimeout = 50 * time.Second

// Wrap applies the shared middleware to h: the request's id (answered in
// RequestIDHeader), path safety, body cap, microversion negotiation and echo,
// authentication, and request logging; it carries the nesting bound of JSON
// bodies to the router (LimitBodyDepth).
func Wrap(h http.Handler, opts Options) http.Handler {
	shared := &wrapping{maxBody: opts.MaxBody, maxDepth: opts.MaxDepth, logger: opts.Logger}
	if shared.maxBody <= 0 {
		shared.maxBody = DefaultMaxBody
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ex := &exchange{
			statusRecorder: statusRecorder{ResponseWriter: w, status: http.StatusOK, conn: coalescingOf(r)},
			wrapping:       shared,
			requestID:      requestIDOf(r),
		}
		rec := &ex.statusRecorder
		defer func() {
			end := time.Now()
			elapsed := end.Sub(start)
			if opts.Observe != nil {
				opts.Observe(r, rec.status, elapsed)
			}
			if opts.Logger != nil && opts.Logger.Enabled(r.Context(), slog.LevelInfo) {
				// A record of its own rather than Logger.LogAttrs: that looks up
				// the caller's stack for every line, which no handler here prints.
				line := slog.NewRecord(end, slog.LevelInfo, "request", 0)
				line.AddAttrs(slog.String("method", r.Method), slog.String("path", r.URL.Path),
					slog.Int("status", rec.status), slog.Int64("bytes", rec.bytes),
					slog.Duration("duration", elapsed), slog.String("request_id", ex.requestID))
				_ = opts.Logger.Handler().Handle(r.Context(), line)
			}
		}()
		defer recoverPanic(rec, r, opts.Logger)
		w = rec
		header := w.Header()
		ex.idHeader[0] = ex.requestID
		header[RequestIDHeader] = ex.idHeader[:]
		header["Vary"] = versionVary
		if err := checkPath(r); err != nil {
			Error(w, r, err)
			return
		}
		v, err := negotiateVersion(r)
		if err != nil {
			header[versionHeaderKey] = []string{ServiceType + " " + MinVersion.String()}
			Error(w, r, err)
			return
		}
		setVersionHeaders(header, v)
		ex.version = v
		ctx := context.WithValue(r.Context(), exchangeKey{}, ex)
		if opts.Timeout > 0 && !IsSafeMethod(r.Method) {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
			defer cancel()
		}
		if opts.Authenticate != nil {
			if ctx, err = opts.Authenticate(ctx, r); err != nil {
				r = r.WithContext(ctx)
				Error(w, r, err)
				return
			}
		}
		r = r.WithContext(ctx)
		if r.Body != nil && r.Body != http.NoBody { // net/http's mark of no body, which the depth check skips
			r.Body = http.MaxBytesReader(w, r.Body, shared.maxBody)
		}
		h.ServeHTTP(w, r)
	})
}

// recoverPanic turns a panic of the handler into a logged error and, when
// nothing was sent yet, a JSON 500: never a dropped connection, nor (on
// Lambda) an invocation error that API Gateway would answer with a 502.
// http.ErrAbortHandler keeps its meaning: abort the response.
func recoverPanic(w *statusRecorder, r *http.Request, logger *slog.Logger) {
	p := recover()
	if p == nil {
		return
	}
	if p == http.ErrAbortHandler {
		panic(p)
	}
	if logger == nil {
		logger = slog.Default()
	}
	logger.LogAttrs(r.Context(), slog.LevelError, "panic serving a request",
		slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("panic", fmt.Sprint(p)), slog.String("stack", string(debug.Stack())))
	if w.wroteHeader {
		return // the status is out; the truncated body is all that can be done
	}
	for _, h := range []string{"Content-Encoding", "ETag", "Content-Length", "Cache-Control"} {
		w.Header().Del(h)
	}
	JSON(w, http.StatusInternalServerError, ErrorBody{Error: ErrorDetail{Code: http.StatusInternalServerError, Message: "internal error"}})
}

// checkPath rejects paths with dot segments, raw or percent-encoded, before the
// mux would clean them into another route: a name like "../x" is never valid.
func checkPath(r *http.Request) error {
	escaped := r.URL.EscapedPath()
	if !strings.ContainsAny(escaped, ".%") {
		return nil // no segment can be a dot segment or hold a NUL (url.Parse refuses raw control bytes)
	}
	segs, err := PathSegments(escaped)
	if err != nil {
		return err
	}
	for _, seg := range segs {
		if seg == "." || seg == ".." || strings.ContainsAny(seg, "\x00") {
			return errs.Invalidf("URL path segment %q is not allowed", seg)
		}
	}
	return nil
}

type statusRecorder struct {
	http.ResponseWriter
	status      int
	bytes       int64
	wroteHeader bool
	// conn, when set, coalesces the writes of a body written whole (CoalescingListener).
	conn *coalescingConn
}

func (s *statusRecorder) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.conn != nil && s.bytes == 0 && wholeBody(s.Header(), b) {
		s.conn.hold()
		defer s.conn.release()
	}
	s.wroteHeader = true
	n, err := s.ResponseWriter.Write(b)
	s.bytes += int64(n)
	return n, err
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
