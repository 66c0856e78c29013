package httpapi

import "context"

// An API Gateway authorizer that already verified a request answers a context:
// a map of scalars that API Gateway hands to the route's function with the
// event. The Lambda adapter puts it on the request's context under a key of
// this package, so that the authentication middleware can read it without
// knowing the event types. A client cannot set it: it comes from the event's
// request context, which API Gateway fills, never from a header.

type authorizerContextKey struct{}

// WithAuthorizerContext returns ctx carrying c, the context an API Gateway
// authorizer answered for this request.
func WithAuthorizerContext(ctx context.Context, c map[string]any) context.Context {
	return context.WithValue(ctx, authorizerContextKey{}, c)
}

// AuthorizerContext returns the authorizer's context that WithAuthorizerContext
// put on ctx, or false when the request did not pass an authorizer.
func AuthorizerContext(ctx context.Context) (map[string]any, bool) {
	c, ok := ctx.Value(authorizerContextKey{}).(map[string]any)
	return c, ok
}
