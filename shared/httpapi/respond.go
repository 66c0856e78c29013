// Package httpapi holds what every endpoint group shares: the one shape of a
// route's handler (Handler, served by Serve), JSON decoding and encoding, the
// one mapping from domain errors to HTTP status codes, API
// microversions, the middleware chain (Wrap: it names every request,
// RequestID, in every answer's X-Openstack-Request-Id) and the request-context key that carries
// an API Gateway authorizer's answer, and the local server's connections that
// send an answer in one system call (CoalescingListener). Each group mounts its
// routes on a routes.Router from its own package (configapi, graphsapi, ...).
// Nothing under it knows Lambda's event types: shared/lambdaadapter translates them.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// ErrorBody is the JSON body of every error response; ErrorDetail its one field.
type (
	ErrorBody   = wire.ErrorBody
	ErrorDetail = wire.ErrorDetail
)

// StatusClientClosedRequest is the status logged for a request its client
// cancelled (nginx's 499): nobody reads the answer.
const StatusClientClosedRequest = 499

// StatusOf maps a domain error to its HTTP status code. It is the only such mapping.
func StatusOf(err error) int {
	switch {
	case errors.Is(err, context.Canceled):
		return StatusClientClosedRequest
	case errors.Is(err, context.DeadlineExceeded):
		return http.StatusServiceUnavailable
	}
	switch errs.KindOf(err) {
	case errs.Invalid:
		return http.StatusBadRequest
	case errs.NotFound:
		return http.StatusNotFound
	case errs.Conflict:
		return http.StatusConflict
	case errs.PreconditionFailed:
		return http.StatusPreconditionFailed
	case errs.Unauthenticated:
		return http.StatusUnauthorized
	case errs.Forbidden:
		return http.StatusForbidden
	case errs.NotAcceptable:
		return http.StatusNotAcceptable
	case errs.TooLarge:
		return http.StatusRequestEntityTooLarge
	case errs.UnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case errs.MethodNotAllowed:
		return http.StatusMethodNotAllowed
	case errs.TooManyRequests:
		return http.StatusTooManyRequests
	case errs.Unavailable:
		return http.StatusServiceUnavailable
	default:
		return http.StatusInternalServerError
	}
}

// Error writes err as a JSON error response. Internal errors are logged with
// their cause and answered with a generic message, so no internals leak; a
// request its client cancelled and one past its deadline are logged as such,
// the latter answered with a generic message unless a budget of the domain
// (errs.Unavailable) says which.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	logger := LoggerFrom(r.Context())
	switch status {
	case http.StatusInternalServerError:
		logger.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	case StatusClientClosedRequest:
		logger.InfoContext(r.Context(), "request cancelled by the client", "method", r.Method, "path", r.URL.Path)
	case http.StatusServiceUnavailable:
		logger.WarnContext(r.Context(), "request timed out", "method", r.Method, "path", r.URL.Path, "err", err)
		if errs.KindOf(err) != errs.Unavailable {
			JSON(w, status, ErrorBody{Error: ErrorDetail{Code: status, Message: "the request did not finish in time; read back what it changes before repeating it"}})
			return
		}
	}
	if wait := errs.RetryAfterOf(err); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
	}
	if status == http.StatusUnauthorized && w.Header().Get("WWW-Authenticate") == "" {
		w.Header().Set("WWW-Authenticate", `Basic realm="tuningbox", charset="UTF-8"`)
	}
	JSON(w, status, ErrorBody{Error: ErrorDetail{Code: status, Message: errs.Message(err)}})
}

// JSON writes v as a JSON response with the given status.
func JSON(w http.ResponseWriter, status int, v any) {
	// Unlike json.Marshal, keep <, > and & as they are: messages such as
	// "a -> b" stay readable in a terminal and the JSON is just as valid.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		RawJSON(w, http.StatusInternalServerError, []byte(`{"error":{"code":500,"message":"internal error"}}`))
		return
	}
	RawJSON(w, status, bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// RawJSON writes an already encoded JSON body, with its Content-Length.
func RawJSON(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = jsonContentType
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// NoContent answers 204.
func NoContent(w http.ResponseWriter) { w.WriteHeader(http.StatusNoContent) }

// isMaxBytes reports whether err came from a body over the http.MaxBytesReader cap.
func isMaxBytes(err error) bool {
	var mbe *http.MaxBytesError
	return errors.As(err, &mbe)
}
