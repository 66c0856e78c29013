// Package nodesapi serves the node registry under /api/v1/nodes, with the
// identity rules of spec 004: from microversion 1.2 every "id" is a UUID and
// path ids must be UUIDs; before it, legacy integer ids work too.
package nodesapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the node routes to router.
func Register(router *routes.Router, svc *nodes.Service) {
	h := handlers{svc: svc}
	router.Mount(routes.Handlers{
		"nodes.create": httpapi.Serve(h.create),
		"nodes.list":   httpapi.Serve(h.list),
		"nodes.get":    httpapi.Serve(h.show),
		"nodes.update": httpapi.Serve(h.update),
		"nodes.delete": httpapi.Serve(h.delete),
	})
}

type handlers struct{ svc *nodes.Service }

// viewOf is node n as the API shows it at r's microversion: ids are the
// legacy integers before 1.2 (the UUID beside them), UUIDs from 1.2 on.
func viewOf(r *http.Request, n nodes.Node) wire.Node {
	uuids := httpapi.UUIDIdentities(r)
	v := wire.Node{
		ID: wire.IDOf(uuids, n.ID, n.UUID), UUID: wire.UUIDBeside(uuids, n.UUID), FQDN: n.FQDN, EnvironmentID: wire.IDOf(uuids, n.EnvironmentID, n.EnvironmentUUID),
		Roles: n.Roles, Traits: n.Traits, Levels: n.Levels, Interfaces: n.Interfaces, Status: string(n.Status), Maintenance: n.Maintenance,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt,
	}
	if n.DisabledReason != "" {
		v.DisabledReason = &n.DisabledReason
	}
	if v.Levels == nil { // registered before nodes had levels
		v.Levels = map[string]string{}
	}
	return v
}

// Location is the path of node n.
func Location(n nodes.Node) string { return "/api/v1/nodes/" + n.UUID }

// createBody is wire.NewNode as the server reads it: the references raw,
// since their form (number or string) decides what a microversion accepts.
type createBody struct {
	wire.NewNode
	ID            json.RawMessage `json:"id"`
	EnvironmentID json.RawMessage `json:"environment_id"`
}

func (h handlers) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body createBody
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in := nodes.NewNode{UUID: body.UUID, FQDN: body.FQDN, Roles: body.Roles, Traits: body.Traits, Levels: body.Levels, Interfaces: body.Interfaces}
	var err error
	if in.Environment, err = reference(r, "environment_id", body.EnvironmentID); err != nil {
		return 0, nil, err
	}
	switch {
	case len(body.ID) == 0:
	case httpapi.UUIDIdentities(r):
		if json.Unmarshal(body.ID, &in.UUID) != nil {
			return 0, nil, errs.Invalidf("id must be a UUID")
		}
	default:
		if json.Unmarshal(body.ID, &in.ID) != nil {
			return 0, nil, errs.Invalidf("id must be a positive integer")
		}
	}
	n, err := h.svc.Create(r.Context(), in)
	if err != nil {
		return 0, nil, err
	}
	audit.Note(r.Context(), n.EnvironmentID, 0)
	w.Header().Set("Location", Location(n))
	return http.StatusCreated, wire.NodeBody{Node: viewOf(r, n)}, nil
}

// reference reads an optional id-or-UUID field given as a JSON number or
// string; from 1.2 on it must be a UUID, as in paths (httpapi.CheckPathID).
func reference(r *http.Request, field string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	ref := ""
	if err := dec.Decode(&v); err == nil {
		switch v := v.(type) {
		case json.Number:
			ref = v.String()
		case string:
			ref = v
		}
	}
	if ref == "" {
		return "", errs.Invalidf("%s must be an id or a UUID", field)
	}
	if err := httpapi.CheckPathID(r, ref); err != nil {
		return "", errs.Invalidf("%s: %v", field, err)
	}
	return ref, nil
}

