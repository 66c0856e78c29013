package graphs

import (
	"context"
	"maps"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/yaql"
)

// Source selects which graphs of a cluster a task list is made of.
type Source int

const (
	// Merged: the release graph, overridden by the enabled plugins' graphs, overridden by the cluster's own.
	Merged Source = iota
	// Own: the cluster's own graph alone.
	Own
	// Plugins: the enabled plugins' graphs merged together.
	Plugins
	// ReleaseOnly: the release graph alone.
	ReleaseOnly
)

// pluginGraph is an enabled plugin's graph of the merged type.
type pluginGraph struct {
	plugin Entry
	graph  Graph
}

// sources are a cluster's graphs of one type, lowest precedence last.
type sources struct {
	cluster *Graph
	plugins []pluginGraph // in plugin id order
	release *Graph
}

func (src sources) empty() bool {
	return src.cluster == nil && len(src.plugins) == 0 && src.release == nil
}

// MergedGraph is the result of merging a cluster's graphs of one type.
type MergedGraph struct {
	Metadata
	Tasks []planner.Task
	// deps is the dependency graph of Tasks, set once the merge is validated.
	deps *planner.Deps
}

// merge combines the sources. A task of a higher source replaces the whole
// task of the same id below it; the result lists the cluster's tasks, then the
// plugins' that survive, then the release's. Two plugins defining one task id
// is an error. Metadata deep-merges release < plugins < cluster.
func merge(src sources) (MergedGraph, error) {
	var m MergedGraph
	taken := map[string]bool{}
	if src.cluster != nil {
		for _, t := range src.cluster.Tasks {
			taken[t.ID] = true
			m.Tasks = append(m.Tasks, t)
		}
	}
	pluginTasks, err := mergePlugins(src.plugins)
	if err != nil {
		return MergedGraph{}, err
	}
	for _, t := range pluginTasks {
		if !taken[t.ID] {
			taken[t.ID] = true
			m.Tasks = append(m.Tasks, t)
		}
	}
	if src.release != nil {
		for _, t := range src.release.Tasks {
			if !taken[t.ID] {
				m.Tasks = append(m.Tasks, t)
			}
		}
	}
	layers := make([]Metadata, 0, 2+len(src.plugins))
	if src.release != nil {
		layers = append(layers, src.release.Metadata)
	}
	for _, p := range src.plugins {
		layers = append(layers, p.graph.Metadata)
	}
	if src.cluster != nil {
		layers = append(layers, src.cluster.Metadata)
	}
	for _, md := range layers {
		m.Metadata = mergeMetadata(m.Metadata, md)
	}
	return m, nil
}

// mergePlugins concatenates the plugins' tasks, refusing a task id that two plugins define.
func mergePlugins(plugins []pluginGraph) ([]planner.Task, error) {
	definedBy := map[string]Entry{}
	var out []planner.Task
	for _, p := range plugins {
		for _, t := range p.graph.Tasks {
			if first, ok := definedBy[t.ID]; ok {
				return nil, errs.Invalidf("Plugin %s is overlapping with plugin %s by introducing the same deployment task with id %s",
					p.plugin.FullName(), first.FullName(), t.ID)
			}
			definedBy[t.ID] = p.plugin
			out = append(out, t)
		}
	}
	return out, nil
}

func mergeMetadata(low, high Metadata) Metadata {
	out := low
	if high.NodeFilter != "" {
		out.NodeFilter = high.NodeFilter
	}
	out.OnSuccess = mergeHook(low.OnSuccess, high.OnSuccess)
	out.OnError = mergeHook(low.OnError, high.OnError)
	out.OnStop = mergeHook(low.OnStop, high.OnStop)
	return out
}

func mergeHook(low, high *Hook) *Hook {
	switch {
	case high == nil:
		return low
	case low == nil:
		return high
	}
	return &Hook{NodeAttributes: deepMerge(low.NodeAttributes, high.NodeAttributes)}
}

// deepMerge returns low overlaid with high: nested objects merge key by key,
// any other value of high replaces low's.
func deepMerge(low, high map[string]any) map[string]any {
	out := maps.Clone(low)
	if out == nil {
		out = map[string]any{}
	}
	for k, hv := range high {
		lm, lok := out[k].(map[string]any)
		hm, hok := hv.(map[string]any)
		if lok && hok {
			out[k] = deepMerge(lm, hm)
		} else {
			out[k] = hv
		}
	}
	return out
}

