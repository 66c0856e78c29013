// Package graphstest holds test helpers for the graphs domain.
package graphstest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Clusters is a fixed, in-memory graphs.Clusters: cluster id -> nodes.
type Clusters map[string][]planner.ClusterNode

// Nodes returns nodes without roles, by id.
func Nodes(ids ...string) []planner.ClusterNode {
	out := make([]planner.ClusterNode, len(ids))
	for i, id := range ids {
		out[i] = planner.ClusterNode{ID: id}
	}
	return out
}

// Exists implements graphs.Clusters.
func (c Clusters) Exists(_ context.Context, id string) error {
	if _, ok := c[id]; !ok {
		return errs.NotFoundf("Cluster %s not found", id)
	}
	return nil
}

// HasResource implements graphs.Clusters: these clusters define no resource.
func (c Clusters) HasResource(ctx context.Context, id, resource string) error {
	if err := c.Exists(ctx, id); err != nil {
		return err
	}
	return errs.NotFoundf("resource %s not found in cluster %s", resource, id)
}

// Nodes implements graphs.Clusters.
func (c Clusters) Nodes(ctx context.Context, id string) ([]planner.ClusterNode, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	return slices.Clone(c[id]), nil
}

// UUID is the UUID Identify gives the cluster with the id.
func UUID(id string) string { return uuid.NewSHA1(uuid.NameSpaceOID, []byte("cluster/"+id)).String() }

// Identify implements graphs.Clusters: a cluster by id or by its UUID.
func (c Clusters) Identify(_ context.Context, ref string) (graphs.ClusterIdentity, error) {
	for id := range c {
		if id == ref || UUID(id) == ref {
			n, err := strconv.ParseInt(id, 10, 64)
			return graphs.ClusterIdentity{ID: n, UUID: UUID(id)}, err
		}
	}
	return graphs.ClusterIdentity{}, errs.NotFoundf("Cluster %s not found", ref)
}

// NodeData implements graphs.Clusters: these clusters hold no deployment data.
func (c Clusters) NodeData(ctx context.Context, id, resource string, _ []string, _ time.Time) (map[string]graphs.NodeDocument, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	return nil, errs.NotFoundf("resource %s not found in cluster %s", resource, id)
}

// NodeParts implements graphs.Clusters: these clusters hold no deployment data.
func (c Clusters) NodeParts(ctx context.Context, id, resource string, _ []string, _ time.Time) (map[string]graphs.NodeParts, error) {
	_, err := c.NodeData(ctx, id, resource, nil, time.Time{})
	return nil, err
}

// KeyOrigin implements graphs.Clusters: these clusters hold no deployment data.
func (c Clusters) KeyOrigin(ctx context.Context, id, resource, _, key string, _ time.Time) (wire.KeyOrigin, error) {
	if err := c.Exists(ctx, id); err != nil {
		return wire.KeyOrigin{}, err
	}
	return wire.KeyOrigin{}, errs.Conflictf("key %s of resource %s has no value in cluster %s", key, resource, id)
}

// Clock is a fake clock for graphs.WithClock: it stands still until Advance.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at a fixed instant.
func NewClock() *Clock { return &Clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock on by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// EmptyData are clusters whose nodes each have an empty deployment data
// document ({}) in every resource: conditions evaluate on {}.
type EmptyData struct{ Clusters }

// HasResource implements graphs.Clusters: every resource is defined.
func (c EmptyData) HasResource(ctx context.Context, id, _ string) error { return c.Exists(ctx, id) }

// NodeData implements graphs.Clusters: {} for each node asked for.
func (c EmptyData) NodeData(ctx context.Context, id, _ string, nodes []string, _ time.Time) (map[string]graphs.NodeDocument, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	out := make(map[string]graphs.NodeDocument, len(nodes))
	for _, n := range nodes {
		out[n] = graphs.NodeDocument{Body: []byte("{}"), ETag: `"empty"`}
	}
	return out, nil
}

// NodeParts implements graphs.Clusters: {} as each node's own and common parts.
func (c EmptyData) NodeParts(ctx context.Context, id, _ string, nodes []string, _ time.Time) (map[string]graphs.NodeParts, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	out := make(map[string]graphs.NodeParts, len(nodes))
	for _, n := range nodes {
		out[n] = graphs.NodeParts{Own: []byte("{}"), Common: []byte("{}")}
	}
	return out, nil
}
