package routes

import "net/http"

// Guard is the auth policy as the Router applies it at dispatch: bound to
// each route once, when the route is mounted, from what the table declares
// of it (Access, Node), and asked about a request no route takes before the
// router answers it, so a 404 or 405 tells nobody more than a route would.
// shared/httpapi/authapi implements it.
type Guard interface {
	// Route returns h behind route's policy: what runs when a request takes route.
	Route(route Route, h http.HandlerFunc) http.HandlerFunc
	// Miss returns the error to answer instead of the router's own answer to
	// r, which takes no mounted route; nil lets the router answer.
	Miss(r *http.Request) error
}

// Use makes the router apply g to every route mounted after it and to every
// request no route takes. Call it before Mount.
func (rt *Router) Use(g Guard) {
	if len(rt.served) > 0 {
		panic("routes: Use after Mount would leave mounted routes unguarded")
	}
	rt.guard = g
}
