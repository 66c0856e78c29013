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
		"config.components.list":     httpapi.Serve(h.listComponents),
		"config.components.create":   httpapi.Serve(h.createComponent),
		"config.components.get":      httpapi.Serve(h.getComponent),
		"config.components.update":   httpapi.Serve(h.updateComponent),
		"config.components.patch":    httpapi.Serve(h.updateComponent),
		"config.components.delete":   httpapi.Serve(h.deleteComponent),
		"config.definitions.list":    httpapi.Serve(h.listDefinitions),
		"config.definitions.create":  httpapi.Serve(h.createDefinition),
		"config.definitions.get":     httpapi.Serve(h.getDefinition),
		"config.definitions.update":  httpapi.Serve(h.updateDefinition),
		"config.definitions.patch":   httpapi.Serve(h.patchDefinition),
		"config.definitions.delete":  httpapi.Serve(h.deleteDefinition),
		"config.environments.list":   httpapi.Serve(h.listEnvironments),
		"config.environments.create": httpapi.Serve(h.createEnvironment),
		"config.environments.get":    httpapi.Serve(h.getEnvironment),
		"config.environments.update": httpapi.Serve(h.updateEnvironment),
		"config.environments.patch":  httpapi.Serve(h.updateEnvironment),
		"config.environments.delete": httpapi.Serve(h.deleteEnvironment),
		"config.levels.list":         httpapi.Serve(h.listLevels),
		"config.levels.get":          httpapi.Serve(h.getLevel),
		"config.levels.update":       httpapi.Serve(h.renameLevel),
		"config.levels.patch":        httpapi.Serve(h.renameLevel),
		"config.documents.versions":  httpapi.Serve(h.listVersions),
		"config.documents.history":   httpapi.Serve(h.keyHistory),
		"config.documents.effective": httpapi.Serve(h.getDocument),
		"config.values.get":          httpapi.Serve(h.getDocument),
		"config.values.put":          httpapi.Serve(h.putDocument),
		"config.overrides.get":       httpapi.Serve(h.getDocument),
		"config.overrides.put":       httpapi.Serve(h.putDocument),
		"config.keys.set":            httpapi.Serve(h.editKeys(true)),
		"config.keys.delete":         httpapi.Serve(h.editKeys(false)),
		"config.diff":                httpapi.Serve(h.diff),
	})
}

