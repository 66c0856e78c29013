package graphs

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/netip"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
)

// OwnerKind is the kind of model a graph belongs to.
type OwnerKind string

// Owner kinds, in increasing precedence of their graphs in a merge.
const (
	Release OwnerKind = "release"
	Plugin  OwnerKind = "plugin"
	Cluster OwnerKind = "cluster"
)

// Owner identifies the one model a graph belongs to.
type Owner struct {
	Kind OwnerKind
	ID   int64
}

func (k OwnerKind) title() string { return strings.ToUpper(string(k[:1])) + string(k[1:]) }

// Entry is a release or a plugin: an id, a name, a version and what it says
// of roles (Nailgun's release metadata).
type Entry struct {
	ID      int64  `json:"id"`
	UUID    string `json:"uuid"`
	Name    string `json:"name"`
	Version string `json:"version"`
	planner.EntryMetadata
}

// FullName is how messages name a plugin or release: name-version.
func (e Entry) FullName() string { return e.Name + "-" + e.Version }

// EntryInput is the body that creates (or replaces) a release or a plugin.
type EntryInput struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	planner.EntryMetadata
}

func (in EntryInput) validate(kind OwnerKind) error {
	switch {
	case strings.TrimSpace(in.Name) == "":
		return errs.Invalidf("name: is required")
	case strings.TrimSpace(in.Version) == "":
		return errs.Invalidf("version: is required")
	case len(in.Name) > 255 || len(in.Version) > 255:
		return errs.Invalidf("name and version are at most 255 characters")
	}
	if err := in.EntryMetadata.Validate(); err != nil {
		return err
	}
	return in.checkSize(kind)
}

func isRegistry(kind OwnerKind) bool { return kind == Release || kind == Plugin }

func entryKey(kind OwnerKind, id int64) store.Key {
	return store.Key{Partition: prefix + string(kind), Sort: store.SortID(id)}
}

// entryNameKey makes (name, version) unique per kind; the length prefix keeps
// ("a:b", "c") and ("a", "b:c") apart.
func entryNameKey(kind OwnerKind, name, version string) store.Key {
	return store.Key{Partition: prefix + string(kind) + "-name", Sort: fmt.Sprintf("%d:%s:%s", len(name), name, version)}
}

// CreateEntry registers a release or a plugin; (name, version) must be new.
func (s *Service) CreateEntry(ctx context.Context, kind OwnerKind, in EntryInput) (Entry, error) {
	if err := in.validate(kind); err != nil {
		return Entry{}, err
	}
	nameKey := entryNameKey(kind, in.Name, in.Version)
	if _, err := s.idx.Get(ctx, nameKey); err == nil {
		return Entry{}, errs.Conflictf("%s %s %s already exists", kind.title(), in.Name, in.Version)
	} else if !errors.Is(err, store.ErrNotFound) {
		return Entry{}, err
	}
	id, err := store.NextID(ctx, s.idx, store.Key{Partition: counterPartition, Sort: string(kind)})
	if err != nil {
		return Entry{}, err
	}
	e := Entry{ID: id, UUID: newEntityUUID(), Name: in.Name, Version: in.Version, EntryMetadata: in.EntryMetadata}
	err = s.idx.Write(ctx,
		store.Create(entryKey(kind, id), mustJSON(e)),
		store.Create(nameKey, mustJSON(e)),
		uuidAlias(string(kind), id, e.UUID))
	if errors.Is(err, store.ErrConflict) {
		return Entry{}, errs.Conflictf("%s %s %s already exists", kind.title(), in.Name, in.Version)
	}
	return e, err
}

// Entry returns a release or a plugin.
func (s *Service) Entry(ctx context.Context, kind OwnerKind, id int64) (Entry, error) {
	var e Entry
	_, err := store.GetJSON(ctx, s.idx, entryKey(kind, id), &e)
	return e, notFoundIf(err, errs.NotFoundf("%s %d not found", kind.title(), id))
}

