package client

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"
)

// The kinds of API errors, one per error kind of the server (shared/errs) and
// the HTTP status it is answered with. Match them with errors.Is.
var (
	ErrInvalid              = errors.New("invalid request")        // 400
	ErrUnauthorized         = errors.New("unauthorized")           // 401
	ErrForbidden            = errors.New("forbidden")              // 403
	ErrNotFound             = errors.New("not found")              // 404
	ErrMethodNotAllowed     = errors.New("method not allowed")     // 405
	ErrNotAcceptable        = errors.New("not acceptable")         // 406
	ErrConflict             = errors.New("conflict")               // 409
	ErrPreconditionFailed   = errors.New("precondition failed")    // 412
	ErrTooLarge             = errors.New("request too large")      // 413
	ErrUnsupportedMediaType = errors.New("unsupported media type") // 415
	ErrTooManyRequests      = errors.New("too many requests")      // 429
	ErrInternal             = errors.New("internal server error")  // 500 and any other 5xx
	ErrUnavailable          = errors.New("service unavailable")    // 503: the server ran out of time or capacity
)

// kinds maps a status code to its kind.
var kinds = map[int]error{
	http.StatusBadRequest:            ErrInvalid,
	http.StatusUnauthorized:          ErrUnauthorized,
	http.StatusForbidden:             ErrForbidden,
	http.StatusNotFound:              ErrNotFound,
	http.StatusMethodNotAllowed:      ErrMethodNotAllowed,
	http.StatusNotAcceptable:         ErrNotAcceptable,
	http.StatusConflict:              ErrConflict,
	http.StatusPreconditionFailed:    ErrPreconditionFailed,
	http.StatusRequestEntityTooLarge: ErrTooLarge,
	http.StatusUnsupportedMediaType:  ErrUnsupportedMediaType,
	http.StatusTooManyRequests:       ErrTooManyRequests,
	http.StatusInternalServerError:   ErrInternal,
	http.StatusServiceUnavailable:    ErrUnavailable,
}

// Error is an answer of the API outside 2xx.
type Error struct {
	// Status is the HTTP status code.
	Status int
	// Message is the server's message (the JSON error body's), or the status text.
	Message string
	// RetryAfter is what a 429 or 503 answer's Retry-After header asks the client to wait.
	RetryAfter time.Duration
}

func (e *Error) Error() string { return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Status) }

// Is makes errors.Is(err, ErrNotFound) and its siblings work: an Error is its
// status's kind; a 5xx without one of its own is ErrInternal.
func (e *Error) Is(target error) bool {
	kind, ok := kinds[e.Status]
	if !ok && e.Status >= 500 {
		kind = ErrInternal
	}
	return kind != nil && kind == target
}

// IsTemporary reports whether err may go away by itself: the server could not
// be reached or failed (5xx). Its refusals (4xx) are final: asking again gets
// the same answer (a 429 asks for a pause of RetryAfter first).
func IsTemporary(err error) bool {
	var apiErr *Error
	if errors.As(err, &apiErr) {
		return apiErr.Status >= 500
	}
	return err != nil && !errors.Is(err, context.Canceled)
}
