package httpapi

import "context"

type drainingKey struct{}

// WithDraining returns ctx carrying a channel the server closes when it
// starts shutting down (http.Server.BaseContext gives it to every request).
func WithDraining(ctx context.Context, draining <-chan struct{}) context.Context {
	return context.WithValue(ctx, drainingKey{}, draining)
}

// Draining returns the channel closed when the server shuts down, or nil
// (which never closes): long polls end early on it, so that a shutdown does
// not wait for them, while the request itself is not cancelled.
func Draining(ctx context.Context) <-chan struct{} {
	ch, _ := ctx.Value(drainingKey{}).(<-chan struct{})
	return ch
}