// UpdateEntry replaces a release's or a plugin's name, version and metadata;
// (name, version) stays unique.
func (s *Service) UpdateEntry(ctx context.Context, kind OwnerKind, id int64, in EntryInput) (Entry, error) {
	if err := in.validate(kind); err != nil {
		return Entry{}, err
	}
	it, err := s.idx.Get(ctx, entryKey(kind, id))
	if err != nil {
		return Entry{}, notFoundIf(err, errs.NotFoundf("%s %d not found", kind.title(), id))
	}
	var old Entry
	if err := decodeItem(it, &old); err != nil {
		return Entry{}, err
	}
	e := Entry{ID: id, UUID: old.UUID, Name: in.Name, Version: in.Version, EntryMetadata: in.EntryMetadata}
	if e.DeploymentInfoResource != "" {
		users, err := s.clustersUsing(ctx, Owner{Kind: kind, ID: id})
		if err != nil {
			return Entry{}, err
		}
		for _, cluster := range users {
			if err := s.checkInfoResource(ctx, cluster, kind, e); err != nil {
				return Entry{}, err
			}
		}
	}
	ops := []store.Op{store.Update(it.Key, mustJSON(e), it.Revision)}
	if oldKey, newKey := entryNameKey(kind, old.Name, old.Version), entryNameKey(kind, e.Name, e.Version); oldKey != newKey {
		ops = append(ops, store.Delete(oldKey), store.Create(newKey, mustJSON(e)))
	} else {
		ops = append(ops, store.Put(newKey, mustJSON(e)))
	}
	if err := s.idx.Write(ctx, ops...); errors.Is(err, store.ErrConflict) {
		return Entry{}, errs.Conflictf("%s %s %s already exists, or %s %d was changed concurrently", kind.title(), e.Name, e.Version, kind, id)
	} else if err != nil {
		return Entry{}, err
	}
	return e, nil
}

