package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// ConfigPrefix is the path of the ConfigDB group.
const ConfigPrefix = "/api/v1/config"

// The ConfigDB's entity bodies (shared/wire).
type (
	Component                = wire.Component
	ResourceDefinition       = wire.ResourceDefinition
	Environment              = wire.Environment
	Level                    = wire.Level
	NewComponent             = wire.NewComponent
	NewResourceDefinition    = wire.NewResourceDefinition
	ComponentUpdate          = wire.ComponentUpdate
	IDObject                 = wire.IDObject
	ResourceDefinitionUpdate = wire.ResourceDefinitionUpdate
	NewEnvironment           = wire.NewEnvironment
	EnvironmentUpdate        = wire.EnvironmentUpdate
)

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
