package templatesapi

import (
	"net/http"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/templates"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// withEnvironment resolves the {env} path segment (an id, or a UUID; only a
// UUID from 1.2 on) and runs fn with the environment.
func (h handlers) withEnvironment(fn func(w http.ResponseWriter, r *http.Request, env nodes.Environment) (int, any, error)) httpapi.Handler {
	return func(w http.ResponseWriter, r *http.Request) (int, any, error) {
		ref := r.PathValue("env")
		if err := httpapi.CheckPathID(r, ref); err != nil {
			return 0, nil, err
		}
		env, err := h.nodes.Environment(r.Context(), ref)
		if err != nil {
			return 0, nil, err
		}
		audit.Note(r.Context(), env.ID, 0)
		return fn(w, r, env)
	}
}

func defaultsView(r *http.Request, env nodes.Environment, steps []templates.Step) wire.StepDefaults {
	return wire.StepDefaults{EnvironmentID: wire.IDOf(httpapi.UUIDIdentities(r), env.ID, env.UUID), Steps: stepViews(templates.MaskSteps(steps))}
}

func (h handlers) showDefaults(_ http.ResponseWriter, r *http.Request, env nodes.Environment) (int, any, error) {
	steps, err := h.svc.Defaults(r.Context(), env.ID)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, defaultsView(r, env, steps), nil
}

func (h handlers) setDefaults(_ http.ResponseWriter, r *http.Request, env nodes.Environment) (int, any, error) {
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return 0, nil, err
	}
	steps, err := h.svc.SetDefaults(r.Context(), env.ID, body)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, defaultsView(r, env, steps), nil
}

func (h handlers) deleteDefaults(_ http.ResponseWriter, r *http.Request, env nodes.Environment) (int, any, error) {
	if err := h.svc.DeleteDefaults(r.Context(), env.ID); err != nil {
		return 0, nil, err
	}
	return http.StatusNoContent, nil, nil
}

// validateNode answers Ironic's validation of a node's deploy step interfaces.
func (h handlers) validateNode(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	n, err := nodesapi.Lookup(r, h.nodes, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	v, err := h.svc.Validate(r.Context(), n)
	if err != nil {
		return 0, nil, err
	}
	out := make(wire.NodeValidation, len(v))
	for name, iv := range v {
		out[name] = wire.InterfaceValidation(iv)
	}
	return http.StatusOK, out, nil
}

// nodeSteps answers the deploy steps of a deployment of the node with the
// requested instance traits, or 400 listing every problem.
func (h handlers) nodeSteps(_ http.ResponseWriter, r *http.Request) (int, any, error) {
	n, err := nodesapi.Lookup(r, h.nodes, r.PathValue("id"))
	if err != nil {
		return 0, nil, err
	}
	var req wire.StepsRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return 0, nil, err
	}
	if req.InstanceTraits == nil {
		return 0, nil, errs.Invalidf("instance_traits is required: a list of trait names")
	}
	steps, err := h.svc.DeploySteps(r.Context(), n, req.InstanceTraits)
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wire.DeploySteps{DeploySteps: stepViews(steps)}, nil
}
