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
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/nodes"
)

// Register adds the node routes to router.
func Register(router *routes.Router, svc *nodes.Service) {
	h := handlers{svc: svc}
	router.Mount(routes.Handlers{
		"nodes.create": httpapi.WithQuery(h.create),
		"nodes.list":   httpapi.WithQuery(h.list),
		"nodes.get":    httpapi.WithQuery(h.show),
		"nodes.update": httpapi.WithQuery(h.update),
		"nodes.delete": httpapi.WithQuery(h.delete),
	})
}

type handlers struct{ svc *nodes.Service }

// view is a node as the API shows it at the request's microversion.
type view struct {
	// ID is the UUID from 1.2 on, the legacy integer id before.
	ID any `json:"id"`
	// UUID is shown separately only before 1.2.
	UUID string `json:"uuid,omitempty"`
	FQDN string `json:"fqdn"`
	// EnvironmentID follows the same rule as ID.
	EnvironmentID any      `json:"environment_id"`
	Roles         []string `json:"roles"`
	Traits        []string `json:"traits"`
	// Levels is the node's placement: its values for the ConfigDB levels above the node level.
	Levels map[string]string `json:"levels"`
	// Interfaces are the deploy steps the node supports by interface; null: everything.
	Interfaces     map[string][]string `json:"interfaces"`
	Status         string              `json:"status"`
	DisabledReason *string             `json:"disabled_reason"`
	Maintenance    bool                `json:"maintenance"`
	CreatedAt      time.Time           `json:"created_at"`
	UpdatedAt      *time.Time          `json:"updated_at"`
}

func viewOf(r *http.Request, n nodes.Node) view {
	v := view{
		ID: n.ID, UUID: n.UUID, FQDN: n.FQDN, EnvironmentID: n.EnvironmentID,
		Roles: n.Roles, Traits: n.Traits, Levels: n.Levels, Interfaces: n.Interfaces, Status: string(n.Status), Maintenance: n.Maintenance,
		CreatedAt: n.CreatedAt, UpdatedAt: n.UpdatedAt,
	}
	if httpapi.UUIDIdentities(r) {
		v.ID, v.UUID, v.EnvironmentID = n.UUID, "", n.EnvironmentUUID
	}
	if n.DisabledReason != "" {
		v.DisabledReason = &n.DisabledReason
	}
	if v.Levels == nil { // registered before nodes had levels
		v.Levels = map[string]string{}
	}
	return v
}

type nodeBody struct {
	Node view `json:"node"`
}

// Location is the path of node n.
func Location(n nodes.Node) string { return "/api/v1/nodes/" + n.UUID }

// createBody registers a node. "id" is the legacy integer id before 1.2 and
// the UUID from 1.2 on; "uuid" works at every version.
type createBody struct {
	ID            json.RawMessage     `json:"id"`
	UUID          string              `json:"uuid"`
	FQDN          string              `json:"fqdn"`
	EnvironmentID json.RawMessage     `json:"environment_id"`
	Roles         []string            `json:"roles"`
	Traits        []string            `json:"traits"`
	Levels        map[string]string   `json:"levels"`
	Interfaces    map[string][]string `json:"interfaces"`
}