// Entries lists the releases or the plugins by id.
func (s *Service) Entries(ctx context.Context, kind OwnerKind) ([]Entry, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: prefix + string(kind)})
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(items))
	for i, it := range items {
		if err := decodeItem(it, &out[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// DeleteEntry removes a release or a plugin and its graphs. One that a
// cluster still uses (release) or enables (plugin) cannot be removed.
func (s *Service) DeleteEntry(ctx context.Context, kind OwnerKind, id int64) error {
	it, err := s.idx.Get(ctx, entryKey(kind, id))
	if err != nil {
		return notFoundIf(err, errs.NotFoundf("%s %d not found", kind.title(), id))
	}
	var e Entry
	if err := decodeItem(it, &e); err != nil {
		return err
	}
	users, err := s.clustersUsing(ctx, Owner{Kind: kind, ID: id})
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return errs.Conflictf("%s %d is used by clusters %s", kind.title(), id, joinIDs(users))
	}
	ops := append([]store.Op{store.DeleteAt(entryKey(kind, id), it.Revision), store.Delete(entryNameKey(kind, e.Name, e.Version))}, uuidDelete(e.UUID)...)
	owned, err := s.idx.Query(ctx, store.Query{Partition: ownerPartition(Owner{Kind: kind, ID: id})})
	if err != nil {
		return err
	}
	for _, p := range owned {
		var ptr graphPointer
		if err := decodeItem(p, &ptr); err != nil {
			return err
		}
		ops = append(append(ops, store.Delete(p.Key), store.Delete(graphKey(ptr.GraphID))), uuidDelete(ptr.GraphUUID)...)
	}
	// The entry goes in the first batch: once it is gone its graphs are unreachable
	// even if a later batch of the cascade fails.
	err = s.writeChunks(ctx, ops)
	if errors.Is(err, store.ErrConflict) {
		return errs.Conflictf("%s %d was changed concurrently; retry", kind.title(), id)
	}
	return err
}

// entryGuard returns an op that rewrites an existing entry unchanged, so that
// a write referring to it and a concurrent DeleteEntry cannot both succeed.
func (s *Service) entryGuard(ctx context.Context, kind OwnerKind, id int64) (store.Op, error) {
	it, err := s.idx.Get(ctx, entryKey(kind, id))
	if err != nil {
		return store.Op{}, notFoundIf(err, errs.NotFoundf("%s %d not found", kind.title(), id))
	}
	return store.Update(it.Key, it.Value, it.Revision), nil
}

// ownerGuard checks that the owner exists and returns the ops that keep it
// existing while a graph is written (none for clusters, which live elsewhere).
func (s *Service) ownerGuard(ctx context.Context, o Owner) ([]store.Op, error) {
	if o.Kind == Cluster {
		return nil, s.clusters.Exists(ctx, clusterName(o.ID))
	}
	op, err := s.entryGuard(ctx, o.Kind, o.ID)
	if err != nil {
		return nil, err
	}
	return []store.Op{op}, nil
}

// checkOwner returns an errs.NotFound error unless the owner exists.
func (s *Service) checkOwner(ctx context.Context, o Owner) error {
	_, err := s.ownerGuard(ctx, o)
	return err
}

// ClusterSettings say which release a cluster is built from and which plugins it enables.
type ClusterSettings struct {
	ID int64 `json:"id"`
	// ReleaseID is the cluster's release, or nil.
	ReleaseID *int64 `json:"release_id"`
	// Plugins are the ids of the enabled plugins, ascending; their graphs merge in this order.
	Plugins []int64 `json:"plugins"`
	// MasterIP is the Fuel master's address, which tasks name as {MASTER_IP};
	// empty: each node's deployment data's master_ip.
	MasterIP string `json:"master_ip,omitempty"`
}

// ClusterInput replaces a cluster's settings.
type ClusterInput struct {
	ReleaseID *int64  `json:"release_id"`
	Plugins   []int64 `json:"plugins"`
	MasterIP  string  `json:"master_ip"`
}

// Cluster returns a cluster's settings (no release and no plugins until set).
func (s *Service) Cluster(ctx context.Context, id int64) (ClusterSettings, error) {
	if err := s.clusters.Exists(ctx, clusterName(id)); err != nil {
		return ClusterSettings{}, err
	}
	return s.clusterSettings(ctx, id)
}

func (s *Service) clusterSettings(ctx context.Context, id int64) (ClusterSettings, error) {
	c := ClusterSettings{ID: id, Plugins: []int64{}}
	_, err := store.GetJSON(ctx, s.idx, clusterKey(id), &c)
	if errors.Is(err, store.ErrNotFound) {
		err = nil
	}
	return c, err
}

// SetCluster replaces a cluster's release and enabled plugins; each must exist.
func (s *Service) SetCluster(ctx context.Context, id int64, in ClusterInput) (ClusterSettings, error) {
	if err := s.clusters.Exists(ctx, clusterName(id)); err != nil {
		return ClusterSettings{}, err
	}
	if in.MasterIP != "" {
		if _, err := netip.ParseAddr(in.MasterIP); err != nil {
			return ClusterSettings{}, errs.Invalidf("master_ip: %q is not an IP address", in.MasterIP)
		}
	}
	c := ClusterSettings{ID: id, ReleaseID: in.ReleaseID, Plugins: slices.Clone(in.Plugins), MasterIP: in.MasterIP}
	if c.Plugins == nil {
		c.Plugins = []int64{}
	}
	slices.Sort(c.Plugins)
	// One write holds the settings, the release and every plugin.
	if maxPlugins := store.MaxWriteBatch - 2; len(c.Plugins) > maxPlugins {
		return ClusterSettings{}, errs.Invalidf("plugins: at most %d plugins per cluster", maxPlugins)
	}
	for i := 1; i < len(c.Plugins); i++ {
		if c.Plugins[i] == c.Plugins[i-1] {
			return ClusterSettings{}, errs.Invalidf("plugins: plugin %d is listed twice", c.Plugins[i])
		}
	}
	// Touching each entry in the same atomic write makes a concurrent DeleteEntry
	// (which deletes at the revision it read) fail instead of leaving a dangling reference.
	var ops []store.Op
	guard := func(kind OwnerKind, eid int64) error {
		op, err := s.entryGuard(ctx, kind, eid)
		if err != nil {
			return err
		}
		ops = append(ops, op)
		var e Entry
		if err := decodeItem(store.Item{Key: op.Key, Value: op.Value}, &e); err != nil {
			return err
		}
		return s.checkInfoResource(ctx, id, kind, e)
	}
	if c.ReleaseID != nil {
		if err := guard(Release, *c.ReleaseID); err != nil {
			return ClusterSettings{}, err
		}
	}
	for _, p := range c.Plugins {
		if err := guard(Plugin, p); err != nil {
			return ClusterSettings{}, err
		}
	}
	ops = append(ops, store.Put(clusterKey(id), mustJSON(c)))
	if err := s.idx.Write(ctx, ops...); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return ClusterSettings{}, errs.Conflictf("a release or plugin of cluster %d was removed concurrently; retry", id)
		}
		return ClusterSettings{}, err
	}
	return c, nil
}

