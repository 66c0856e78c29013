package client

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/overrides"
)

// OverridesRequest applies override data to a Puppet catalog: the data
// given inline (Data), or read from a ConfigDB document (Source).
type OverridesRequest struct {
	// Catalog is a list of resources {type, title, parameters}.
	Catalog json.RawMessage `json:"catalog"`
	// Data is override data with configuration and configuration_options.
	Data   json.RawMessage  `json:"data,omitempty"`
	Source *OverridesSource `json:"source,omitempty"`
	// KnownTypes are the resource types that exist (spec 001's unknown-type check); nil skips it.
	KnownTypes []string `json:"known_types"`
}

// OverridesSource names the ConfigDB document that holds the override data.
type OverridesSource struct {
	Env string `json:"env"`
	// Levels is the level path "name/value/...", each segment URL-escaped.
	Levels   string `json:"levels"`
	Resource string `json:"resource"`
}

// OverridesResult is the overridden catalog and the report of what changed.
type OverridesResult = overrides.Result

// ApplyOverrides applies override data to a catalog; it stores nothing.
func (c *Client) ApplyOverrides(ctx context.Context, in OverridesRequest) (*OverridesResult, error) {
	var out OverridesResult
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/overrides/apply", nil, in, &out)
	return &out, err
}
