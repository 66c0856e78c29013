package httpapi

import "net/http"

// Handler is the one shape of a route's body: it reads the request (its
// query parameters by name, one value each: the route table refuses unknown
// and repeated ones before any handler runs) and answers a status and a
// body (a shared/wire type), or an error, which Serve answers as the JSON
// error of its kind. It may set answer headers (Location) through w. A 204
// has no body; a Text body is sent as it is.
type Handler func(w http.ResponseWriter, r *http.Request, query map[string]string) (status int, body any, err error)

// Text is a body that is not JSON: Graphviz DOT, Prometheus text.
type Text struct {
	ContentType string
	Body        []byte
}

// Serve adapts h to net/http.
func Serve(h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		values := r.URL.Query()
		query := make(map[string]string, len(values))
		for name, vs := range values {
			query[name] = vs[0]
		}
		status, body, err := h(w, r, query)
		if err != nil {
			Error(w, r, err)
			return
		}
		if text, ok := body.(Text); ok {
			w.Header().Set("Content-Type", text.ContentType)
			w.WriteHeader(status)
			_, _ = w.Write(text.Body)
			return
		}
		if status == http.StatusNoContent {
			NoContent(w)
			return
		}
		JSON(w, status, body)
	}
}

// Convert maps a list element by element, as a handler turns domain values
// into wire types; nil stays nil (an absent or null list is written
// otherwise than an empty one).
func Convert[From, To any](in []From, fn func(From) To) []To {
	if in == nil {
		return nil
	}
	out := make([]To, len(in))
	for i, v := range in {
		out[i] = fn(v)
	}
	return out
}
