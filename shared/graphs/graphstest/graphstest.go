// Package graphstest holds test helpers for the graphs domain.
package graphstest

import (
	"context"
	"slices"
	"sync"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Clusters is an in-memory graphs.Clusters: cluster id -> node ids.
type Clusters struct {
	mu    sync.Mutex
	nodes map[string][]string
}

// NewClusters returns clusters with the given nodes.
func NewClusters(nodes map[string][]string) *Clusters {
	c := &Clusters{nodes: map[string][]string{}}
	for id, n := range nodes {
		c.Set(id, n...)
	}
	return c
}

// Set creates or replaces a cluster.
func (c *Clusters) Set(id string, nodes ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.nodes[id] = slices.Clone(nodes)
}

// Exists implements graphs.Clusters.
func (c *Clusters) Exists(_ context.Context, id string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.nodes[id]; !ok {
		return errs.NotFoundf("Cluster %s not found", id)
	}
	return nil
}

// Nodes implements graphs.Clusters.
func (c *Clusters) Nodes(ctx context.Context, id string) ([]string, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.nodes[id]), nil
}
