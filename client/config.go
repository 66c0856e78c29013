package client

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"time"
)

// ConfigPrefix is the path of the ConfigDB group.
const ConfigPrefix = "/api/v1/config"

// Component is a group of resource definitions.
type Component struct {
	ID ID `json:"id"`
	// UUID is shown separately only before microversion 1.2.
	UUID                string               `json:"uuid,omitempty"`
	Name                string               `json:"name"`
	ResourceDefinitions []ResourceDefinition `json:"resource_definitions"`
	CreatedAt           time.Time            `json:"created_at"`
	UpdatedAt           time.Time            `json:"updated_at"`
}

// ResourceDefinition is a data source: the documents of one name.
type ResourceDefinition struct {
	ID          ID              `json:"id"`
	UUID        string          `json:"uuid,omitempty"`
	Name        string          `json:"name"`
	ComponentID *ID             `json:"component_id"`
	Content     json.RawMessage `json:"content"`
}

// Environment is a set of components and the hierarchy levels their documents are stored at.
type Environment struct {
	ID              ID       `json:"id"`
	UUID            string   `json:"uuid,omitempty"`
	Components      []ID     `json:"components"`
	HierarchyLevels []string `json:"hierarchy_levels"`
}

// Level is one hierarchy level of an environment and the values documents are stored under.
type Level struct {
	ID            ID       `json:"id"`
	UUID          string   `json:"uuid,omitempty"`
	Name          string   `json:"name"`
	EnvironmentID ID       `json:"environment_id"`
	Parent        *ID      `json:"parent"`
	Values        []string `json:"values"`
}

// NewComponent creates a component with new resource definitions in it.
type NewComponent struct {
	Name                string                  `json:"name"`
	ResourceDefinitions []NewResourceDefinition `json:"resource_definitions"`
}

// NewResourceDefinition is a resource definition to create.
type NewResourceDefinition struct {
	Name string `json:"name"`
	// ComponentID attaches it to a component (id or name); nil leaves it on its own.
	ComponentID *ID             `json:"component_id,omitempty"`
	Content     json.RawMessage `json:"content,omitempty"`
}

// ComponentUpdate renames a component or sets exactly which resource definitions it has; nil fields stay.
type ComponentUpdate struct {
	Name                *string     `json:"name,omitempty"`
	ResourceDefinitions *[]IDObject `json:"resource_definitions,omitempty"`
}

// IDObject is a reference written as {"id": ...}.
type IDObject struct {
	ID ID `json:"id"`
}

// ResourceDefinitionUpdate changes a resource definition; nil fields stay.
// ComponentID "" detaches it from its component.
type ResourceDefinitionUpdate struct {
	Name        *string         `json:"name,omitempty"`
	ComponentID *ID             `json:"component_id,omitempty"`
	Content     json.RawMessage `json:"content,omitempty"`
}

// NewEnvironment creates an environment; ID 0 lets the server choose.
type NewEnvironment struct {
	ID              int64    `json:"id,omitempty"`
	Components      []ID     `json:"components"`
	HierarchyLevels []string `json:"hierarchy_levels"`
}

// EnvironmentUpdate sets an environment's components or levels; nil fields stay.
type EnvironmentUpdate struct {
	Components      *[]ID     `json:"components,omitempty"`
	HierarchyLevels *[]string `json:"hierarchy_levels,omitempty"`
}

func componentPath(ref string) string   { return ConfigPrefix + "/components/" + esc(ref) }
func definitionPath(ref string) string  { return ConfigPrefix + "/resource_definitions/" + esc(ref) }
func environmentPath(ref string) string { return ConfigPrefix + "/environments/" + esc(ref) }

// Components lists the components.
func (c *Client) Components(ctx context.Context) ([]Component, error) {
	var out []Component
	_, err := c.call(ctx, http.MethodGet, ConfigPrefix+"/components", nil, nil, &out)
	return out, err
}

// Component reads a component by id, UUID or name.
func (c *Client) Component(ctx context.Context, ref string) (*Component, error) {
	var out Component
	_, err := c.call(ctx, http.MethodGet, componentPath(ref), nil, nil, &out)
	return &out, err
}

