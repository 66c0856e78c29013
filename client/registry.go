package client

import (
	"context"
	"encoding/json"
	"net/http"
)

// RegistryEntry is what names a release or a plugin. The methods that read
// entries answer their raw JSON, so that fields beyond these (a release's
// roles_metadata, ...) show as the server sends them.
type RegistryEntry struct {
	// ID is the legacy integer id before microversion 1.2, the UUID from 1.2 on.
	ID ID `json:"id"`
	// UUID is shown separately only before 1.2.
	UUID    string `json:"uuid,omitempty"`
	Name    string `json:"name"`
	Version string `json:"version"`
}

// FullName is how the server names a release or a plugin in messages: name-version.
func (e RegistryEntry) FullName() string { return e.Name + "-" + e.Version }

// Cluster is an environment seen as a deployment cluster: its release and enabled plugins.
type Cluster struct {
	ID        ID   `json:"id"`
	ReleaseID *ID  `json:"release_id"`
	Plugins   []ID `json:"plugins"`
}

// ClusterUpdate sets a cluster's release and plugins (PUT: both are replaced).
type ClusterUpdate struct {
	ReleaseID *ID   `json:"release_id,omitempty"`
	Plugins   *[]ID `json:"plugins,omitempty"`
}

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
