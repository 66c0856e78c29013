package configapi

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/ident"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// ids is the one place microversion 1.2 (UUID identities) is applied: from 1.2
// on, every "id" in a response is the entity's UUID and ids in paths must be
// UUIDs; before it, "id" is the legacy integer (the UUID is shown as "uuid") and
// paths take either.
type ids struct{ uuids bool }

func idsFor(r *http.Request) ids { return ids{uuids: httpapi.RequestVersion(r).AtLeast(httpapi.V1_2)} }

// of renders an identity as the "id" value.
func (v ids) of(i configdb.Ident) wire.ID { return wire.IDOf(v.uuids, i.ID, i.UUID) }

// extra is the separate "uuid" field, shown only before 1.2.
func (v ids) extra(i configdb.Ident) string { return wire.UUIDBeside(v.uuids, i.UUID) }

func (v ids) ofPtr(i *configdb.Ident) *wire.ID {
	if i == nil {
		return nil
	}
	id := v.of(*i)
	return &id
}

// pathRef checks an entity reference taken from the URL. From 1.2 on an id must
// be a UUID ("Invalid uuid X", checked before any lookup); names stay allowed
// where the entity has one (names never look like integers or UUIDs).
func (v ids) pathRef(ref string, namesAllowed bool) error {
	if !v.uuids || ident.IsUUID(ref) || (namesAllowed && !ident.IsIntegerID(ref)) {
		return nil
	}
	return errs.Invalidf("Invalid uuid %s", ref)
}

func (v ids) component(c configdb.Component) wire.Component {
	defs := make([]wire.ResourceDefinition, len(c.ResourceDefinitions))
	for i, d := range c.ResourceDefinitions {
		defs[i] = v.definition(d)
	}
	return wire.Component{ID: v.of(c.Ident), UUID: v.extra(c.Ident), Name: c.Name, ResourceDefinitions: defs, CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt}
}

func (v ids) definition(d configdb.ResourceDefinition) wire.ResourceDefinition {
	return wire.ResourceDefinition{ID: v.of(d.Ident), UUID: v.extra(d.Ident), Name: d.Name, ComponentID: v.ofPtr(d.Component), Content: d.Content}
}

func (v ids) environment(e configdb.Environment) wire.Environment {
	view := wire.Environment{ID: v.of(e.Ident), UUID: v.extra(e.Ident), Components: make([]wire.ID, len(e.Components)), HierarchyLevels: make([]string, len(e.Levels))}
	for i, c := range e.Components {
		view.Components[i] = v.of(c)
	}
	for i, l := range e.Levels {
		view.HierarchyLevels[i] = l.Name
	}
	return view
}

func (v ids) level(l configdb.HierarchyLevel) wire.Level {
	return wire.Level{ID: v.of(l.Ident), UUID: v.extra(l.Ident), Name: l.Name, EnvironmentID: v.of(l.Environment), Parent: v.ofPtr(l.Parent), Values: l.Values}
}

// bodyRef turns a reference from a request body into a reference string: a
// positive integer id, or a string (UUID or name). From 1.2 on an id must be a
// UUID there too, as in paths; names stay allowed where the entity has one.
func (v ids) bodyRef(field string, raw json.RawMessage, namesAllowed bool) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", errs.Invalidf("field %q: expected an id, a UUID or a name, got null", field)
	}
	ref := s
	if s[0] == '"' {
		if err := json.Unmarshal(raw, &ref); err != nil || ref == "" {
			return "", errs.Invalidf("field %q: expected an id, a UUID or a name", field)
		}
	} else if id, err := strconv.ParseInt(s, 10, 64); err != nil || id <= 0 {
		return "", errs.Invalidf("field %q: expected a positive integer id, a UUID or a name, got %s", field, s)
	}
	if err := v.pathRef(ref, namesAllowed); err != nil {
		return "", errs.Invalidf("field %q: %v", field, err)
	}
	return ref, nil
}

func (v ids) bodyRefs(field string, raws []json.RawMessage, namesAllowed bool) ([]string, error) {
	refs := make([]string, len(raws))
	for i, raw := range raws {
		var err error
		if refs[i], err = v.bodyRef(field, raw, namesAllowed); err != nil {
			return nil, err
		}
	}
	return refs, nil
}
