// Package errs defines the error kinds every domain package returns, so that
// exactly one place (shared/httpapi) maps them to HTTP status codes.
package errs

import (
	"errors"
	"fmt"
	"time"
)

// Kind classifies a domain error; it decides the HTTP status code.
type Kind int

const (
	// Internal is any failure the caller cannot fix (500); its message is never shown.
	Internal Kind = iota
	// Invalid input: malformed JSON, wrong types, bad names (400).
	Invalid
	// NotFound: the addressed entity, level, version or key does not exist (404).
	NotFound
	// Conflict: duplicates, bad key paths, state that forbids the operation (409).
	Conflict
	// PreconditionFailed: If-Match did not match the current version (412).
	PreconditionFailed
	// Unauthenticated: missing or bad credentials (401).
	Unauthenticated
	// Forbidden: authenticated, but the role may not do this (403).
	Forbidden
	// NotAcceptable: e.g. a requested API microversion outside the supported range (406).
	NotAcceptable
	// TooLarge: a body or document over its size cap (413).
	TooLarge
	// UnsupportedMediaType: a non-JSON body on a JSON route (415).
	UnsupportedMediaType
	// MethodNotAllowed: the route exists but not for this method at this version (405).
	MethodNotAllowed
	// TooManyRequests: the client must wait RetryAfter before trying again (429).
	TooManyRequests
	// Unavailable: the request ran out of a budget of time it was given; the message
	// names the budget (503).
	Unavailable
)

// Error is a domain error with a kind and a message safe to show to the client.
type Error struct {
	Kind    Kind
	Message string
	// Err is the underlying cause, kept for logs and errors.Is; never shown to clients.
	Err error
	// RetryAfter is how long a TooManyRequests client should wait (Retry-After).
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Message + ": " + e.Err.Error()
	}
	return e.Message
}

func (e *Error) Unwrap() error { return e.Err }

// New returns an error of the given kind with a formatted, client-visible message.
func New(kind Kind, format string, args ...any) error {
	return &Error{Kind: kind, Message: fmt.Sprintf(format, args...)}
}

// Wrap returns an error of the given kind whose client-visible message is msg and whose cause is err.
func Wrap(kind Kind, err error, msg string) error {
	return &Error{Kind: kind, Message: msg, Err: err}
}

// Throttled returns a TooManyRequests error telling the client to wait retryAfter.
func Throttled(retryAfter time.Duration, format string, args ...any) error {
	return &Error{Kind: TooManyRequests, Message: fmt.Sprintf(format, args...), RetryAfter: retryAfter}
}

// RetryAfterOf returns the wait a TooManyRequests error asks for (0 for any other error).
func RetryAfterOf(err error) time.Duration {
	var e *Error
	if errors.As(err, &e) && e.Kind == TooManyRequests {
		return e.RetryAfter
	}
	return 0
}

// NotFoundf, Invalidf and Conflictf are shorthands for the most common kinds.
func NotFoundf(format string, args ...any) error { return New(NotFound, format, args...) }
func Invalidf(format string, args ...any) error  { return New(Invalid, format, args...) }
func Conflictf(format string, args ...any) error { return New(Conflict, format, args...) }

// KindOf reports the kind of err: the kind of the outermost *Error in its chain, or Internal.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err has the given kind.
func Is(err error, kind Kind) bool { return err != nil && KindOf(err) == kind }

// Message returns the client-visible message of err; internal errors get a generic text.
func Message(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != Internal {
		return e.Message
	}
	return "internal error"
}