// RegisterWatch adds the watchers' route (config.documents.watch, its own
// endpoint group) to router: the document read of Register, on its own path.
func RegisterWatch(router *routes.Router, svc *configdb.Service, compressed *httpapi.Compressed) {
	h := &handlers{svc: svc, compressed: compressed}
	router.Mount(routes.Handlers{"config.documents.watch": httpapi.Serve(h.getDocument)})
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

// created answers 201 with v, which is at location.
func created(w http.ResponseWriter, location string, v any) (int, any, error) {
	w.Header().Set("Location", location)
	return http.StatusCreated, v, nil
}

// Components

func (h *handlers) listComponents(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	comps, err := h.svc.ListComponents(r.Context())
	if err != nil {
		return 0, nil, err
	}
	v := idsFor(r)
	out := make([]wire.Component, len(comps))
	for i, c := range comps {
		out[i] = v.component(c)
	}
	return http.StatusOK, out, nil
}

func (h *handlers) createComponent(w http.ResponseWriter, r *http.Request) (int, any, error) {
	var body wire.NewComponent
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in := configdb.NewComponent{Name: body.Name}
	for i, d := range body.ResourceDefinitions {
		if d.ComponentID != nil {
			return 0, nil, errs.Invalidf("resource_definitions[%d].component_id: a new component's definitions belong to it", i)
		}
		in.ResourceDefinitions = append(in.ResourceDefinitions, configdb.NewResourceDefinition{Name: d.Name, Content: d.Content})
	}
	c, err := h.svc.CreateComponent(r.Context(), in)
	if err != nil {
		return 0, nil, err
	}
	view := idsFor(r).component(c)
	return created(w, fmt.Sprintf("%s/components/%v", Prefix, view.ID), view)
}

func (h *handlers) getComponent(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "id", true)
	if err != nil {
		return 0, nil, err
	}
	c, err := h.svc.GetComponent(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, idsFor(r).component(c), nil
}

func (h *handlers) updateComponent(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "id", true)
	if err != nil {
		return 0, nil, err
	}
	// wire.ComponentUpdate with the references raw: their form decides what a microversion accepts.
	var body struct {
		wire.ComponentUpdate
		ResourceDefinitions *[]struct {
			ID json.RawMessage `json:"id"`
		} `json:"resource_definitions"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	upd := configdb.ComponentUpdate{Name: body.Name}
	if body.ResourceDefinitions != nil {
		refs := make([]string, len(*body.ResourceDefinitions))
		for i, d := range *body.ResourceDefinitions {
			if refs[i], err = idsFor(r).bodyRef("resource_definitions.id", d.ID, true); err != nil {
				return 0, nil, err
			}
		}
		upd.ResourceDefinitions = &refs
	}
	if err := h.svc.UpdateComponent(r.Context(), ref, upd); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (h *handlers) deleteComponent(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "id", true)
	if err == nil {
		err = h.svc.DeleteComponent(r.Context(), ref)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Resource definitions

func (h *handlers) listDefinitions(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	var component *string
	if q := routes.QueryOf(r); q.Has("component_id") {
		c := q.String("component_id")
		if c != "" {
			if err := idsFor(r).pathRef(c, true); err != nil {
				return 0, nil, err
			}
		}
		component = &c
	}
	defs, err := h.svc.ListResourceDefinitions(r.Context(), component)
	if err != nil {
		return 0, nil, err
	}
	v := idsFor(r)
	out := make([]wire.ResourceDefinition, len(defs))
	for i, d := range defs {
		out[i] = v.definition(d)
	}
	return http.StatusOK, out, nil
}

func (h *handlers) createDefinition(w http.ResponseWriter, r *http.Request) (int, any, error) {
	// wire.NewResourceDefinition with the component's reference raw.
	var body struct {
		wire.NewResourceDefinition
		ComponentID json.RawMessage `json:"component_id"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	in := configdb.NewResourceDefinition{Name: body.Name, Content: body.Content}
	if body.ComponentID != nil && string(body.ComponentID) != "null" {
		var err error
		if in.Component, err = idsFor(r).bodyRef("component_id", body.ComponentID, true); err != nil {
			return 0, nil, err
		}
	}
	d, err := h.svc.CreateResourceDefinition(r.Context(), in)
	if err != nil {
		return 0, nil, err
	}
	view := idsFor(r).definition(d)
	return created(w, fmt.Sprintf("%s/resource_definitions/%v", Prefix, view.ID), view)
}

// definitionRef reads a definition reference: an id, a UUID or a name (names may contain "/").
func definitionRef(r *http.Request, ref string) (string, error) {
	return ref, idsFor(r).pathRef(ref, true)
}

func (h *handlers) getDefinition(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := definitionRef(r, r.PathValue("ref"))
	if err != nil {
		return 0, nil, err
	}
	d, err := h.svc.GetResourceDefinition(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, idsFor(r).definition(d), nil
}

func (h *handlers) updateDefinition(w http.ResponseWriter, r *http.Request) (int, any, error) {
	return h.updateDefinitionRef(w, r, r.PathValue("ref"))
}

func (h *handlers) updateDefinitionRef(_ http.ResponseWriter, r *http.Request, rawRef string) (int, any, error) {
	ref, err := definitionRef(r, rawRef)
	if err != nil {
		return 0, nil, err
	}
	// wire.ResourceDefinitionUpdate with the component's reference raw (null detaches).
	var body struct {
		wire.ResourceDefinitionUpdate
		ComponentID json.RawMessage `json:"component_id"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	upd := configdb.ResourceDefinitionUpdate{Name: body.Name, Content: body.Content}
	switch {
	case body.ComponentID == nil:
	case string(body.ComponentID) == "null":
		upd.Component = new(string)
	default:
		c, err := idsFor(r).bodyRef("component_id", body.ComponentID, true)
		if err != nil {
			return 0, nil, err
		}
		upd.Component = &c
	}
	if err := h.svc.UpdateResourceDefinition(r.Context(), ref, upd); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// patchDefinition is a partial update, or a keys/set or keys/delete batch on the
// definition's content when the path ends in /keys/set or /keys/delete.
func (h *handlers) patchDefinition(w http.ResponseWriter, r *http.Request) (int, any, error) {
	rest := r.PathValue("ref")
	ref, op, isKeys := cutKeysOp(rest)
	if !isKeys {
		return h.updateDefinitionRef(w, r, rest)
	}
	ref, err := definitionRef(r, ref)
	if err != nil {
		return 0, nil, err
	}
	var ops []configdb.KeyOp
	if err := httpapi.Decode(r, &ops); err != nil {
		return 0, nil, err
	}
	if err := h.svc.EditResourceDefinitionKeys(r.Context(), ref, keyEdit(r, op == "set"), ops); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
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

func (h *handlers) deleteDefinition(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := definitionRef(r, r.PathValue("ref"))
	if err == nil {
		err = h.svc.DeleteResourceDefinition(r.Context(), ref)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Environments

func (h *handlers) listEnvironments(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	envs, err := h.svc.ListEnvironments(r.Context())
	if err != nil {
		return 0, nil, err
	}
	v := idsFor(r)
	out := make([]wire.Environment, len(envs))
	for i, e := range envs {
		out[i] = v.environment(e)
	}
	return http.StatusOK, out, nil
}

func (h *handlers) createEnvironment(w http.ResponseWriter, r *http.Request) (int, any, error) {
	// wire.NewEnvironment with the components' references raw.
	var body struct {
		wire.NewEnvironment
		Components []json.RawMessage `json:"components"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	refs, err := idsFor(r).bodyRefs("components", body.Components, true)
	if err != nil {
		return 0, nil, err
	}
	env, err := h.svc.CreateEnvironment(r.Context(), configdb.NewEnvironment{ID: body.ID, Components: refs, Levels: body.HierarchyLevels})
	if err != nil {
		return 0, nil, err
	}
	view := idsFor(r).environment(env)
	return created(w, fmt.Sprintf("%s/environments/%v", Prefix, view.ID), view)
}

func (h *handlers) getEnvironment(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		return 0, nil, err
	}
	env, err := h.svc.GetEnvironment(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, idsFor(r).environment(env), nil
}

func (h *handlers) updateEnvironment(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		return 0, nil, err
	}
	// wire.EnvironmentUpdate with the components' references raw.
	var body struct {
		wire.EnvironmentUpdate
		Components *[]json.RawMessage `json:"components"`
	}
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	upd := configdb.EnvironmentUpdate{Levels: body.HierarchyLevels}
	if body.Components != nil {
		refs, err := idsFor(r).bodyRefs("components", *body.Components, true)
		if err != nil {
			return 0, nil, err
		}
		upd.Components = &refs
	}
	if err := h.svc.UpdateEnvironment(r.Context(), ref, upd); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

func (h *handlers) deleteEnvironment(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "env", false)
	if err == nil {
		err = h.svc.DeleteEnvironment(r.Context(), ref)
	}
	if err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// Hierarchy levels

func (h *handlers) listLevels(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	ref, err := pathRef(r, "env", false)
	if err != nil {
		return 0, nil, err
	}
	levels, err := h.svc.ListHierarchyLevels(r.Context(), ref)
	if err != nil {
		return 0, nil, err
	}
	v := idsFor(r)
	out := make([]wire.Level, len(levels))
	for i, l := range levels {
		out[i] = v.level(l)
	}
	return http.StatusOK, out, nil
}

// levelRefs reads the environment and level references of a level route.
func levelRefs(r *http.Request) (env, level string, err error) {
	if env, err = pathRef(r, "env", false); err != nil {
		return "", "", err
	}
	level, err = pathRef(r, "level", true)
	return env, level, err
}

func (h *handlers) getLevel(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	env, level, err := levelRefs(r)
	if err != nil {
		return 0, nil, err
	}
	l, err := h.svc.GetHierarchyLevel(r.Context(), env, level)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, idsFor(r).level(l), nil
}

func (h *handlers) renameLevel(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	env, level, err := levelRefs(r)
	if err != nil {
		return 0, nil, err
	}
	var body wire.LevelRename
	if err := httpapi.Decode(r, &body); err != nil {
		return 0, nil, err
	}
	if err := h.svc.RenameHierarchyLevel(r.Context(), env, level, body.Name); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}