func (h handlers) create(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	var body createBody
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	in := nodes.NewNode{UUID: body.UUID, FQDN: body.FQDN, Roles: body.Roles, Traits: body.Traits, Levels: body.Levels, Interfaces: body.Interfaces}
	var err error
	if in.Environment, err = reference(r, "environment_id", body.EnvironmentID); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	switch {
	case len(body.ID) == 0:
	case httpapi.UUIDIdentities(r):
		if json.Unmarshal(body.ID, &in.UUID) != nil {
			httpapi.Error(w, r, errs.Invalidf("id must be a UUID"))
			return
		}
	default:
		if json.Unmarshal(body.ID, &in.ID) != nil {
			httpapi.Error(w, r, errs.Invalidf("id must be a positive integer"))
			return
		}
	}
	n, err := h.svc.Create(r.Context(), in)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	audit.Note(r.Context(), n.EnvironmentID, 0)
	w.Header().Set("Location", Location(n))
	httpapi.JSON(w, http.StatusCreated, nodeBody{Node: viewOf(r, n)})
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

// listBody is a page of nodes, with a "next" link when the page is full.
type listBody struct {
	Nodes []view `json:"nodes"`
	Links []link `json:"nodes_links,omitempty"`
}

type link struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

func (h handlers) list(w http.ResponseWriter, r *http.Request, q map[string]string) {
	_, hasLimit := q["limit"]
	marker, hasMarker := q["marker"]
	if pattern, search := q["hostname"]; search {
		if hasLimit || hasMarker {
			httpapi.Error(w, r, errs.Invalidf("hostname cannot be combined with limit or marker: a search is not paged"))
			return
		}
		found, err := h.svc.Search(r.Context(), pattern)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		httpapi.JSON(w, http.StatusOK, listBody{Nodes: views(r, found)})
		return
	}
	limit := nodes.MaxPage
	if n, ok := routes.QueryOf(r).Integer("limit"); ok {
		limit = min(n, nodes.MaxPage)
	}
	if hasMarker {
		if err := httpapi.CheckPathID(r, marker); err != nil {
			httpapi.Error(w, r, err)
			return
		}
	}
	page, err := h.svc.List(r.Context(), limit, marker)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	body := listBody{Nodes: views(r, page)}
	if len(page) == limit {
		next := url.Values{"limit": {strconv.Itoa(limit)}, "marker": {page[len(page)-1].UUID}}
		body.Links = []link{{Rel: "next", Href: "/api/v1/nodes?" + next.Encode()}}
	}
	httpapi.JSON(w, http.StatusOK, body)
}

func views(r *http.Request, ns []nodes.Node) []view {
	out := make([]view, len(ns))
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

func (h handlers) show(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	n, err := Lookup(r, h.svc, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, nodeBody{Node: viewOf(r, n)})
}

// updateBody is a partial update; absent fields stay as they are.
type updateBody struct {
	Status         *nodes.Status      `json:"status"`
	DisabledReason *string            `json:"disabled_reason"`
	Maintenance    *bool              `json:"maintenance"`
	Roles          *[]string          `json:"roles"`
	Traits         *[]string          `json:"traits"`
	Levels         *map[string]string `json:"levels"`
	FQDN           *string            `json:"fqdn"`
	EnvironmentID  json.RawMessage    `json:"environment_id"`
	// Interfaces null makes every deploy step supported again.
	Interfaces json.RawMessage `json:"interfaces"`
}

func (h handlers) update(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	ref := r.PathValue("id")
	if err := httpapi.CheckPathID(r, ref); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var body updateBody
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	u := nodes.Update{
		Status: body.Status, DisabledReason: body.DisabledReason, Maintenance: body.Maintenance,
		Roles: body.Roles, Traits: body.Traits, Levels: body.Levels, FQDN: body.FQDN,
	}
	env, err := reference(r, "environment_id", body.EnvironmentID)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if env != "" {
		u.Environment = &env
	}
	if body.Interfaces != nil {
		var interfaces map[string][]string
		if err := json.Unmarshal(body.Interfaces, &interfaces); err != nil {
			httpapi.Error(w, r, errs.Invalidf("interfaces must be an object of step name lists, or null"))
			return
		}
		u.Interfaces = &interfaces
	}
	n, err := h.svc.Update(r.Context(), ref, u)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	audit.Note(r.Context(), n.EnvironmentID, 0)
	httpapi.JSON(w, http.StatusOK, nodeBody{Node: viewOf(r, n)})
}

func (h handlers) delete(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	ref := r.PathValue("id")
	if err := httpapi.CheckPathID(r, ref); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if err := h.svc.Delete(r.Context(), ref); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}