// checkInfoResource refuses (400) an entry of a cluster whose
// deployment_info_resource names no resource of the cluster's environment:
// its plans could not read the nodes' deployment data.
func (s *Service) checkInfoResource(ctx context.Context, cluster int64, kind OwnerKind, e Entry) error {
	if e.DeploymentInfoResource == "" {
		return nil // the default is the plan's to find
	}
	err := s.clusters.HasResource(ctx, clusterName(cluster), e.DeploymentInfoResource)
	if errs.Is(err, errs.NotFound) {
		return errs.Invalidf("deployment_info_resource: %s %s names %q, which the environment of cluster %d does not define: %s",
			kind, e.FullName(), e.DeploymentInfoResource, cluster, errs.Message(err))
	}
	return err
}

// clustersUsing returns the clusters built from a release or enabling a plugin.
func (s *Service) clustersUsing(ctx context.Context, o Owner) ([]int64, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: prefix + "cluster"})
	if err != nil {
		return nil, err
	}
	var out []int64
	for _, it := range items {
		var c ClusterSettings
		if err := decodeItem(it, &c); err != nil {
			return nil, err
		}
		if (o.Kind == Release && c.ReleaseID != nil && *c.ReleaseID == o.ID) ||
			(o.Kind == Plugin && slices.Contains(c.Plugins, o.ID)) {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

func joinIDs(ids []int64) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return strings.Join(parts, ", ")
}

// DeleteClusterOps returns the writes that delete a cluster's graphs and
// settings; the environment's deletion makes them in its own atomic write
// (configdb.Service.OnDeleteEnvironment). A cluster that runs a transaction
// cannot go (409): stop the transaction first. Its transaction history stays.
func (s *Service) DeleteClusterOps(ctx context.Context, cluster int64) ([]store.Op, error) {
	if err := s.runningOn(ctx, cluster); err != nil {
		return nil, errs.Conflictf("%s: stop it first (POST /api/v1/transactions/{uuid}/stop)", errs.Message(err))
	}
	// The lock must still be absent when the deletion is written.
	ops := []store.Op{store.Check(lockKey(cluster), store.Cond{Kind: store.MustNotExist}), store.Delete(clusterKey(cluster))}
	owned, err := s.idx.Query(ctx, store.Query{Partition: ownerPartition(Owner{Kind: Cluster, ID: cluster})})
	if err != nil {
		return nil, err
	}
	for _, p := range owned {
		var ptr graphPointer
		if err := decodeItem(p, &ptr); err != nil {
			return nil, err
		}
		ops = append(ops, store.DeleteAt(p.Key, p.Revision), store.Delete(graphKey(ptr.GraphID)))
	}
	return ops, nil
}

// checkSize refuses an entry that, stored as one index item, would be larger
// than the store keeps (a 413 before any write), naming the field that makes
// it so: the larger of roles_metadata and tags_metadata, and its largest entry.
func (in EntryInput) checkSize(kind OwnerKind) error {
	// With the longest id and a UUID, the entry is as large as it can be stored.
	size := len(mustJSON(Entry{ID: math.MaxInt64, UUID: uuid.Nil.String(), Name: in.Name, Version: in.Version, EntryMetadata: in.EntryMetadata}))
	if size <= store.MaxValueSize {
		return nil
	}
	field, members, fieldSize := "roles_metadata", in.RolesMetadata, len(mustJSON(in.RolesMetadata))
	if tags := len(mustJSON(in.TagsMetadata)); tags > fieldSize {
		field, members, fieldSize = "tags_metadata", in.TagsMetadata, tags
	}
	largest := ""
	for name, raw := range members {
		if largest == "" || len(raw) > len(members[largest]) || len(raw) == len(members[largest]) && name < largest {
			largest = name
		}
	}
	return errs.New(errs.TooLarge, "%s: %d bytes (%d entries; the largest, %s.%s, %d bytes): a %s is stored as one item of at most %d bytes; this one would be %d",
		field, fieldSize, len(members), field, largest, len(mustJSON(members[largest])), kind, store.MaxValueSize, size)
}