// CreateComponent creates a component.
func (c *Client) CreateComponent(ctx context.Context, in NewComponent) (*Component, error) {
	var out Component
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/components", nil, in, &out)
	return &out, err
}

// UpdateComponent changes a component.
func (c *Client) UpdateComponent(ctx context.Context, ref string, in ComponentUpdate) error {
	_, err := c.call(ctx, http.MethodPatch, componentPath(ref), nil, in, nil)
	return err
}

// DeleteComponent deletes a component and its resource definitions.
func (c *Client) DeleteComponent(ctx context.Context, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, componentPath(ref), nil, nil, nil)
	return err
}

// ResourceDefinitions lists resource definitions; with component set (a
// pointer to "" for none) only those of that component.
func (c *Client) ResourceDefinitions(ctx context.Context, component *string) ([]ResourceDefinition, error) {
	var q url.Values
	if component != nil {
		q = url.Values{"component_id": {*component}}
	}
	var out []ResourceDefinition
	_, err := c.call(ctx, http.MethodGet, ConfigPrefix+"/resource_definitions", q, nil, &out)
	return out, err
}

// ResourceDefinition reads a resource definition by id, UUID or name.
func (c *Client) ResourceDefinition(ctx context.Context, ref string) (*ResourceDefinition, error) {
	var out ResourceDefinition
	_, err := c.call(ctx, http.MethodGet, definitionPath(ref), nil, nil, &out)
	return &out, err
}

// CreateResourceDefinition creates a resource definition.
func (c *Client) CreateResourceDefinition(ctx context.Context, in NewResourceDefinition) (*ResourceDefinition, error) {
	var out ResourceDefinition
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/resource_definitions", nil, in, &out)
	return &out, err
}

// UpdateResourceDefinition changes a resource definition.
func (c *Client) UpdateResourceDefinition(ctx context.Context, ref string, in ResourceDefinitionUpdate) error {
	_, err := c.call(ctx, http.MethodPatch, definitionPath(ref), nil, in, nil)
	return err
}

// DeleteResourceDefinition deletes a resource definition.
func (c *Client) DeleteResourceDefinition(ctx context.Context, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, definitionPath(ref), nil, nil, nil)
	return err
}

// Environments lists the environments.
func (c *Client) Environments(ctx context.Context) ([]Environment, error) {
	var out []Environment
	_, err := c.call(ctx, http.MethodGet, ConfigPrefix+"/environments", nil, nil, &out)
	return out, err
}

// Environment reads an environment by id or UUID.
func (c *Client) Environment(ctx context.Context, ref string) (*Environment, error) {
	var out Environment
	_, err := c.call(ctx, http.MethodGet, environmentPath(ref), nil, nil, &out)
	return &out, err
}

// CreateEnvironment creates an environment.
func (c *Client) CreateEnvironment(ctx context.Context, in NewEnvironment) (*Environment, error) {
	var out Environment
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/environments", nil, in, &out)
	return &out, err
}

// UpdateEnvironment changes an environment.
func (c *Client) UpdateEnvironment(ctx context.Context, ref string, in EnvironmentUpdate) error {
	_, err := c.call(ctx, http.MethodPatch, environmentPath(ref), nil, in, nil)
	return err
}

// DeleteEnvironment deletes an environment and its documents.
func (c *Client) DeleteEnvironment(ctx context.Context, ref string) error {
	_, err := c.call(ctx, http.MethodDelete, environmentPath(ref), nil, nil, nil)
	return err
}

// Levels lists an environment's hierarchy levels, least specific first.
func (c *Client) Levels(ctx context.Context, env string) ([]Level, error) {
	var out []Level
	_, err := c.call(ctx, http.MethodGet, environmentPath(env)+"/hierarchy_levels", nil, nil, &out)
	return out, err
}

// Level reads one hierarchy level by name or id.
func (c *Client) Level(ctx context.Context, env, level string) (*Level, error) {
	var out Level
	_, err := c.call(ctx, http.MethodGet, environmentPath(env)+"/hierarchy_levels/"+esc(level), nil, nil, &out)
	return &out, err
}
