package graphs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ClusterExport is what an environment's export (shared/envexport) holds of
// its cluster: the release it is built from and the plugins it enables, each
// with its graphs, its own graphs and its master's address.
type ClusterExport struct {
	MasterIP string          `json:"master_ip,omitempty"`
	Release  *ExportedEntry  `json:"release,omitempty"`
	Plugins  []ExportedEntry `json:"plugins"`
	Graphs   []ExportedGraph `json:"graphs"`
}

// ExportedEntry is a release or a plugin with its graphs.
type ExportedEntry struct {
	Entry
	Graphs []ExportedGraph `json:"graphs"`
}

// ExportedGraph is a graph as its owner holds it.
type ExportedGraph struct {
	ID   int64  `json:"id"`
	UUID string `json:"uuid"`
	Name string `json:"name"`
	Type string `json:"type"`
	Metadata
	Tasks json.RawMessage `json:"tasks"`
}

// ExportCluster reads what an export holds of a cluster.
func (s *Service) ExportCluster(ctx context.Context, cluster int64) (ClusterExport, error) {
	settings, err := s.Cluster(ctx, cluster)
	if err != nil {
		return ClusterExport{}, err
	}
	out := ClusterExport{MasterIP: settings.MasterIP, Plugins: []ExportedEntry{}}
	if settings.ReleaseID != nil {
		release, err := s.exportEntry(ctx, Release, *settings.ReleaseID)
		if err != nil {
			return ClusterExport{}, err
		}
		out.Release = &release
	}
	for _, id := range settings.Plugins {
		plugin, err := s.exportEntry(ctx, Plugin, id)
		if err != nil {
			return ClusterExport{}, err
		}
		out.Plugins = append(out.Plugins, plugin)
	}
	out.Graphs, err = s.exportGraphs(ctx, Owner{Kind: Cluster, ID: cluster})
	return out, err
}

func (s *Service) exportEntry(ctx context.Context, kind OwnerKind, id int64) (ExportedEntry, error) {
	e, err := s.Entry(ctx, kind, id)
	if err != nil {
		return ExportedEntry{}, err
	}
	graphs, err := s.exportGraphs(ctx, Owner{Kind: kind, ID: id})
	return ExportedEntry{Entry: e, Graphs: graphs}, err
}

func (s *Service) exportGraphs(ctx context.Context, o Owner) ([]ExportedGraph, error) {
	graphs, err := s.GraphsOf(ctx, o)
	if err != nil {
		return nil, err
	}
	out := make([]ExportedGraph, len(graphs))
	for i, g := range graphs {
		tasks, err := encodeTasks(g.Tasks)
		if err != nil {
			return nil, fmt.Errorf("graph %d: %w", g.ID, err)
		}
		out[i] = ExportedGraph{ID: g.ID, UUID: g.UUID, Name: g.Name, Type: g.Type, Metadata: g.Metadata, Tasks: tasks}
	}
	return out, nil
}

// encodeTasks is a graph's tasks as stored and exported ([] for none).
func encodeTasks(tasks []planner.Task) ([]byte, error) {
	if tasks == nil {
		tasks = []planner.Task{}
	}
	return json.Marshal(tasks)
}

// ImportOps returns the writes that give cluster, an environment being
// imported (not visible yet), what in holds, in groups each written in one
// batch. A release or plugin registered here under the same name and version
// is reused when its metadata and graphs are the export's, and is a conflict
// when they differ; a missing one is registered with its graphs. Releases,
// plugins and graphs keep their ids and UUIDs where no other holds them here,
// else they get new ones (the cluster's settings follow). Nothing is written
// here but the id counters (moved past the ids kept): a refusal leaves every
// release, plugin and graph as it was.
func (s *Service) ImportOps(ctx context.Context, in ClusterExport, cluster int64) ([][]store.Op, error) {
	if in.MasterIP != "" {
		if _, err := netip.ParseAddr(in.MasterIP); err != nil {
			return nil, errs.Invalidf("cluster.master_ip: %q is not an IP address", in.MasterIP)
		}
	}
	ids, err := s.planImportIDs(ctx, in)
	if err != nil {
		return nil, err
	}
	settings := ClusterSettings{ID: cluster, Plugins: []int64{}, MasterIP: in.MasterIP}
	var writes, guards [][]store.Op
	if in.Release != nil {
		id, entryWrites, guard, err := s.importEntry(ctx, ids, Release, *in.Release)
		if err != nil {
			return nil, err
		}
		settings.ReleaseID = &id
		writes, guards = append(writes, entryWrites...), append(guards, guard)
	}
	if len(in.Plugins) > store.MaxWriteBatch-2 {
		return nil, errs.Invalidf("cluster.plugins: at most %d plugins per cluster", store.MaxWriteBatch-2)
	}
	seen := make(map[string]bool)
	for _, p := range in.Plugins {
		if seen[p.FullName()] {
			return nil, errs.Invalidf("cluster.plugins: plugin %s is listed twice", p.FullName())
		}
		seen[p.FullName()] = true
		id, entryWrites, guard, err := s.importEntry(ctx, ids, Plugin, p)
		if err != nil {
			return nil, err
		}
		settings.Plugins = append(settings.Plugins, id)
		writes, guards = append(writes, entryWrites...), append(guards, guard)
	}
	slices.Sort(settings.Plugins)
	graphWrites, err := s.importGraphs(ctx, ids, Owner{Kind: Cluster, ID: cluster}, in.Graphs)
	if err != nil {
		return nil, err
	}
	// The settings with the guards of the entries they name, in one batch, as SetCluster writes them.
	writes = append(append(writes, graphWrites...), append(slices.Concat(guards...), store.Create(clusterKey(cluster), mustJSON(settings))))
	return writes, nil
}