// loadSources reads a cluster's graphs of one type. override, when set,
// stands in for the stored graph of its owner and type (upload validation).
func (s *Service) loadSources(ctx context.Context, clusterID int64, graphType string, override *Graph) (sources, error) {
	settings, err := s.clusterSettings(ctx, clusterID)
	if err != nil {
		return sources{}, err
	}
	owners := []Owner{{Kind: Cluster, ID: clusterID}}
	if settings.ReleaseID != nil {
		owners = append(owners, Owner{Kind: Release, ID: *settings.ReleaseID})
	}
	keys := make([]store.Key, 0, 2*len(owners)+2*len(settings.Plugins))
	for _, o := range owners {
		keys = append(keys, ownerGraphKey(o, graphType))
	}
	for _, id := range settings.Plugins {
		keys = append(keys, ownerGraphKey(Owner{Kind: Plugin, ID: id}, graphType), entryKey(Plugin, id))
	}
	items, err := s.getMany(ctx, keys)
	if err != nil {
		return sources{}, err
	}
	var graphKeys []store.Key
	for _, k := range keys {
		if it, ok := items[k]; ok && k.Sort == graphType {
			var ptr graphPointer
			if err := decodeItem(it, &ptr); err != nil {
				return sources{}, err
			}
			graphKeys = append(graphKeys, graphKey(ptr.GraphID))
		}
	}
	graphItems, err := s.getMany(ctx, graphKeys)
	if err != nil {
		return sources{}, err
	}
	byOwner := map[Owner]*Graph{}
	for _, it := range graphItems {
		g, err := s.decodeGraph(ctx, it)
		if err != nil {
			return sources{}, err
		}
		byOwner[g.Owner] = &g
	}
	if override != nil && override.Type == graphType {
		byOwner[override.Owner] = override
	}
	src := sources{cluster: byOwner[owners[0]]}
	if len(owners) > 1 {
		src.release = byOwner[owners[1]]
	}
	for _, id := range settings.Plugins {
		g := byOwner[Owner{Kind: Plugin, ID: id}]
		it, ok := items[entryKey(Plugin, id)]
		if g == nil || !ok {
			continue
		}
		var e Entry
		if err := decodeItem(it, &e); err != nil {
			return sources{}, err
		}
		src.plugins = append(src.plugins, pluginGraph{plugin: e, graph: *g})
	}
	return src, nil
}

// DeploymentTasks returns a cluster's tasks of a graph type from the chosen
// source. The merged list must order cleanly (no cycle, no missing task) and is
// a 404 when no source defines the type; a single source without a graph gives an empty list.
func (s *Service) DeploymentTasks(ctx context.Context, clusterID int64, graphType string, from Source) ([]planner.Task, error) {
	src, err := s.clusterSources(ctx, clusterID, graphType)
	if err != nil {
		return nil, err
	}
	var tasks []planner.Task
	switch from {
	case Own:
		if src.cluster != nil {
			tasks = src.cluster.Tasks
		}
	case ReleaseOnly:
		if src.release != nil {
			tasks = src.release.Tasks
		}
	case Plugins:
		if tasks, err = mergePlugins(src.plugins); err != nil {
			return nil, err
		}
	default:
		m, err := s.mergedOf(src, graphType, false)
		if err != nil {
			return nil, err
		}
		tasks = m.Tasks
	}
	if tasks == nil {
		tasks = []planner.Task{}
	}
	return tasks, nil
}

// clusterSources checks the type and the cluster and reads the cluster's graphs of the type.
func (s *Service) clusterSources(ctx context.Context, clusterID int64, graphType string) (sources, error) {
	if err := ValidateType(graphType); err != nil {
		return sources{}, err
	}
	if err := s.clusters.Exists(ctx, clusterName(clusterID)); err != nil {
		return sources{}, err
	}
	return s.loadSources(ctx, clusterID, graphType, nil)
}

// mergedGraph returns a cluster's validated merged graph of a type.
func (s *Service) mergedGraph(ctx context.Context, clusterID int64, graphType string) (MergedGraph, error) {
	src, err := s.clusterSources(ctx, clusterID, graphType)
	if err != nil {
		return MergedGraph{}, err
	}
	return s.mergedOf(src, graphType, false)
}

// mergedOf merges and validates the sources of a graph type.
// strict refuses dependencies on tasks that are in no source (validation on
// request); otherwise they are the merged graph's warnings.
func (s *Service) mergedOf(src sources, graphType string, strict bool) (MergedGraph, error) {
	if src.empty() {
		return MergedGraph{}, graphNotDefined(graphType)
	}
	m, err := merge(src)
	if err != nil {
		return MergedGraph{}, err
	}
	if m.deps, err = planner.NewDeps(m.Tasks, strict); err != nil {
		return MergedGraph{}, err
	}
	return m, nil
}

// checkAcrossNodes resolves a merged graph on the cluster's nodes as they are
// now, refusing cross dependencies that form a cycle across them.
func (s *Service) checkAcrossNodes(ctx context.Context, budget *yaql.Budget, clusterID int64, graphType string, m MergedGraph) error {
	nodes, err := s.clusters.Nodes(ctx, clusterName(clusterID))
	if err != nil {
		return err
	}
	_, err = s.plan(ctx, planRequest{cluster: clusterID, graphType: graphType, merged: m, nodes: nodes, force: true, budget: budget})
	return err
}

// validateMerged checks that g, in place of the stored graph of its owner and
// type, leaves the merged graph of every cluster it takes part in valid: the
// cluster itself, the clusters built from the release, or the clusters
// enabling the plugin; and that its cross dependencies form no cycle across
// each cluster's nodes. With no such cluster there is no merge to check.
func (s *Service) validateMerged(ctx context.Context, g Graph) (err error) {
	ctx, budget, finish := s.planning(ctx)
	defer finish(&err)
	clusters := []int64{g.Owner.ID}
	if g.Owner.Kind != Cluster {
		var err error
		if clusters, err = s.clustersUsing(ctx, g.Owner); err != nil {
			return err
		}
	}
	for _, cid := range clusters {
		src, err := s.loadSources(ctx, cid, g.Type, &g)
		if err != nil {
			return err
		}
		m, err := s.mergedOf(src, g.Type, true)
		if err == nil {
			err = s.checkAcrossNodes(ctx, budget, cid, g.Type, m)
		}
		if err != nil {
			if g.Owner.Kind != Cluster && errs.Is(err, errs.Invalid) {
				return errs.Invalidf("in cluster %d: %s", cid, errs.Message(err))
			}
			return err
		}
	}
	return nil
}