func (h handlers) list(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	hasLimit := q.Has("limit")
	marker, hasMarker := q.String("marker"), q.Has("marker")
	if pattern, search := q.String("hostname"), q.Has("hostname"); search {
		if hasLimit || hasMarker {
			return 0, nil, errs.Invalidf("hostname cannot be combined with limit or marker: a search is not paged")
		}
		found, err := h.svc.Search(r.Context(), pattern)
		if err != nil {
			return 0, nil, err
		}
		return http.StatusOK, wire.NodeList{Nodes: views(r, found)}, nil
	}
	limit := nodes.MaxPage
	if n, ok := routes.QueryOf(r).Integer("limit"); ok {
		limit = min(n, nodes.MaxPage)
	}
	if hasMarker {
		if err := httpapi.CheckPathID(r, marker); err != nil {
			return 0, nil, err
		}
	}
	page, err := h.svc.List(r.Context(), limit, marker)
	if err != nil {
		return 0, nil, err
	}
	body := wire.NodeList{Nodes: views(r, page)}
	if len(page) == limit {
		next := url.Values{"limit": {strconv.Itoa(limit)}, "marker": {page[len(page)-1].UUID}}
		body.Links = []wire.PageLink{{Rel: "next", Href: "/api/v1/nodes?" + next.Encode()}}
	}
	return http.StatusOK, body, nil
}

func views(r *http.Request, ns []nodes.Node) []wire.Node {
	out := make([]wire.Node, len(ns))
	for i, n := range ns {
		out[i] = viewOf(r, n)
	}
	return out
}

// Lookup resolves the node a path segment names, by the request's
// microversion: a UUID from 1.2 on (anything else is 400 "Invalid uuid X",
// checked before the lookup), a UUID or legacy integer id before.
func Lookup(r *http.Request, svc *nodes.Service, ref string) (nodes.Node, error) {
	if err := httpapi.CheckPathID(r, ref); err != nil {
		return nodes.Node{}, err
	}
	return svc.Resolve(r.Context(), ref)
}

func (h handlers) show(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	n, err := Lookup(r, h.svc, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.NodeBody{Node: viewOf(r, n)}, nil
}

// updateBody is wire.NodeUpdate as the server reads it: the environment
// raw (its form decides what a microversion accepts) and interfaces raw
// (null makes every deploy step supported again).
type updateBody struct {
	wire.NodeUpdate
	EnvironmentID json.RawMessage `json:"environment_id"`
	Interfaces    json.RawMessage `json:"interfaces"`
}

func (h handlers) update(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref := r.PathValue("id")
	if err := httpapi.CheckPathID(r, ref); err != nil {
		return 0, nil, err
	}
	var body updateBody
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	u := nodes.Update{
		Status: (*nodes.Status)(body.Status), DisabledReason: body.DisabledReason, Maintenance: body.Maintenance,
		Roles: body.Roles, Traits: body.Traits, Levels: body.Levels, FQDN: body.FQDN,
	}
	env, err := reference(r, "environment_id", body.EnvironmentID)
	if err != nil {
		return 0, nil, err
	}
	if env != "" {
		u.Environment = &env
	}
	if body.Interfaces != nil {
		var interfaces map[string][]string
		if err := json.Unmarshal(body.Interfaces, &interfaces); err != nil {
			return 0, nil, errs.Invalidf("interfaces must be an object of step name lists, or null")
		}
		u.Interfaces = &interfaces
	}
	n, err := h.svc.Update(r.Context(), ref, u)
	if err != nil {
		return 0, nil, err
	}
	audit.Note(r.Context(), n.EnvironmentID, 0)
	return http.StatusOK, wire.NodeBody{Node: viewOf(r, n)}, nil
}

func (h handlers) delete(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref := r.PathValue("id")
	if err := httpapi.CheckPathID(r, ref); err != nil {
		return 0, nil, err
	}
	n, err := h.svc.Delete(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	audit.Note(r.Context(), n.EnvironmentID, 0)
	return http.StatusNoContent, nil, nil
}
