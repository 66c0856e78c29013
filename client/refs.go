package client

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Kind is a kind of entity Ref and Resolve find by any of its names.
type Kind string

// The kinds Ref resolves. Resource definitions and deploy templates need no
// resolving: the server takes their names at every microversion.
const (
	KindNode        Kind = "node"
	KindEnvironment Kind = "environment"
	KindComponent   Kind = "component"
	KindRelease     Kind = "release"
	KindPlugin      Kind = "plugin"
)

// Identity is an entity's two ids: the legacy integer id and the UUID.
type Identity struct{ ID, UUID string }

// UUIDIdentities reports whether c's microversion names entities by UUID
// (spec 004): 1.2 and later, "latest" included, by the server's own rule.
// Before 1.2 the server takes either form in requests.
func (c *Client) UUIDIdentities() bool {
	v := wire.MinVersion
	if c.version != "" {
		var err error
		if v, err = wire.ParseVersion(c.version); err != nil {
			return false // the server refuses the version (406) before any id is read
		}
	}
	return v.AtLeast(wire.V1_2)
}

// Ref returns the reference to the entity of kind named by ref (an id, a UUID,
// or a name: a node's FQDN, a component's name, a release's or plugin's
// name-version or name) in
// the form c's microversion takes in paths and bodies: the UUID from 1.2 on,
// the legacy integer id before. A ref already in that form is returned
// without a request.
func (c *Client) Ref(ctx context.Context, kind Kind, ref string) (string, error) {
	uuids := c.UUIDIdentities()
	if ident.IsUUID(ref) || !uuids && ident.IsIntegerID(ref) {
		return ref, nil
	}
	id, err := c.Resolve(ctx, kind, ref)
	if err != nil {
		return "", err
	}
	if uuids {
		return id.UUID, nil
	}
	return id.ID, nil
}

// Resolve finds both ids of the entity of kind that ref names (an id, a UUID
// or a name, as for Ref). It asks at the base microversion, whose answers
// carry both.
func (c *Client) Resolve(ctx context.Context, kind Kind, ref string) (Identity, error) {
	base := c.At("")
	byID := ident.IsUUID(ref) || ident.IsIntegerID(ref)
	switch kind {
	case KindNode:
		var n *Node
		var err error
		if byID {
			n, err = base.Node(ctx, ref)
		} else {
			n, err = base.NodeByFQDN(ctx, ref)
		}
		if err != nil {
			return Identity{}, err
		}
		return Identity{ID: string(n.ID), UUID: n.UUID}, nil
	case KindEnvironment:
		e, err := base.Environment(ctx, ref)
		if err != nil {
			return Identity{}, fmt.Errorf("environment %s: %w", ref, err)
		}
		return Identity{ID: string(e.ID), UUID: e.UUID}, nil
	case KindComponent:
		comp, err := base.Component(ctx, ref)
		if err != nil {
			return Identity{}, fmt.Errorf("component %s: %w", ref, err)
		}
		return Identity{ID: string(comp.ID), UUID: comp.UUID}, nil
	case KindRelease:
		return base.resolveEntry(ctx, Releases, ref, byID)
	case KindPlugin:
		return base.resolveEntry(ctx, Plugins, ref, byID)
	}
	return Identity{}, fmt.Errorf("resolve %s %s: %w: unknown kind", kind, ref, ErrInvalid)
}

// resolveEntry finds a release or a plugin by id, UUID, name-version or, when
// only one version is registered, name.
func (c *Client) resolveEntry(ctx context.Context, owner, ref string, byID bool) (Identity, error) {
	what := strings.TrimSuffix(owner, "s")
	if byID {
		raw, err := c.RegistryEntry(ctx, owner, ref)
		if err != nil {
			return Identity{}, fmt.Errorf("%s %s: %w", what, ref, err)
		}
		var e RegistryEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return Identity{}, fmt.Errorf("%s %s: unexpected answer: %w", what, ref, err)
		}
		return Identity{ID: string(e.ID), UUID: e.UUID}, nil
	}
	raws, err := c.RegistryEntries(ctx, owner)
	if err != nil {
		return Identity{}, fmt.Errorf("look up %s %s: %w", what, ref, err)
	}
	var named []RegistryEntry
	for _, raw := range raws {
		var e RegistryEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return Identity{}, fmt.Errorf("look up %s %s: unexpected answer: %w", what, ref, err)
		}
		if e.FullName() == ref {
			return Identity{ID: string(e.ID), UUID: e.UUID}, nil
		}
		if e.Name == ref {
			named = append(named, e)
		}
	}
	switch len(named) {
	case 0:
		return Identity{}, fmt.Errorf("no %s is named %s: %w", what, ref, ErrNotFound)
	case 1:
		return Identity{ID: string(named[0].ID), UUID: named[0].UUID}, nil
	}
	versions := make([]string, len(named))
	for i, e := range named {
		versions[i] = e.FullName()
	}
	return Identity{}, fmt.Errorf("%s %s names %d versions (%s): give one as name-version: %w", what, ref, len(named), strings.Join(versions, ", "), ErrInvalid)
}
