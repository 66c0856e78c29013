package graphsapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// MaxPageBytes bounds a page of serialized_tasks or of a transaction's plan
// as a Lambda response carries it (the body a JSON string, where quotes and
// backslashes are escaped): within Lambda's 6 MiB, with room for the
// headers. Pages are cut by node, at this size or at the request's limit.
const MaxPageBytes = 5 << 20

// envelopeBytes is what raw takes inside a JSON string encoded by encoding/json.
func envelopeBytes(raw []byte) int {
	return len(raw) + bytes.Count(raw, []byte(`"`)) + bytes.Count(raw, []byte(`\`)) +
		5*(bytes.Count(raw, []byte("<"))+bytes.Count(raw, []byte(">"))+bytes.Count(raw, []byte("&")))
}

// pageRequest is a listing's limit (0: none) and marker.
type pageRequest struct {
	limit  int
	marker string
}

func pageOf(q routes.Query) (pageRequest, error) {
	p := pageRequest{marker: q.String("marker")}
	if q.Has("limit") {
		n, ok := q.Integer("limit")
		if !ok || n < 1 {
			return p, errs.Invalidf("limit: expected a positive integer")
		}
		p.limit = n
	}
	return p, nil
}

// pageEntry is a node's encoded part of a page.
type pageEntry struct {
	node  string
	parts []json.RawMessage
}

// take fills a page whose other fields take base bytes with nodes' entries
// while they fit (the first whatever its size: a node is not split); more
// says that nodes are left for the next page.
func (p pageRequest) take(base int, nodes iter.Seq2[graphs.NodeTasks, error], encode func(graphs.NodeTasks) ([]json.RawMessage, error)) (entries []pageEntry, more bool, err error) {
	size := base
	for n, err := range nodes {
		if err != nil {
			return nil, false, err
		}
		if p.limit > 0 && len(entries) == p.limit {
			return entries, true, nil
		}
		parts, err := encode(n)
		if err != nil {
			return nil, false, err
		}
		grows := len(n.Node) + 8
		for _, part := range parts {
			grows += envelopeBytes(part) + len(n.Node) + 8
		}
		if len(entries) > 0 && size+grows > MaxPageBytes {
			return entries, true, nil
		}
		size += grows
		entries = append(entries, pageEntry{node: n.Node, parts: parts})
	}
	return entries, false, nil
}

// nextLinks links the page after the one that ended at last: the request's
// path and query with the marker Next gives.
func nextLinks(r *http.Request, pages graphs.NodePages, entries []pageEntry, more bool) ([]wire.PageLink, error) {
	if !more {
		return nil, nil
	}
	marker, err := pages.Next(r.Context(), entries[len(entries)-1].node)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	q.Set("marker", marker)
	return []wire.PageLink{{Rel: "next", Href: r.URL.Path + "?" + q.Encode()}}, nil
}

func (h *handlers) serializedTasks(_ http.ResponseWriter, r *http.Request, id int64) (int, any, error) {
	q := routes.QueryOf(r)
	page, err := pageOf(q)
	if err != nil {
		return 0, nil, err
	}
	head, pages, err := h.svc.SerializedTaskPages(r.Context(), id, graphType(q), nodeIDs(q), q.Flag("force"), q.Flag("explain"), page.marker)
	if err != nil {
		return 0, nil, err
	}
	base, err := encodeJSON(head)
	if err != nil {
		return 0, nil, err
	}
	entries, more, err := page.take(envelopeBytes(base), pages.Nodes, func(n graphs.NodeTasks) ([]json.RawMessage, error) {
		raw, err := encodeJSON(n)
		return []json.RawMessage{raw}, err
	})
	if err != nil {
		return 0, nil, err
	}
	if head.Links, err = nextLinks(r, pages, entries, more); err != nil {
		return 0, nil, err
	}
	nodes := make([]json.RawMessage, len(entries))
	for i, e := range entries {
		nodes[i] = e.parts[0]
	}
	body, err := splice(head, map[string][]byte{"nodes": joinArray(nodes)})
	return http.StatusOK, body, err
}

// splice encodes head, whose fields named in fields are null, with each of
// those fields' value as given: a page's node lists were encoded (and so
// checked) one by one, and encoding/json would check and compact each of
// them again (a quarter of a 112 MB listing's time).
func splice(head any, fields map[string][]byte) (httpapi.EncodedJSON, error) {
	out, err := encodeJSON(head)
	if err != nil {
		return nil, err
	}
	for name, value := range fields {
		// A key's quotes are never escaped, a string's are: this is the field.
		null := []byte(`"` + name + `":null`)
		at := bytes.Index(out, null)
		if at < 0 || bytes.Contains(out[at+len(null):], null) {
			return nil, fmt.Errorf("graphsapi: page head %q: field %s is not null once", out, name)
		}
		out = slices.Concat(out[:at+len(null)-len("null")], value, out[at+len(null):])
	}
	return out, nil
}

// joinArray writes the JSON array of values.
func joinArray(values []json.RawMessage) []byte {
	return slices.Concat([]byte("["), bytes.Join(toBytes(values), []byte(",")), []byte("]"))
}

// joinObject writes the JSON object of values by key, in keys' order.
func joinObject(keys []string, values []json.RawMessage) ([]byte, error) {
	out := []byte("{")
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		key, err := json.Marshal(k)
		if err != nil {
			return nil, err
		}
		out = append(append(append(out, key...), ':'), values[i]...)
	}
	return append(out, '}'), nil
}

func toBytes(values []json.RawMessage) [][]byte {
	out := make([][]byte, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

func (h *handlers) getPlan(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	page, err := pageOf(q)
	if err != nil {
		return 0, nil, err
	}
	head, pages, err := h.svc.PlanPages(r.Context(), r.PathValue("uuid"), list(q, "nodes"), page.marker)
	if err != nil {
		return 0, nil, err
	}
	view, err := planView(head)
	if err != nil {
		return 0, nil, err
	}
	base, err := encodeJSON(view)
	if err != nil {
		return 0, nil, err
	}
	entries, more, err := page.take(envelopeBytes(base), pages.Nodes, func(n graphs.NodeTasks) ([]json.RawMessage, error) {
		tasks := n.Tasks
		if tasks == nil {
			tasks = []wire.SerializedTask{}
		}
		encodedTasks, err := encodeJSON(tasks)
		if err != nil {
			return nil, err
		}
		skipped, err := encodeJSON(n.Skipped)
		return []json.RawMessage{encodedTasks, skipped}, err
	})
	if err != nil {
		return 0, nil, err
	}
	if view.Links, err = nextLinks(r, pages, entries, more); err != nil {
		return 0, nil, err
	}
	keys, tasks, skipped := make([]string, len(entries)), make([]json.RawMessage, len(entries)), make([]json.RawMessage, len(entries))
	for i, e := range entries {
		keys[i], tasks[i], skipped[i] = e.node, e.parts[0], e.parts[1]
	}
	nodeTasks, err := joinObject(keys, tasks)
	if err != nil {
		return 0, nil, err
	}
	skips, err := joinObject(keys, skipped)
	if err != nil {
		return 0, nil, err
	}
	body, err := splice(view, map[string][]byte{"node_tasks": nodeTasks, "skipped": skips})
	return http.StatusOK, body, err
}
