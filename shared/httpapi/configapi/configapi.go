// Package configapi serves the ConfigDB (shared/configdb) under /api/v1/config:
// components, resource definitions, environments and their hierarchy levels, and
// the values/overrides documents at any level path, tuning-box compatible.
package configapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Prefix is the base path of the ConfigDB API (spec 000's default endpoint_uri).
const Prefix = "/api/v1/config"

// Register adds the ConfigDB routes to router (their declarations are in
// shared/httpapi/routes); documents go out through compressed (gzip for the
// clients that accept it, once per version).
func Register(router *routes.Router, svc *configdb.Service, compressed *httpapi.Compressed) {
	h := &handlers{svc: svc, compressed: compressed}
	router.Mount(routes.Handlers{
		"config.components.list":     h.listComponents,
		"config.components.create":   h.createComponent,
		"config.components.get":      h.getComponent,
		"config.components.update":   h.updateComponent,
		"config.components.patch":    h.updateComponent,
		"config.components.delete":   h.deleteComponent,
		"config.definitions.list":    h.listDefinitions,
		"config.definitions.create":  h.createDefinition,
		"config.definitions.get":     h.getDefinition,
		"config.definitions.update":  h.updateDefinition,
		"config.definitions.patch":   h.patchDefinition,
		"config.definitions.delete":  h.deleteDefinition,
		"config.environments.list":   h.listEnvironments,
		"config.environments.create": h.createEnvironment,
		"config.environments.get":    h.getEnvironment,
		"config.environments.update": h.updateEnvironment,
		"config.environments.patch":  h.updateEnvironment,
		"config.environments.delete": h.deleteEnvironment,
		"config.levels.list":         h.listLevels,
		"config.levels.get":          h.getLevel,
		"config.levels.update":       h.renameLevel,
		"config.levels.patch":        h.renameLevel,
		"config.documents.get":       h.getDocument,
		"config.documents.put":       h.putDocument,
		"config.documents.patch":     h.editDocumentKeys,
		"config.diff":                h.diff,
	})
}

type handlers struct {
	svc        *configdb.Service
	compressed *httpapi.Compressed
}

// pathRef reads a path value and applies the microversion rule for ids in paths.
func pathRef(r *http.Request, name string, namesAllowed bool) (string, error) {
	ref := r.PathValue(name)
	return ref, idsFor(r).pathRef(ref, namesAllowed)
}

func created(w http.ResponseWriter, location string, v any) {
	w.Header().Set("Location", location)
	httpapi.JSON(w, http.StatusCreated, v)
}

// Components

func (h *handlers) listComponents(w http.ResponseWriter, r *http.Request) {
	comps, err := h.svc.ListComponents(r.Context())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v := idsFor(r)
	out := make([]wire.Component, len(comps))
	for i, c := range comps {
		out[i] = v.component(c)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

func (h *handlers) createComponent(w http.ResponseWriter, r *http.Request) {
	var body wire.NewComponent
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	in := configdb.NewComponent{Name: body.Name}
	for i, d := range body.ResourceDefinitions {
		if d.ComponentID != nil {
			httpapi.Error(w, r, errs.Invalidf("resource_definitions[%d].component_id: a new component's definitions belong to it", i))
			return
		}
		in.ResourceDefinitions = append(in.ResourceDefinitions, configdb.NewResourceDefinition{Name: d.Name, Content: d.Content})
	}
	c, err := h.svc.CreateComponent(r.Context(), in)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	view := idsFor(r).component(c)
	created(w, fmt.Sprintf("%s/components/%v", Prefix, view.ID), view)
}

func (h *handlers) getComponent(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "id", true)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	c, err := h.svc.GetComponent(r.Context(), ref)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, idsFor(r).component(c))
}

func (h *handlers) updateComponent(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "id", true)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	// wire.ComponentUpdate with the references raw: their form decides what a microversion accepts.
	var body struct {
		wire.ComponentUpdate
		ResourceDefinitions *[]struct {
			ID json.RawMessage `json:"id"`
		} `json:"resource_definitions"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	upd := configdb.ComponentUpdate{Name: body.Name}
	if body.ResourceDefinitions != nil {
		refs := make([]string, len(*body.ResourceDefinitions))
		for i, d := range *body.ResourceDefinitions {
			if refs[i], err = idsFor(r).bodyRef("resource_definitions.id", d.ID, true); err != nil {
				httpapi.Error(w, r, err)
				return
			}
		}
		upd.ResourceDefinitions = &refs
	}
	if err := h.svc.UpdateComponent(r.Context(), ref, upd); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

func (h *handlers) deleteComponent(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "id", true)
	if err == nil {
		err = h.svc.DeleteComponent(r.Context(), ref)
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// Resource definitions

func (h *handlers) listDefinitions(w http.ResponseWriter, r *http.Request) {
	var component *string
	if q := r.URL.Query(); q.Has("component_id") {
		c := q.Get("component_id")
		if c != "" {
			if err := idsFor(r).pathRef(c, true); err != nil {
				httpapi.Error(w, r, err)
				return
			}
		}
		component = &c
	}
	defs, err := h.svc.ListResourceDefinitions(r.Context(), component)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v := idsFor(r)
	out := make([]wire.ResourceDefinition, len(defs))
	for i, d := range defs {
		out[i] = v.definition(d)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

func (h *handlers) createDefinition(w http.ResponseWriter, r *http.Request) {
	// wire.NewResourceDefinition with the component's reference raw.
	var body struct {
		wire.NewResourceDefinition
		ComponentID json.RawMessage `json:"component_id"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	in := configdb.NewResourceDefinition{Name: body.Name, Content: body.Content}
	if body.ComponentID != nil && string(body.ComponentID) != "null" {
		var err error
		if in.Component, err = idsFor(r).bodyRef("component_id", body.ComponentID, true); err != nil {
			httpapi.Error(w, r, err)
			return
		}
	}
	d, err := h.svc.CreateResourceDefinition(r.Context(), in)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	view := idsFor(r).definition(d)
	created(w, fmt.Sprintf("%s/resource_definitions/%v", Prefix, view.ID), view)
}

// definitionRef reads a definition reference: an id, a UUID or a name (names may contain "/").
func definitionRef(r *http.Request, ref string) (string, error) {
	return ref, idsFor(r).pathRef(ref, true)
}

func (h *handlers) getDefinition(w http.ResponseWriter, r *http.Request) {
	ref, err := definitionRef(r, r.PathValue("ref"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	d, err := h.svc.GetResourceDefinition(r.Context(), ref)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, idsFor(r).definition(d))
}

func (h *handlers) updateDefinition(w http.ResponseWriter, r *http.Request) {
	h.updateDefinitionRef(w, r, r.PathValue("ref"))
}

func (h *handlers) updateDefinitionRef(w http.ResponseWriter, r *http.Request, rawRef string) {
	ref, err := definitionRef(r, rawRef)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	// wire.ResourceDefinitionUpdate with the component's reference raw (null detaches).
	var body struct {
		wire.ResourceDefinitionUpdate
		ComponentID json.RawMessage `json:"component_id"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	upd := configdb.ResourceDefinitionUpdate{Name: body.Name, Content: body.Content}
	switch {
	case body.ComponentID == nil:
	case string(body.ComponentID) == "null":
		upd.Component = new(string)
	default:
		c, err := idsFor(r).bodyRef("component_id", body.ComponentID, true)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		upd.Component = &c
	}
	if err := h.svc.UpdateResourceDefinition(r.Context(), ref, upd); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// patchDefinition is a partial update, or a keys/set or keys/delete batch on the
// definition's content when the path ends in /keys/set or /keys/delete.
func (h *handlers) patchDefinition(w http.ResponseWriter, r *http.Request) {
	rest := r.PathValue("ref")
	ref, op, isKeys := cutKeysOp(rest)
	if !isKeys {
		h.updateDefinitionRef(w, r, rest)
		return
	}
	ref, err := definitionRef(r, ref)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var ops []configdb.KeyOp
	if err := httpapi.Decode(r, &ops); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if err := h.svc.EditResourceDefinitionKeys(r.Context(), ref, ops, op == "set"); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// cutKeysOp splits "<ref>/keys/set" or "<ref>/keys/delete".
func cutKeysOp(path string) (ref, op string, ok bool) {
	for _, op := range []string{"set", "delete"} {
		if ref, found := strings.CutSuffix(path, "/keys/"+op); found {
			return ref, op, true
		}
	}
	return path, "", false
}

func (h *handlers) deleteDefinition(w http.ResponseWriter, r *http.Request) {
	ref, err := definitionRef(r, r.PathValue("ref"))
	if err == nil {
		err = h.svc.DeleteResourceDefinition(r.Context(), ref)
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// Environments

func (h *handlers) listEnvironments(w http.ResponseWriter, r *http.Request) {
	envs, err := h.svc.ListEnvironments(r.Context())
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v := idsFor(r)
	out := make([]wire.Environment, len(envs))
	for i, e := range envs {
		out[i] = v.environment(e)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

func (h *handlers) createEnvironment(w http.ResponseWriter, r *http.Request) {
	// wire.NewEnvironment with the components' references raw.
	var body struct {
		wire.NewEnvironment
		Components []json.RawMessage `json:"components"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	refs, err := idsFor(r).bodyRefs("components", body.Components, true)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	env, err := h.svc.CreateEnvironment(r.Context(), configdb.NewEnvironment{ID: body.ID, Components: refs, Levels: body.HierarchyLevels})
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	view := idsFor(r).environment(env)
	created(w, fmt.Sprintf("%s/environments/%v", Prefix, view.ID), view)
}

func (h *handlers) getEnvironment(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	env, err := h.svc.GetEnvironment(r.Context(), ref)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, idsFor(r).environment(env))
}

func (h *handlers) updateEnvironment(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	// wire.EnvironmentUpdate with the components' references raw.
	var body struct {
		wire.EnvironmentUpdate
		Components *[]json.RawMessage `json:"components"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	upd := configdb.EnvironmentUpdate{Levels: body.HierarchyLevels}
	if body.Components != nil {
		refs, err := idsFor(r).bodyRefs("components", *body.Components, true)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		upd.Components = &refs
	}
	if err := h.svc.UpdateEnvironment(r.Context(), ref, upd); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

func (h *handlers) deleteEnvironment(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "env", false)
	if err == nil {
		err = h.svc.DeleteEnvironment(r.Context(), ref)
	}
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// Hierarchy levels

func (h *handlers) listLevels(w http.ResponseWriter, r *http.Request) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	levels, err := h.svc.ListHierarchyLevels(r.Context(), ref)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v := idsFor(r)
	out := make([]wire.Level, len(levels))
	for i, l := range levels {
		out[i] = v.level(l)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

// levelRefs reads the environment and level references of a level route.
func levelRefs(r *http.Request) (env, level string, err error) {
	if env, err = pathRef(r, "env", false); err != nil {
		return "", "", err
	}
	level, err = pathRef(r, "level", true)
	return env, level, err
}

func (h *handlers) getLevel(w http.ResponseWriter, r *http.Request) {
	env, level, err := levelRefs(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	l, err := h.svc.GetHierarchyLevel(r.Context(), env, level)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, idsFor(r).level(l))
}

func (h *handlers) renameLevel(w http.ResponseWriter, r *http.Request) {
	env, level, err := levelRefs(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var body wire.LevelRename
	if err := httpapi.Decode(r, &body); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if err := h.svc.RenameHierarchyLevel(r.Context(), env, level, body.Name); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}
