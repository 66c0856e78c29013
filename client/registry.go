package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// The release, plugin and cluster bodies (shared/wire). RegistryEntry is
// what names a release or a plugin; the methods that read entries answer
// their raw JSON, so that fields beyond these show as the server sends them.
// Cluster is an environment seen as a deployment cluster: its release and
// enabled plugins; ClusterUpdate sets both (PUT: both are replaced).
type (
	RegistryEntry = wire.RegistryEntry
	Cluster       = wire.Cluster
	ClusterUpdate = wire.ClusterUpdate
)

func registryPath(owner, ref string) string { return graphsBase + "/" + owner + "/" + esc(ref) }

// RegistryEntries lists the releases or the plugins (owner Releases or Plugins),
// each as the server answers it.
func (c *Client) RegistryEntries(ctx context.Context, owner string) ([]json.RawMessage, error) {
	var out []json.RawMessage
	_, err := c.call(ctx, http.MethodGet, graphsBase+"/"+owner, nil, nil, &out)
	return out, err
}

// RegistryEntry reads a release or a plugin by id or UUID, as the server answers it.
func (c *Client) RegistryEntry(ctx context.Context, owner, ref string) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := c.call(ctx, http.MethodGet, registryPath(owner, ref), nil, nil, &out)
	return out, err
}

// CreateRegistryEntry registers a release or a plugin; body holds at least
// name and version (a release also takes the metadata fields the server knows).
func (c *Client) CreateRegistryEntry(ctx context.Context, owner string, body map[string]any) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := c.call(ctx, http.MethodPost, graphsBase+"/"+owner, nil, body, &out)
	return out, err
}

// UpdateRegistryEntry replaces a release's or a plugin's name, version and
// metadata with body (the whole entry, as create takes it).
func (c *Client) UpdateRegistryEntry(ctx context.Context, owner, ref string, body map[string]any) (json.RawMessage, error) {
	var out json.RawMessage
	_, err := c.call(ctx, http.MethodPut, registryPath(owner, ref), nil, body, &out)
	return out, err
}

// DeleteRegistryEntry deletes a release or a plugin and its graphs.
func (c *Client) DeleteRegistryEntry(ctx context.Context, owner, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, registryPath(owner, ref), nil, nil, nil)
	return err
}

// Cluster reads an environment's release and plugins.
func (c *Client) Cluster(ctx context.Context, ref string) (*Cluster, error) {
	var out Cluster
	_, err := c.call(ctx, http.MethodGet, registryPath(Clusters, ref), nil, nil, &out)
	return &out, err
}

// UpdateCluster sets an environment's release and plugins.
func (c *Client) UpdateCluster(ctx context.Context, ref string, in ClusterUpdate) (*Cluster, error) {
	var out Cluster
	_, err := c.call(ctx, http.MethodPut, registryPath(Clusters, ref), nil, in, &out)
	return &out, err
}
