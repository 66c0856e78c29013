package client

import (
	"context"
	"net/http"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// The bodies of Puppet resource overrides (shared/wire): OverridesRequest
// applies override data, given inline or read from a ConfigDB document
// (OverridesSource), to a catalog; OverridesResult is the overridden catalog
// and the report of what changed.
type (
	OverridesRequest = wire.OverridesRequest
	OverridesSource  = wire.OverridesSource
	OverridesResult  = wire.OverridesResult
)

// ApplyOverrides applies override data to a catalog; it stores nothing.
func (c *Client) ApplyOverrides(ctx context.Context, in OverridesRequest) (*OverridesResult, error) {
	var out OverridesResult
	_, err := c.call(ctx, http.MethodPost, ConfigPrefix+"/overrides/apply", nil, in, &out)
	return &out, err
}
