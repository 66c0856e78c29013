package graphs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
)

// DefaultType is the graph type used when none is given.
const DefaultType = "default"

var typePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,255}$`)

// ValidateType checks a graph type name.
func ValidateType(t string) error {
	if !typePattern.MatchString(t) {
		return errs.Invalidf("graph type %q must match [a-zA-Z0-9-_]+ (at most 255 characters)", t)
	}
	return nil
}

// Hook is one of a graph's on_success / on_error / on_stop actions.
type Hook struct {
	NodeAttributes map[string]any `json:"node_attributes,omitempty"`
}

// Metadata is what a graph says besides its tasks.
type Metadata struct {
	NodeFilter string `json:"node_filter,omitempty"`
	OnSuccess  *Hook  `json:"on_success,omitempty"`
	OnError    *Hook  `json:"on_error,omitempty"`
	OnStop     *Hook  `json:"on_stop,omitempty"`
}

// Graph is a deployment graph with its owner.
type Graph struct {
	ID    int64
	UUID  string
	Name  string
	Type  string
	Owner Owner
	Metadata
	Tasks []planner.Task
}

// Relation names the model a graph belongs to, as the API shows it.
type Relation struct {
	Type    string    `json:"type"`
	Model   OwnerKind `json:"model"`
	ModelID int64     `json:"model_id"`
}

// MarshalJSON writes the API form before microversion 1.2: {id, uuid, name, node_filter?, on_*?, tasks, relations}.
func (g Graph) MarshalJSON() ([]byte, error) {
	tasks := g.Tasks
	if tasks == nil {
		tasks = []planner.Task{}
	}
	return json.Marshal(struct {
		ID   int64  `json:"id"`
		UUID string `json:"uuid,omitempty"`
		Name string `json:"name"`
		Metadata
		Tasks     []planner.Task `json:"tasks"`
		Relations []Relation     `json:"relations"`
	}{g.ID, g.UUID, g.Name, g.Metadata, tasks, []Relation{{Type: g.Type, Model: g.Owner.Kind, ModelID: g.Owner.ID}}})
}

// GraphInput is the body that creates or updates a graph. Absent fields are
// left as they are on update; tasks, when present, replace the whole list.
type GraphInput struct {
	Name       *string         `json:"name"`
	NodeFilter *string         `json:"node_filter"`
	OnSuccess  *Hook           `json:"on_success"`
	OnError    *Hook           `json:"on_error"`
	OnStop     *Hook           `json:"on_stop"`
	Tasks      json.RawMessage `json:"tasks"`
}

// apply sets the fields present in in on g, validating the tasks.
func (in GraphInput) apply(g *Graph) error {
	if in.Name != nil {
		g.Name = *in.Name
	}
	if in.NodeFilter != nil {
		g.NodeFilter = *in.NodeFilter
	}
	if in.OnSuccess != nil {
		g.OnSuccess = in.OnSuccess
	}
	if in.OnError != nil {
		g.OnError = in.OnError
	}
	if in.OnStop != nil {
		g.OnStop = in.OnStop
	}
	if len(in.Tasks) > 0 && !bytes.Equal(bytes.TrimSpace(in.Tasks), []byte("null")) {
		tasks, err := planner.ParseTasks(in.Tasks)
		if err != nil {
			return err
		}
		g.Tasks = tasks
	}
	return nil
}

// graphRecord is a graph as stored: its tasks inline, or in a blob when the
// record would not fit an index item.
type graphRecord struct {
	ID        int64     `json:"id"`
	UUID      string    `json:"uuid"`
	Name      string    `json:"name"`
	Type      string    `json:"type"`
	OwnerKind OwnerKind `json:"owner_kind"`
	OwnerID   int64     `json:"owner_id"`
	Metadata
	Tasks     json.RawMessage `json:"tasks,omitempty"`
	TasksBlob string          `json:"tasks_blob,omitempty"`
}

// graphPointer is the (owner, type) -> graph id item.
type graphPointer struct {
	GraphID   int64  `json:"graph_id"`
	GraphUUID string `json:"graph_uuid"`
}

// inlineLimit is the largest graph record kept whole in the index: below
// store.MaxValueSize with room for the backend's own attributes.
const inlineLimit = store.MaxValueSize - 50<<10

// encodeGraph returns the graph's record and, when its tasks went to a blob,
// the operations that must commit with the record (store.PutBlob).
func (s *Service) encodeGraph(ctx context.Context, g Graph) ([]byte, []store.Op, error) {
	tasks := g.Tasks
	if tasks == nil {
		tasks = []planner.Task{}
	}
	rawTasks, err := json.Marshal(tasks)
	if err != nil {
		return nil, nil, err
	}
	rec := graphRecord{ID: g.ID, UUID: g.UUID, Name: g.Name, Type: g.Type, OwnerKind: g.Owner.Kind, OwnerID: g.Owner.ID, Metadata: g.Metadata, Tasks: rawTasks}
	b := mustJSON(rec)
	if len(b) <= inlineLimit {
		return b, nil, nil
	}
	ref, err := store.PutBlob(ctx, s.idx, s.blobs, rawTasks)
	if err != nil {
		return nil, nil, err
	}
	rec.Tasks, rec.TasksBlob = nil, ref.Hash
	return mustJSON(rec), ref.Ops, nil
}

func (s *Service) decodeGraph(ctx context.Context, it store.Item) (Graph, error) {
	var rec graphRecord
	if err := decodeItem(it, &rec); err != nil {
		return Graph{}, err
	}
	rawTasks := rec.Tasks
	if rec.TasksBlob != "" {
		var err error
		if rawTasks, err = s.blobs.Get(ctx, rec.TasksBlob); err != nil {
			return Graph{}, err
		}
	}
	tasks, err := s.decodeTasks(rawTasks)
	if err != nil {
		return Graph{}, fmt.Errorf("graph %d: %w", rec.ID, err)
	}
	return Graph{ID: rec.ID, UUID: rec.UUID, Name: rec.Name, Type: rec.Type, Owner: Owner{Kind: rec.OwnerKind, ID: rec.OwnerID}, Metadata: rec.Metadata, Tasks: tasks}, nil
}

func graphNotDefined(graphType string) error {
	return errs.NotFoundf("Graph with type: %s is not defined", graphType)
}

// CreateGraph creates the owner's graph of the given type. With validate, the
// merged graph of every cluster it takes part in must order cleanly.
func (s *Service) CreateGraph(ctx context.Context, o Owner, graphType string, in GraphInput, validate bool) (Graph, error) {
	if err := ValidateType(graphType); err != nil {
		return Graph{}, err
	}
	var g Graph
	// A lost race (the pair just created, the owner just deleted) is decided by the next attempt.
	err := store.RetryConflicts(ctx, "create graph", func() error {
		guard, err := s.ownerGuard(ctx, o)
		if err != nil {
			return err
		}
		if _, err := s.idx.Get(ctx, ownerGraphKey(o, graphType)); err == nil {
			return errs.Conflictf("Deployment graph with type %q already exist.", graphType)
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		g = Graph{Type: graphType, Owner: o}
		if err := in.apply(&g); err != nil {
			return err
		}
		if validate {
			if err := s.validateMerged(ctx, g); err != nil {
				return err
			}
		}
		if g.ID, err = store.NextID(ctx, s.idx, store.Key{Partition: counterPartition, Sort: "graph"}); err != nil {
			return err
		}
		g.UUID = newEntityUUID()
		value, blobOps, err := s.encodeGraph(ctx, g)
		if err != nil {
			return err
		}
		return s.idx.Write(ctx, append(append(guard,
			store.Create(ownerGraphKey(o, graphType), mustJSON(graphPointer{GraphID: g.ID, GraphUUID: g.UUID})),
			store.Create(graphKey(g.ID), value),
			uuidAlias(GraphKind, g.ID, g.UUID)), blobOps...)...)
	})
	return g, err
}

// graphIDOf resolves (owner, type) to a graph id after checking the owner.
func (s *Service) graphIDOf(ctx context.Context, o Owner, graphType string) (int64, error) {
	if err := ValidateType(graphType); err != nil {
		return 0, err
	}
	if err := s.checkOwner(ctx, o); err != nil {
		return 0, err
	}
	var ptr graphPointer
	if _, err := store.GetJSON(ctx, s.idx, ownerGraphKey(o, graphType), &ptr); err != nil {
		return 0, notFoundIf(err, graphNotDefined(graphType))
	}
	return ptr.GraphID, nil
}

// GraphOf returns the owner's graph of a type.
func (s *Service) GraphOf(ctx context.Context, o Owner, graphType string) (Graph, error) {
	id, err := s.graphIDOf(ctx, o, graphType)
	if err != nil {
		return Graph{}, err
	}
	return s.Graph(ctx, id)
}

// UpdateGraphOf updates the owner's graph of a type.
func (s *Service) UpdateGraphOf(ctx context.Context, o Owner, graphType string, in GraphInput, validate bool) (Graph, error) {
	id, err := s.graphIDOf(ctx, o, graphType)
	if err != nil {
		return Graph{}, err
	}
	return s.UpdateGraph(ctx, id, in, validate)
}

// DeleteGraphOf deletes the owner's graph of a type.
func (s *Service) DeleteGraphOf(ctx context.Context, o Owner, graphType string) error {
	id, err := s.graphIDOf(ctx, o, graphType)
	if err != nil {
		return err
	}
	_, err = s.DeleteGraph(ctx, id)
	return err
}

// GraphsOf lists the owner's graphs by id.
func (s *Service) GraphsOf(ctx context.Context, o Owner) ([]Graph, error) {
	if err := s.checkOwner(ctx, o); err != nil {
		return nil, err
	}
	ids, err := s.ownedGraphIDs(ctx, o, nil)
	if err != nil {
		return nil, err
	}
	return s.loadGraphs(ctx, ids)
}

// ownedGraphIDs lists the ids of an owner's graphs, of the given types only when types is not empty.
func (s *Service) ownedGraphIDs(ctx context.Context, o Owner, types []string) ([]int64, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: ownerPartition(o)})
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, it := range items {
		if len(types) > 0 && !slices.Contains(types, it.Sort) {
			continue
		}
		var ptr graphPointer
		if err := decodeItem(it, &ptr); err != nil {
			return nil, err
		}
		ids = append(ids, ptr.GraphID)
	}
	return ids, nil
}

func graphNotFound(id int64) error { return errs.NotFoundf("Graph %d not found", id) }

// Graph returns a graph by id.
func (s *Service) Graph(ctx context.Context, id int64) (Graph, error) {
	it, err := s.idx.Get(ctx, graphKey(id))
	if err != nil {
		return Graph{}, notFoundIf(err, graphNotFound(id))
	}
	return s.decodeGraph(ctx, it)
}

// UpdateGraph applies in to the graph with the given id.
func (s *Service) UpdateGraph(ctx context.Context, id int64, in GraphInput, validate bool) (Graph, error) {
	var g Graph
	err := store.RetryConflicts(ctx, "update graph", func() error {
		it, err := s.idx.Get(ctx, graphKey(id))
		if err != nil {
			return notFoundIf(err, graphNotFound(id))
		}
		if g, err = s.decodeGraph(ctx, it); err != nil {
			return err
		}
		if err := in.apply(&g); err != nil {
			return err
		}
		if validate {
			if err := s.validateMerged(ctx, g); err != nil {
				return err
			}
		}
		value, blobOps, err := s.encodeGraph(ctx, g)
		if err != nil {
			return err
		}
		return s.idx.Write(ctx, append([]store.Op{store.Update(graphKey(id), value, it.Revision)}, blobOps...)...)
	})
	return g, err
}

// DeleteGraph deletes a graph by id and returns the owner it had (a
// cluster's graph is a write under the cluster's environment).
func (s *Service) DeleteGraph(ctx context.Context, id int64) (Owner, error) {
	var owner Owner
	err := store.RetryConflicts(ctx, "delete graph", func() error {
		it, err := s.idx.Get(ctx, graphKey(id))
		if err != nil {
			return notFoundIf(err, graphNotFound(id))
		}
		var rec graphRecord
		if err := decodeItem(it, &rec); err != nil {
			return err
		}
		owner = Owner{Kind: rec.OwnerKind, ID: rec.OwnerID}
		return s.idx.Write(ctx, append([]store.Op{
			store.DeleteAt(graphKey(id), it.Revision),
			store.Delete(ownerGraphKey(owner, rec.Type))},
			uuidDelete(rec.UUID)...)...)
	})
	if err != nil {
		return Owner{}, err
	}
	return owner, nil
}

// GraphFilter selects graphs: those of the named owners (all graphs when no
// owner is named), of the named types only when Types is not empty.
type GraphFilter struct {
	Releases, Plugins, Clusters []int64
	Types                       []string
	// FetchRelated adds the release and the enabled plugins of each named cluster.
	FetchRelated bool
}

// ListGraphs returns the graphs the filter selects, by id.
func (s *Service) ListGraphs(ctx context.Context, f GraphFilter) ([]Graph, error) {
	for _, t := range f.Types {
		if err := ValidateType(t); err != nil {
			return nil, err
		}
	}
	owners := make([]Owner, 0, len(f.Releases)+len(f.Plugins)+len(f.Clusters))
	add := func(kind OwnerKind, ids []int64) {
		for _, id := range ids {
			o := Owner{Kind: kind, ID: id}
			if !slices.Contains(owners, o) {
				owners = append(owners, o)
			}
		}
	}
	add(Release, f.Releases)
	add(Plugin, f.Plugins)
	add(Cluster, f.Clusters)
	if f.FetchRelated {
		for _, cid := range f.Clusters {
			c, err := s.clusterSettings(ctx, cid)
			if err != nil {
				return nil, err
			}
			if c.ReleaseID != nil {
				add(Release, []int64{*c.ReleaseID})
			}
			add(Plugin, c.Plugins)
		}
	}
	if len(owners) == 0 {
		return s.allGraphs(ctx, f.Types)
	}
	var ids []int64
	for _, o := range owners {
		owned, err := s.ownedGraphIDs(ctx, o, f.Types)
		if err != nil {
			return nil, err
		}
		ids = append(ids, owned...)
	}
	slices.Sort(ids)
	return s.loadGraphs(ctx, ids)
}

func (s *Service) allGraphs(ctx context.Context, types []string) ([]Graph, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: prefix + "graph"})
	if err != nil {
		return nil, err
	}
	out := make([]Graph, 0, len(items))
	for _, it := range items {
		g, err := s.decodeGraph(ctx, it)
		if err != nil {
			return nil, err
		}
		if len(types) == 0 || slices.Contains(types, g.Type) {
			out = append(out, g)
		}
	}
	return out, nil
}

// loadGraphs reads graphs by id, in the order given, skipping any deleted meanwhile.
func (s *Service) loadGraphs(ctx context.Context, ids []int64) ([]Graph, error) {
	keys := make([]store.Key, len(ids))
	for i, id := range ids {
		keys[i] = graphKey(id)
	}
	items, err := s.getMany(ctx, keys)
	if err != nil {
		return nil, err
	}
	out := make([]Graph, 0, len(ids))
	for _, k := range keys {
		it, ok := items[k]
		if !ok {
			continue
		}
		g, err := s.decodeGraph(ctx, it)
		if err != nil {
			return nil, err
		}
		out = append(out, g)
	}
	return out, nil
}

// ReleaseTasks returns a release's tasks of a graph type as stored, as
// Nailgun's GET /releases/{id}/deployment_tasks did (a release graph alone may
// depend on tasks that plugins or clusters add, so it is not ordered): empty
// when the release has no graph of the type.
func (s *Service) ReleaseTasks(ctx context.Context, release int64, graphType string) ([]planner.Task, error) {
	g, err := s.GraphOf(ctx, Owner{Kind: Release, ID: release}, graphType)
	if err != nil {
		if errs.Is(err, errs.NotFound) && s.checkOwner(ctx, Owner{Kind: Release, ID: release}) == nil {
			return []planner.Task{}, nil
		}
		return nil, err
	}
	return g.Tasks, nil
}

// DOT renders a cluster's merged graph of a type in Graphviz DOT.
func (s *Service) DOT(ctx context.Context, clusterID int64, graphType string, opts planner.DOTOptions) (string, error) {
	m, err := s.mergedGraph(ctx, clusterID, graphType)
	if err != nil {
		return "", err
	}
	return planner.DOT(graphType, m.deps, opts)
}
