// Package templatesapi serves deploy templates (/api/v1/deploy_templates), the
// default deploy steps of environments (/api/v1/deploy_steps/defaults) and the
// deploy steps of a node (/api/v1/nodes/{id}/deploy_steps) and its validation
// (/api/v1/nodes/{id}/validate). All of them exist
// from microversion 1.1; below it reads answer 404 and writes 405.
package templatesapi

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/templates"
)

// Register adds the deploy template and deploy step routes to router.
func Register(router *routes.Router, svc *templates.Service, nodeSvc *nodes.Service) {
	h := handlers{svc: svc, nodes: nodeSvc}
	q := httpapi.WithQuery
	router.Mount(routes.Handlers{
		"templates.create":      q(h.create),
		"templates.list":        q(h.list),
		"templates.get":         q(h.show),
		"templates.patch":       q(h.patch),
		"templates.delete":      q(h.delete),
		"steps.defaults.get":    q(h.withEnvironment(h.showDefaults)),
		"steps.defaults.put":    q(h.withEnvironment(h.setDefaults)),
		"steps.defaults.delete": q(h.withEnvironment(h.deleteDefaults)),
		"steps.node":            q(h.nodeSteps),
		"nodes.validate":        q(h.validateNode),
	})
}

const collection = "/api/v1/deploy_templates"

type handlers struct {
	svc   *templates.Service
	nodes *nodes.Service
}

// link is one entry of a template's "links".
type link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// Location is the path of template t.
func Location(t templates.Template) string { return collection + "/" + t.UUID }

// fullView is every attribute of a template, secret step arguments masked.
func fullView(t templates.Template) map[string]any {
	t = t.Masked()
	self := Location(t)
	return map[string]any{
		"uuid": t.UUID, "name": t.Name, "steps": t.Steps, "extra": t.Extra,
		"created_at": t.CreatedAt, "updated_at": t.UpdatedAt,
		"links": []link{{Href: self, Rel: "self"}, {Href: self, Rel: "bookmark"}},
	}
}

// fieldNames are the attributes ?fields= may select; links always come along.
var fieldNames = []string{"uuid", "name", "steps", "extra", "created_at", "updated_at", "links"}

// defaultListFields are what a list without detail or fields shows.
var defaultListFields = []string{"uuid", "name", "links"}

// selectFields keeps the named attributes of a full view, and its links.
func selectFields(full map[string]any, fields []string) map[string]any {
	out := map[string]any{"links": full["links"]}
	for _, f := range fields {
		out[f] = full[f]
	}
	return out
}

// parseFields reads ?fields=a,b; nil when absent.
func parseFields(q map[string]string) ([]string, error) {
	raw, ok := q["fields"]
	if !ok {
		return nil, nil
	}
	var fields []string
	for f := range strings.SplitSeq(raw, ",") {
		f = strings.TrimSpace(f)
		if !slices.Contains(fieldNames, f) {
			return nil, errs.Invalidf("Field(s) %q are not valid; valid fields are %s", f, strings.Join(fieldNames, ", "))
		}
		fields = append(fields, f)
	}
	return fields, nil
}

func (h handlers) create(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	t, err := h.svc.Create(r.Context(), body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	w.Header().Set("Location", Location(t))
	httpapi.JSON(w, http.StatusCreated, fullView(t))
}

// listBody is a page of templates; Next is set when the page is full.
type listBody struct {
	Templates []map[string]any `json:"deploy_templates"`
	Next      string           `json:"next,omitempty"`
}

func (h handlers) list(w http.ResponseWriter, r *http.Request, q map[string]string) {
	fields, err := parseFields(q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	query := routes.QueryOf(r)
	detail := query.Flag("detail")
	if detail && fields != nil {
		httpapi.Error(w, r, errs.Invalidf("Can not specify ?detail=True and fields in the same request."))
		return
	}
	opts := templates.ListOptions{Marker: q["marker"], SortKey: q["sort_key"], SortDir: q["sort_dir"], Limit: templates.MaxPage}
	if n, ok := query.Integer("limit"); ok {
		opts.Limit = min(n, templates.MaxPage)
	}
	page, err := h.svc.List(r.Context(), opts)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if !detail && fields == nil {
		fields = defaultListFields
	}
	body := listBody{Templates: make([]map[string]any, len(page))}
	for i, t := range page {
		body.Templates[i] = fullView(t)
		if !detail {
			body.Templates[i] = selectFields(body.Templates[i], fields)
		}
	}
	if len(page) == opts.Limit {
		next := r.URL.Query()
		next.Set("limit", strconv.Itoa(opts.Limit))
		next.Set("marker", page[len(page)-1].UUID)
		body.Next = collection + "?" + next.Encode()
	}
	httpapi.JSON(w, http.StatusOK, body)
}

func (h handlers) show(w http.ResponseWriter, r *http.Request, q map[string]string) {
	fields, err := parseFields(q)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	t, err := h.svc.Get(r.Context(), r.PathValue("ident"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	view := fullView(t)
	if fields != nil {
		view = selectFields(view, fields)
	}
	httpapi.JSON(w, http.StatusOK, view)
}

func (h handlers) patch(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	t, err := h.svc.Patch(r.Context(), r.PathValue("ident"), body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, fullView(t))
}

func (h handlers) delete(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	if err := h.svc.Delete(r.Context(), r.PathValue("ident")); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}
