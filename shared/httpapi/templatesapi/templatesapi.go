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
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Register adds the deploy template and deploy step routes to router.
func Register(router *routes.Router, svc *templates.Service, nodeSvc *nodes.Service) {
	h := handlers{svc: svc, nodes: nodeSvc}
	q := httpapi.Serve
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

// Location is the path of template t.
func Location(t templates.Template) string { return collection + "/" + t.UUID }

// fullView is every attribute of a template, secret step arguments masked.
func fullView(t templates.Template) wire.Template {
	t = t.Masked()
	self := Location(t)
	return wire.Template{
		UUID: t.UUID, Name: t.Name, Steps: stepViews(t.Steps), Extra: t.Extra, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt,
		Links: []wire.Link{{Href: self, Rel: "self"}, {Href: self, Rel: "bookmark"}},
	}
}

// stepViews are deploy steps as the API shows them.
func stepViews(steps []templates.Step) []wire.Step {
	return httpapi.Convert(steps, func(s templates.Step) wire.Step { return wire.Step(s) })
}

// fieldNames are the attributes ?fields= may select; links always come along.
var fieldNames = []string{"uuid", "name", "steps", "extra", "created_at", "updated_at", "links"}

// defaultListFields are what a list without detail or fields shows.
var defaultListFields = []string{"uuid", "name", "links"}

// selectFields keeps the named attributes of a full view, and its links.
func selectFields(full wire.Template, fields []string) wire.TemplateAttributes {
	all := map[string]any{
		"uuid": full.UUID, "name": full.Name, "steps": full.Steps, "extra": full.Extra,
		"created_at": full.CreatedAt, "updated_at": full.UpdatedAt, "links": full.Links,
	}
	out := wire.TemplateAttributes{"links": full.Links}
	for _, f := range fields {
		out[f] = all[f]
	}
	return out
}

// parseFields reads ?fields=a,b; nil when absent.
func parseFields(q routes.Query) ([]string, error) {
	raw, ok := q.String("fields"), q.Has("fields")
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

func (h handlers) create(w http.ResponseWriter, r *http.Request) (int, any, error) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return 0, nil, err
	}
	t, err := h.svc.Create(r.Context(), body)
	if err != nil {
		return 0, nil, err
	}
	w.Header().Set("Location", Location(t))
	return http.StatusCreated, fullView(t), nil
}

func (h handlers) list(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	fields, err := parseFields(q)
	if err != nil {
		return 0, nil, err
	}
	query := routes.QueryOf(r)
	detail := query.Flag("detail")
	if detail && fields != nil {
		return 0, nil, errs.Invalidf("Can not specify ?detail=True and fields in the same request.")
	}
	opts := templates.ListOptions{Marker: q.String("marker"), SortKey: q.String("sort_key"), SortDir: q.String("sort_dir"), Limit: templates.MaxPage}
	if n, ok := query.Integer("limit"); ok {
		opts.Limit = min(n, templates.MaxPage)
	}
	page, err := h.svc.List(r.Context(), opts)
	if err != nil {
		return 0, nil, err
	}
	switch {
	case detail:
		fields = fieldNames
	case fields == nil:
		fields = defaultListFields
	}
	body := wire.TemplateList{Templates: make([]wire.TemplateAttributes, len(page))}
	for i, t := range page {
		body.Templates[i] = selectFields(fullView(t), fields)
	}
	if len(page) == opts.Limit {
		next := r.URL.Query()
		next.Set("limit", strconv.Itoa(opts.Limit))
		next.Set("marker", page[len(page)-1].UUID)
		body.Next = collection + "?" + next.Encode()
	}
	return http.StatusOK, body, nil
}

func (h handlers) show(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	q := routes.QueryOf(r)
	fields, err := parseFields(q)
	if err != nil {
		return 0, nil, err
	}
	t, err := h.svc.Get(r.Context(), r.PathValue("ident"))
	if err != nil {
		return 0, nil, err
	}
	if fields != nil {
		return http.StatusOK, selectFields(fullView(t), fields), nil
	}
	return http.StatusOK, fullView(t), nil
}

func (h handlers) patch(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return 0, nil, err
	}
	t, err := h.svc.Patch(r.Context(), r.PathValue("ident"), body)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, fullView(t), nil
}

func (h handlers) delete(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	if err := h.svc.Delete(r.Context(), r.PathValue("ident")); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
