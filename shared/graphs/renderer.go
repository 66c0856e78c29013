package graphs

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/wire"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// setOld records the data pin a node's $%old was read at.
func (p *frozenPlan) setOld(node string, pin DataPin) {
	if p.Old == nil {
		p.Old = map[string]DataPin{}
	}
	p.Old[node] = pin
}

// setPlaceholders works out the placeholder values of the nodes that are
// handed a task whose body renders per node.
func (p *frozenPlan) setPlaceholders(nodes []planner.PlanNode, masterIP string) {
	perNode := make([]bool, len(p.Tasks))
	some := false
	for i := range p.Tasks {
		perNode[i] = !p.Tasks[i].NoOp() && p.Tasks[i].PerNode()
		some = some || perNode[i]
	}
	if !some {
		return
	}
	for _, n := range nodes {
		if !slices.ContainsFunc(p.Nodes[n.ID], func(s planner.NodeStep) bool { return p.handedOut(s) && perNode[s.Task] }) {
			continue
		}
		if p.Vars == nil {
			p.Vars = map[string]map[string]string{}
		}
		p.Vars[n.ID] = planner.PlaceholderValues(n.Data, masterIP)
	}
}

// nodeRenderer renders the bodies of one node's tasks. The shared bodies
// (tasks that render the same everywhere) are made once per plan; the data
// yaql reads is loaded on first need.
type nodeRenderer struct {
	plan   *frozenPlan
	shared []wire.TaskDocument
	// load returns what yaql in a node's tasks sees.
	load func(ctx context.Context, node string, parts bool) (yaql.Env, error)
}

func newNodeRenderer(plan *frozenPlan, load func(ctx context.Context, node string, parts bool) (yaql.Env, error)) *nodeRenderer {
	return &nodeRenderer{plan: plan, shared: make([]wire.TaskDocument, len(plan.Tasks)), load: load}
}

// body returns task i's body on node.
func (r *nodeRenderer) body(ctx context.Context, node string, i int) (wire.TaskDocument, error) {
	t := &r.plan.Tasks[i]
	if !t.PerNode() {
		if r.shared[i] == nil {
			b, err := t.Body(ctx, nil, yaql.Env{})
			if err != nil {
				return nil, err
			}
			r.shared[i] = b
		}
		return r.shared[i], nil
	}
	var env yaql.Env
	if t.ReadsData() {
		var err error
		if env, err = r.load(ctx, node, t.ReadsParts()); err != nil {
			return nil, err
		}
	}
	b, err := t.Body(ctx, r.plan.Vars[node], env)
	if kind := errs.KindOf(err); err != nil && kind != errs.Internal {
		return nil, errs.Wrap(kind, err, fmt.Sprintf("node %s: %s", node, errs.Message(err)))
	}
	if err != nil {
		return nil, fmt.Errorf("node %s: %w", node, err)
	}
	return b, nil
}

// partsEnv is yaql's environment on a node: $, $%old and, when read, $node and $common.
func partsEnv(data, old any, parts *NodeParts) (yaql.Env, error) {
	env := yaql.Env{New: data, Old: old}
	if parts != nil {
		own, err := decodeData(parts.Own)
		if err != nil {
			return env, err
		}
		common, err := decodeData(parts.Common)
		if err != nil {
			return env, err
		}
		env.Vars = map[string]any{"node": own, "common": common}
	}
	return env, nil
}

// pinnedRenderer renders a stored plan's bodies: yaql reads each node's data
// back as the plan read it (its pins), so a task's body is the same whenever
// it is claimed or shown.
func (s *Service) pinnedRenderer(cluster int64, plan *frozenPlan) *nodeRenderer {
	return newNodeRenderer(plan, func(ctx context.Context, node string, withParts bool) (yaql.Env, error) {
		pin, ok := plan.Data[node]
		if !ok {
			return yaql.Env{New: map[string]any{}}, nil
		}
		read := func(pin DataPin) (any, error) {
			docs, err := s.clusters.NodeData(ctx, clusterName(cluster), plan.Resource, []string{node}, pin.At)
			if err != nil {
				return nil, err
			}
			doc, ok := docs[node]
			if !ok || doc.ETag != pin.ETag {
				return nil, errs.Conflictf("the deployment data node %s was planned with (%s at %s) is no longer in its history", node, pin.ETag, pin.At.Format(time.RFC3339Nano))
			}
			return decodeData(doc.Body)
		}
		data, err := read(pin)
		if err != nil {
			return yaql.Env{}, err
		}
		var old any
		if oldPin, ok := plan.Old[node]; ok {
			if old, err = read(oldPin); err != nil {
				return yaql.Env{}, err
			}
		}
		var parts *NodeParts
		if withParts {
			all, err := s.clusters.NodeParts(ctx, clusterName(cluster), plan.Resource, []string{node}, pin.At)
			if err != nil {
				return yaql.Env{}, err
			}
			p := all[node]
			parts = &p
		}
		return partsEnv(data, old, parts)
	})
}

// liveRenderer renders the bodies of a plan just made: yaql reads the data
// the plan read; $node and $common are read when first needed, for the
// node and the pageBatch nodes after it at once (a page renders nodes in
// order), and only those are kept: 5,000 of fuel-library's nodes hold 345 MB
// of their own documents.
func (s *Service) liveRenderer(cluster int64, plan *frozenPlan, nodes []planner.PlanNode) *nodeRenderer {
	at := make(map[string]int, len(nodes))
	for n := range nodes {
		at[nodes[n].ID] = n
	}
	var parts map[string]NodeParts
	return newNodeRenderer(plan, func(ctx context.Context, node string, withParts bool) (yaql.Env, error) {
		n := &nodes[at[node]]
		if !withParts {
			return partsEnv(n.Data, n.Old, nil)
		}
		p, ok := parts[node]
		if !ok {
			var ids []string
			for _, next := range nodes[at[node]:min(at[node]+pageBatch, len(nodes))] {
				ids = append(ids, next.ID)
			}
			var err error
			if parts, err = s.clusters.NodeParts(ctx, clusterName(cluster), plan.Resource, ids, time.Time{}); err != nil {
				return yaql.Env{}, err
			}
			p = parts[node]
		}
		return partsEnv(n.Data, n.Old, &p)
	})
}
