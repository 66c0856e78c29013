// Package httpapi holds what every endpoint group shares: JSON decoding and
// encoding, the one mapping from domain errors to HTTP status codes, API
// microversions and the middleware chain. Each group registers its routes on
// a *http.ServeMux from its own package (configapi, graphsapi, ...).
package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// ErrorBody is the JSON body of every error response.
type ErrorBody struct {
	Error ErrorDetail `json:"error"`
}

// ErrorDetail carries the status code and a human-readable message.
type ErrorDetail struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// StatusOf maps a domain error to its HTTP status code. It is the only such mapping.
func StatusOf(err error) int {
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
	default:
		return http.StatusInternalServerError
	}
}

// Error writes err as a JSON error response. Internal errors are logged with
// their cause and answered with a generic message, so no internals leak.
func Error(w http.ResponseWriter, r *http.Request, err error) {
	status := StatusOf(err)
	if status == http.StatusInternalServerError {
		slog.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
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

// RawJSON writes an already encoded JSON body.
func RawJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
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
