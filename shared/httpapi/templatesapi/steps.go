package templatesapi

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/templates"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// withEnvironment resolves the {env} path segment (an id, or a UUID; only a
// UUID from 1.2 on) and runs fn with the environment.
func (h handlers) withEnvironment(fn func(w http.ResponseWriter, r *http.Request, env nodes.Environment)) httpapi.QueryHandler {
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		ref := r.PathValue("env")
		if err := httpapi.CheckPathID(r, ref); err != nil {
			httpapi.Error(w, r, err)
			return
		}
		env, err := h.nodes.Environment(r.Context(), ref)
		if err != nil {
			httpapi.Error(w, r, err)
			return
		}
		fn(w, r, env)
	}
}

func defaultsView(r *http.Request, env nodes.Environment, steps []templates.Step) wire.StepDefaults {
	return wire.StepDefaults{EnvironmentID: wire.IDOf(httpapi.UUIDIdentities(r), env.ID, env.UUID), Steps: stepViews(templates.MaskSteps(steps))}
}

func (h handlers) showDefaults(w http.ResponseWriter, r *http.Request, env nodes.Environment) {
	steps, err := h.svc.Defaults(r.Context(), env.ID)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, defaultsView(r, env, steps))
}

func (h handlers) setDefaults(w http.ResponseWriter, r *http.Request, env nodes.Environment) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	steps, err := h.svc.SetDefaults(r.Context(), env.ID, body)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, defaultsView(r, env, steps))
}

func (h handlers) deleteDefaults(w http.ResponseWriter, r *http.Request, env nodes.Environment) {
	if err := h.svc.DeleteDefaults(r.Context(), env.ID); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.NoContent(w)
}

// validateNode answers Ironic's validation of a node's deploy step interfaces.
func (h handlers) validateNode(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	n, err := nodesapi.Lookup(r, h.nodes, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	v, err := h.svc.Validate(r.Context(), n)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	out := make(wire.NodeValidation, len(v))
	for name, iv := range v {
		out[name] = wire.InterfaceValidation(iv)
	}
	httpapi.JSON(w, http.StatusOK, out)
}

// nodeSteps answers the deploy steps of a deployment of the node with the
// requested instance traits, or 400 listing every problem.
func (h handlers) nodeSteps(w http.ResponseWriter, r *http.Request, _ map[string]string) {
	n, err := nodesapi.Lookup(r, h.nodes, r.PathValue("id"))
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	var req wire.StepsRequest
	if err := httpapi.Decode(r, &req); err != nil {
		httpapi.Error(w, r, err)
		return
	}
	if req.InstanceTraits == nil {
		httpapi.Error(w, r, errs.Invalidf("instance_traits is required: a list of trait names"))
		return
	}
	steps, err := h.svc.DeploySteps(r.Context(), n, req.InstanceTraits)
	if err != nil {
		httpapi.Error(w, r, err)
		return
	}
	httpapi.JSON(w, http.StatusOK, wire.DeploySteps{DeploySteps: stepViews(steps)})
}