// importEntry returns the id a release or plugin of an import has here, the
// writes that register it (none when it is registered already), and the
// guard that keeps a registered one from being deleted while the cluster's
// settings are written (see SetCluster); a new one needs none: no cluster
// here knows it yet.
func (s *Service) importEntry(ctx context.Context, ids importIDs, kind OwnerKind, in ExportedEntry) (int64, [][]store.Op, []store.Op, error) {
	input := EntryInput{Name: in.Name, Version: in.Version, EntryMetadata: in.EntryMetadata}
	if err := input.validate(kind); err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", kind, in.FullName(), err)
	}
	var have Entry
	_, err := store.GetJSON(ctx, s.idx, entryNameKey(kind, in.Name, in.Version), &have)
	switch {
	case err == nil:
		if err := s.checkSameEntry(ctx, kind, have, in); err != nil {
			return 0, nil, nil, err
		}
		guard, err := s.entryGuard(ctx, kind, have.ID)
		return have.ID, nil, []store.Op{guard}, err
	case !errors.Is(err, store.ErrNotFound):
		return 0, nil, nil, err
	}
	e := Entry{Name: in.Name, Version: in.Version, EntryMetadata: in.EntryMetadata}
	if e.ID, err = ids.plans[string(kind)].id(ctx, s.idx, in.ID); err != nil {
		return 0, nil, nil, err
	}
	if e.UUID, err = s.importUUID(ctx, ids, in.UUID); err != nil {
		return 0, nil, nil, err
	}
	writes := [][]store.Op{{
		store.Create(entryKey(kind, e.ID), mustJSON(e)),
		store.Create(entryNameKey(kind, e.Name, e.Version), mustJSON(e)),
		uuidAlias(string(kind), e.ID, e.UUID),
	}}
	graphWrites, err := s.importGraphs(ctx, ids, Owner{Kind: kind, ID: e.ID}, in.Graphs)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", kind, in.FullName(), err)
	}
	return e.ID, append(writes, graphWrites...), nil, nil
}

// checkSameEntry refuses (409) an export's release or plugin that differs
// from the one registered here under its name and version: in its metadata,
// or in any graph's type, name, metadata or tasks.
func (s *Service) checkSameEntry(ctx context.Context, kind OwnerKind, have Entry, in ExportedEntry) error {
	differs := func(what string) error {
		return errs.Conflictf("%s %s is registered here (id %d) with other %s than the export's: make them the same, or import into a tuningbox without it",
			kind, have.FullName(), have.ID, what)
	}
	if !bytes.Equal(mustJSON(have.EntryMetadata), mustJSON(in.EntryMetadata)) {
		return differs("metadata")
	}
	graphs, err := s.exportGraphs(ctx, Owner{Kind: kind, ID: have.ID})
	if err != nil {
		return err
	}
	if len(graphs) != len(in.Graphs) {
		return differs("graphs")
	}
	for _, want := range in.Graphs {
		i := slices.IndexFunc(graphs, func(g ExportedGraph) bool { return g.Type == want.Type })
		if i < 0 {
			return differs(fmt.Sprintf("graphs (no %s graph)", want.Type))
		}
		tasks, err := parsedTasks(want.Tasks)
		if err != nil {
			return err
		}
		g := graphs[i]
		if g.Name != want.Name || !bytes.Equal(mustJSON(g.Metadata), mustJSON(want.Metadata)) || !bytes.Equal(g.Tasks, tasks) {
			return differs(fmt.Sprintf("%s graph", want.Type))
		}
	}
	return nil
}

// parsedTasks validates an exported task list and returns it as it is stored.
func parsedTasks(raw json.RawMessage) ([]byte, error) {
	tasks, err := planner.ParseTasks(raw)
	if err != nil {
		return nil, err
	}
	return encodeTasks(tasks)
}

