package graphs

import (
	"context"
	"strings"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Releases, plugins and graphs are kept by integer id and carry a UUID from
// creation (spec 004: from microversion 1.2 the API names them by UUID).
// A uuid item maps each UUID to its kind and id. Clusters are ConfigDB
// environments: their UUIDs come from the Clusters interface.

// GraphKind names graphs among the kinds a UUID may belong to.
const GraphKind = "graph"

func uuidKey(u string) store.Key {
	return store.Key{Partition: prefix + "uuid", Sort: strings.ToLower(u)}
}

type identity struct {
	Kind string `json:"kind"`
	ID   int64  `json:"id"`
}

func newEntityUUID() string { return uuid.NewString() }

func uuidAlias(kind string, id int64, u string) store.Op {
	return store.Create(uuidKey(u), mustJSON(identity{Kind: kind, ID: id}))
}

// uuidDelete removes a UUID's item (none for a record from before UUIDs).
func uuidDelete(u string) []store.Op {
	if u == "" {
		return nil
	}
	return []store.Op{store.Delete(uuidKey(u))}
}

// ResolveUUID returns the integer id of the release, plugin or graph (kind:
// "release", "plugin" or GraphKind) with the UUID.
func (s *Service) ResolveUUID(ctx context.Context, kind, u string) (int64, error) {
	var id identity
	_, err := store.GetJSON(ctx, s.idx, uuidKey(u), &id)
	if err == nil && id.Kind != kind {
		err = store.ErrNotFound
	}
	return id.ID, notFoundIf(err, errs.NotFoundf("%s %s not found", OwnerKind(kind).title(), u))
}

// ClusterIdentity is a cluster's integer id and UUID.
type ClusterIdentity struct {
	ID   int64
	UUID string
}

// OwnerUUID returns the UUID of a graph's owner.
func (s *Service) OwnerUUID(ctx context.Context, o Owner) (string, error) {
	if o.Kind == Cluster {
		c, err := s.clusters.Identify(ctx, clusterName(o.ID))
		return c.UUID, err
	}
	e, err := s.Entry(ctx, o.Kind, o.ID)
	return e.UUID, err
}

// IdentifyCluster resolves a cluster given by integer id or UUID.
func (s *Service) IdentifyCluster(ctx context.Context, ref string) (ClusterIdentity, error) {
	return s.clusters.Identify(ctx, ref)
}
