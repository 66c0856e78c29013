package httpapi

import "net/http"

// Handler is the one shape of a route's body: it reads the request (its
// query parameters through the route table's parser, routes.QueryOf, which
// has refused unknown, repeated and ill-typed ones before any handler runs)
// and answers a status and a body (a shared/wire type), or an error, which
// Serve answers as the JSON error of its kind. It may set answer headers
// (Location, ETag) through w. A 204 or 304 has no body; a Writer writes itself.
type Handler func(w http.ResponseWriter, r *http.Request) (status int, body any, err error)

// Writer is a body that writes itself: one that is not JSON (Text), or JSON
// already encoded and compressed (Compressed's documents).
type Writer interface {
	WriteAnswer(w http.ResponseWriter, r *http.Request, status int)
}

// Text is a body that is not JSON: Graphviz DOT, Prometheus text.
type Text struct {
	ContentType string
	Body        []byte
}

// WriteAnswer sends the text as it is.
func (t Text) WriteAnswer(w http.ResponseWriter, _ *http.Request, status int) {
	w.Header().Set("Content-Type", t.ContentType)
	w.WriteHeader(status)
	_, _ = w.Write(t.Body)
}

// EncodedJSON is a JSON body the handler encoded itself (a page assembled
// from parts encoded one by one), sent as it is.
type EncodedJSON []byte

// WriteAnswer sends the JSON as it is.
func (b EncodedJSON) WriteAnswer(w http.ResponseWriter, _ *http.Request, status int) {
	RawJSON(w, status, b)
}

// Serve adapts h to net/http.
func Serve(h Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		status, body, err := h(w, r)
		switch writer, writes := body.(Writer); {
		case err != nil:
			Error(w, r, err)
		case status == http.StatusNoContent || status == http.StatusNotModified:
			w.WriteHeader(status)
		case writes:
			writer.WriteAnswer(w, r, status)
		default:
			JSON(w, status, body)
		}
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
