package graphsapi

import (
	"bytes"
	"encoding/json"
	"iter"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
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

// clusterTasksPage is serialized_tasks with its nodes encoded one by one.
type clusterTasksPage struct {
	wire.ClusterTasks
	Nodes []json.RawMessage `json:"nodes"`
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
	view, err := clusterTasksView(head)
	if err != nil {
		return 0, nil, err
	}
	base, err := encodeJSON(view)
	if err != nil {
		return 0, nil, err
	}
	entries, more, err := page.take(envelopeBytes(base), pages.Nodes, func(n graphs.NodeTasks) ([]json.RawMessage, error) {
		v, err := clusterTasksView(graphs.ClusterTasks{Nodes: []graphs.NodeTasks{n}})
		if err != nil {
			return nil, err
		}
		raw, err := encodeJSON(v.Nodes[0])
		return []json.RawMessage{raw}, err
	})
	if err != nil {
		return 0, nil, err
	}
	out := clusterTasksPage{ClusterTasks: view, Nodes: make([]json.RawMessage, len(entries))}
	for i, e := range entries {
		out.Nodes[i] = e.parts[0]
	}
	out.Links, err = nextLinks(r, pages, entries, more)
	return http.StatusOK, out, err
}

// planPage is a transaction's plan with its nodes' lists encoded one by one.
type planPage struct {
	wire.Plan
	NodeTasks map[string]json.RawMessage `json:"node_tasks"`
	Skipped   map[string]json.RawMessage `json:"skipped"`
}

func (h *handlers) getPlan(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	page, err := pageOf(routes.QueryOf(r))
	if err != nil {
		return 0, nil, err
	}
	head, pages, err := h.svc.PlanPages(r.Context(), r.PathValue("uuid"), page.marker)
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
		tasks, err := serializedTasks(n.Tasks)
		if err != nil {
			return nil, err
		}
		if tasks == nil {
			tasks = []wire.SerializedTask{}
		}
		encodedTasks, err := encodeJSON(tasks)
		if err != nil {
			return nil, err
		}
		skipped, err := encodeJSON(skippedTasks(n.Skipped))
		return []json.RawMessage{encodedTasks, skipped}, err
	})
	if err != nil {
		return 0, nil, err
	}
	out := planPage{Plan: view, NodeTasks: make(map[string]json.RawMessage, len(entries)), Skipped: make(map[string]json.RawMessage, len(entries))}
	for _, e := range entries {
		out.NodeTasks[e.node], out.Skipped[e.node] = e.parts[0], e.parts[1]
	}
	out.Links, err = nextLinks(r, pages, entries, more)
	return http.StatusOK, out, err
}
