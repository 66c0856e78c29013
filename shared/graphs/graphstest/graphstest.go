// Package graphstest holds test helpers for the graphs domain.
package graphstest

import (
	"context"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Clusters is a fixed, in-memory graphs.Clusters: cluster id -> node ids.
type Clusters map[string][]string

// Exists implements graphs.Clusters.
func (c Clusters) Exists(_ context.Context, id string) error {
	if _, ok := c[id]; !ok {
		return errs.NotFoundf("Cluster %s not found", id)
	}
	return nil
}

// Nodes implements graphs.Clusters.
func (c Clusters) Nodes(ctx context.Context, id string) ([]string, error) {
	if err := c.Exists(ctx, id); err != nil {
		return nil, err
	}
	return slices.Clone(c[id]), nil
}