// importGraphs returns the writes that create an owner's graphs, one group each.
func (s *Service) importGraphs(ctx context.Context, ids importIDs, o Owner, in []ExportedGraph) ([][]store.Op, error) {
	var writes [][]store.Op
	seen := make(map[string]bool)
	for _, eg := range in {
		if err := ValidateType(eg.Type); err != nil {
			return nil, err
		}
		if seen[eg.Type] {
			return nil, errs.Invalidf("the export holds two %s graphs of %s %d", eg.Type, o.Kind, o.ID)
		}
		seen[eg.Type] = true
		tasks, err := planner.ParseTasks(eg.Tasks)
		if err != nil {
			return nil, fmt.Errorf("%s graph: %w", eg.Type, err)
		}
		g := Graph{Name: eg.Name, Type: eg.Type, Owner: o, Metadata: eg.Metadata, Tasks: tasks}
		if g.ID, err = ids.plans[GraphKind].id(ctx, s.idx, eg.ID); err != nil {
			return nil, err
		}
		if g.UUID, err = s.importUUID(ctx, ids, eg.UUID); err != nil {
			return nil, err
		}
		value, blobOps, err := s.encodeGraph(ctx, g)
		if err != nil {
			return nil, err
		}
		writes = append(writes, append([]store.Op{
			store.Create(ownerGraphKey(o, g.Type), mustJSON(graphPointer{GraphID: g.ID, GraphUUID: g.UUID})),
			store.Create(graphKey(g.ID), value),
			uuidAlias(GraphKind, g.ID, g.UUID)}, blobOps...))
	}
	return writes, nil
}

// importIDs are the id plans of an import's releases, plugins and graphs,
// by kind (GraphKind for graphs), and the UUIDs it kept so far.
type importIDs struct {
	plans map[string]*idPlan
	uuids map[string]bool
}

// planImportIDs plans the ids of everything in may create: the releases',
// the plugins' and every graph's.
func (s *Service) planImportIDs(ctx context.Context, in ClusterExport) (importIDs, error) {
	wants := map[OwnerKind][]int64{}
	graphs := slices.Clone(in.Graphs)
	add := func(kind OwnerKind, e ExportedEntry) {
		wants[kind] = append(wants[kind], e.ID)
		graphs = append(graphs, e.Graphs...)
	}
	if in.Release != nil {
		add(Release, *in.Release)
	}
	for _, p := range in.Plugins {
		add(Plugin, p)
	}
	ids := importIDs{plans: map[string]*idPlan{}, uuids: map[string]bool{}}
	for _, kind := range []OwnerKind{Release, Plugin} {
		plan, err := s.planIDs(ctx, string(kind), wants[kind], func(id int64) store.Key { return entryKey(kind, id) })
		if err != nil {
			return importIDs{}, err
		}
		ids.plans[string(kind)] = plan
	}
	graphIDs := make([]int64, len(graphs))
	for i, g := range graphs {
		graphIDs[i] = g.ID
	}
	plan, err := s.planIDs(ctx, "graph", graphIDs, graphKey)
	ids.plans[GraphKind] = plan
	return ids, err
}

// idPlan gives an import's new items under one counter their ids: the id
// each had where no item here holds it, else a new one. The kept ones are
// reserved at the start, so that no new one is any of them, even one kept
// by an item that comes later.
type idPlan struct {
	counter store.Key
	free    map[int64]bool
}

// planIDs looks up wants, the ids items had, at key(id) in batched reads,
// and reserves the largest that is free here.
func (s *Service) planIDs(ctx context.Context, counter string, wants []int64, key func(int64) store.Key) (*idPlan, error) {
	plan := &idPlan{counter: store.Key{Partition: counterPartition, Sort: counter}, free: map[int64]bool{}}
	var keys []store.Key
	for _, id := range wants {
		if id >= 1 && id <= store.MaxChosenID && !plan.free[id] {
			plan.free[id] = true
			keys = append(keys, key(id))
		}
	}
	taken, err := s.getMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	var largest int64
	for id := range plan.free {
		if _, ok := taken[key(id)]; ok {
			delete(plan.free, id)
		} else {
			largest = max(largest, id)
		}
	}
	if largest > 0 {
		return plan, store.ReserveID(ctx, s.idx, plan.counter, largest)
	}
	return plan, nil
}

// id is want when it is free here (once), else the counter's next.
func (p *idPlan) id(ctx context.Context, idx store.Index, want int64) (int64, error) {
	if p.free[want] {
		delete(p.free, want)
		return want, nil
	}
	return store.NextID(ctx, idx, p.counter)
}

// importUUID is want when it is a UUID no release, plugin or graph here
// has, nor one kept before by the same import, else a new one.
func (s *Service) importUUID(ctx context.Context, ids importIDs, want string) (string, error) {
	if !ident.IsUUID(want) || ids.uuids[uuidKey(want).Sort] {
		return newEntityUUID(), nil
	}
	_, err := s.idx.Get(ctx, uuidKey(want))
	switch {
	case errors.Is(err, store.ErrNotFound):
		ids.uuids[uuidKey(want).Sort] = true
		return want, nil
	case err != nil:
		return "", err
	}
	return newEntityUUID(), nil
}
