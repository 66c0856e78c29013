package configdb

import (
	"context"
	"encoding/json"
	"errors"
	"slices"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NewComponent is a component to create, with the definitions created along with it.
type NewComponent struct {
	Name                string
	ResourceDefinitions []NewResourceDefinition
}

// ComponentUpdate is a partial update of a component; nil fields are left as they are.
type ComponentUpdate struct {
	Name *string
	// ResourceDefinitions, when set, are the references (ids or UUIDs) of exactly the
	// definitions the component has afterwards: others are attached, missing ones detached.
	ResourceDefinitions *[]string
}

// opsPerEntity is what creating an entity writes: the item, its name item and its UUID alias.
const opsPerEntity = 3

// maxNestedDefinitions keeps a component create within one atomic write.
const maxNestedDefinitions = store.MaxWriteBatch/opsPerEntity - 1

// CreateComponent creates a component and its nested resource definitions atomically.
// A duplicate component name, or two nested definitions with one name, is a conflict (409).
func (s *Service) CreateComponent(ctx context.Context, in NewComponent) (Component, error) {
	if err := validName("component name", in.Name); err != nil {
		return Component{}, err
	}
	if len(in.ResourceDefinitions) > maxNestedDefinitions {
		return Component{}, errs.Invalidf("a component is created with at most %d resource definitions; add more with POST resource_definitions", maxNestedDefinitions)
	}
	contents := make([]json.RawMessage, len(in.ResourceDefinitions))
	seen := make(map[string]bool)
	for i, d := range in.ResourceDefinitions {
		if err := validName("resource definition name", d.Name); err != nil {
			return Component{}, err
		}
		if seen[d.Name] {
			return Component{}, errs.Conflictf("resource definition %q is given twice", d.Name)
		}
		seen[d.Name] = true
		var err error
		if contents[i], err = s.checkContent(d.Content); err != nil {
			return Component{}, err
		}
	}
	id, err := s.newIdent(ctx, kindComponent)
	if err != nil {
		return Component{}, err
	}
	now := s.now().UTC()
	rec := componentRecord{ID: id.ID, UUID: id.UUID, Name: in.Name, CreatedAt: now, UpdatedAt: now}
	comp := Component{Ident: id, Name: in.Name, CreatedAt: now, UpdatedAt: now, ResourceDefinitions: []ResourceDefinition{}}
	ops := []store.Op{
		store.Create(componentKey(id.ID), mustJSON(rec)),
		store.Create(componentNameKey(in.Name), mustJSON(aliasRecord{ID: id.ID})),
		uuidAlias(kindComponent, id),
	}
	for i, d := range in.ResourceDefinitions {
		did, err := s.newIdent(ctx, kindResdef)
		if err != nil {
			return Component{}, err
		}
		def := resdefRecord{ID: did.ID, UUID: did.UUID, Name: d.Name, Component: &id, Content: contents[i]}
		ops = append(ops,
			store.Create(resdefKey(did.ID), mustJSON(def)),
			store.Create(resdefNameKey(&id, d.Name), mustJSON(aliasRecord{ID: did.ID})),
			uuidAlias(kindResdef, did))
		comp.ResourceDefinitions = append(comp.ResourceDefinitions, def.definition())
	}
	err = store.RetryConflicts(ctx, "create component", func() error {
		if err := s.mustBeFree(ctx, componentNameKey(in.Name), "component %q already exists", in.Name); err != nil {
			return err
		}
		return s.idx.Write(ctx, ops...)
	})
	if err != nil {
		return Component{}, err
	}
	return comp, nil
}

// mustBeFree answers a conflict with the given message when the item at k exists.
func (s *Service) mustBeFree(ctx context.Context, k store.Key, format string, args ...any) error {
	_, err := s.idx.Get(ctx, k)
	switch {
	case err == nil:
		return errs.Conflictf(format, args...)
	case errors.Is(err, store.ErrNotFound):
		return nil
	default:
		return err
	}
}

// ListComponents returns every component with its definitions, sorted by id.
func (s *Service) ListComponents(ctx context.Context) ([]Component, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: pComponent})
	if err != nil {
		return nil, err
	}
	defs, err := s.ListResourceDefinitions(ctx, nil)
	if err != nil {
		return nil, err
	}
	byComponent := make(map[int64][]ResourceDefinition)
	for _, d := range defs {
		if d.Component != nil {
			byComponent[d.Component.ID] = append(byComponent[d.Component.ID], d)
		}
	}
	comps := make([]Component, 0, len(items))
	for _, it := range items {
		var rec componentRecord
		if err := json.Unmarshal(it.Value, &rec); err != nil {
			return nil, err
		}
		comps = append(comps, rec.component(orEmpty(byComponent[rec.ID])))
	}
	return comps, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func (r componentRecord) component(defs []ResourceDefinition) Component {
	return Component{Ident: r.ident(), Name: r.Name, CreatedAt: r.CreatedAt, UpdatedAt: r.UpdatedAt, ResourceDefinitions: defs}
}

// GetComponent returns the component ref names (id, UUID or name) with its definitions.
func (s *Service) GetComponent(ctx context.Context, ref string) (Component, error) {
	rec, _, err := s.componentByRef(ctx, ref)
	if err != nil {
		return Component{}, err
	}
	defs, err := s.componentDefinitions(ctx, ptr(rec.ident()))
	if err != nil {
		return Component{}, err
	}
	out := make([]ResourceDefinition, len(defs))
	for i, d := range defs {
		out[i] = d.rec.definition()
	}
	return rec.component(out), nil
}

func ptr[T any](v T) *T { return &v }

// componentByRef resolves a component reference: an id, a UUID or a name.
func (s *Service) componentByRef(ctx context.Context, refStr string) (componentRecord, int64, error) {
	r := parseRef(refStr)
	id := r.id
	var err error
	switch r.kind {
	case byUUID:
		id, err = s.resolveUUID(ctx, kindComponent, r.uuid)
	case byName:
		var a aliasRecord
		a, _, err = getRecord[aliasRecord](ctx, s.idx, componentNameKey(r.name))
		id = a.ID
	}
	if err != nil {
		return componentRecord{}, 0, notFound(err, "component %s not found", refStr)
	}
	rec, rev, err := getRecord[componentRecord](ctx, s.idx, componentKey(id))
	if err != nil {
		return componentRecord{}, 0, notFound(err, "component %s not found", refStr)
	}
	return rec, rev, nil
}

// storedResdef is a definition with the revisions of its item and of its name item.
type storedResdef struct {
	rec     resdefRecord
	rev     int64
	nameRev int64
}

// componentDefinitions lists the definitions attached to component (nil: to none), sorted by id.
func (s *Service) componentDefinitions(ctx context.Context, component *Ident) ([]storedResdef, error) {
	names, err := s.idx.Query(ctx, store.Query{Partition: resdefNamePartition(component)})
	if err != nil {
		return nil, err
	}
	keys := make([]store.Key, len(names))
	nameRevs := make(map[int64]int64, len(names))
	for i, it := range names {
		var a aliasRecord
		if err := json.Unmarshal(it.Value, &a); err != nil {
			return nil, err
		}
		keys[i] = resdefKey(a.ID)
		nameRevs[a.ID] = it.Revision
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	defs := make([]storedResdef, 0, len(items))
	for _, it := range items {
		var rec resdefRecord
		if err := json.Unmarshal(it.Value, &rec); err != nil {
			return nil, err
		}
		defs = append(defs, storedResdef{rec: rec, rev: it.Revision, nameRev: nameRevs[rec.ID]})
	}
	slices.SortFunc(defs, func(a, b storedResdef) int { return compareInt(a.rec.ID, b.rec.ID) })
	return defs, nil
}

func compareInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// UpdateComponent renames a component and/or sets exactly which definitions it has.
func (s *Service) UpdateComponent(ctx context.Context, ref string, upd ComponentUpdate) error {
	if upd.Name != nil {
		if err := validName("component name", *upd.Name); err != nil {
			return err
		}
	}
	return store.RetryConflicts(ctx, "update component", func() error {
		rec, rev, err := s.componentByRef(ctx, ref)
		if err != nil {
			return err
		}
		var ops []store.Op
		if upd.Name != nil && *upd.Name != rec.Name {
			if err := s.mustBeFree(ctx, componentNameKey(*upd.Name), "component %q already exists", *upd.Name); err != nil {
				return err
			}
			ops = append(ops, store.Delete(componentNameKey(rec.Name)),
				store.Create(componentNameKey(*upd.Name), mustJSON(aliasRecord{ID: rec.ID})))
			rec.Name = *upd.Name
		}
		if upd.ResourceDefinitions != nil {
			moves, err := s.attachExactly(ctx, rec.ident(), *upd.ResourceDefinitions)
			if err != nil {
				return err
			}
			ops = append(ops, moves...)
		}
		rec.UpdatedAt = s.now().UTC()
		ops = append(ops, store.Update(componentKey(rec.ID), mustJSON(rec), rev))
		if len(ops) > store.MaxWriteBatch {
			return errs.Invalidf("too many resource definitions change at once; at most %d", maxNestedDefinitions)
		}
		return s.idx.Write(ctx, ops...)
	})
}

// attachExactly returns the ops that make refs exactly the definitions of component:
// listed ones move to it (from another component or from none), unlisted ones are detached.
func (s *Service) attachExactly(ctx context.Context, component Ident, refs []string) ([]store.Op, error) {
	current, err := s.componentDefinitions(ctx, &component)
	if err != nil {
		return nil, err
	}
	wanted := make(map[int64]storedResdef)
	names := make(map[string]int64)
	for _, r := range refs {
		d, err := s.resdefByRef(ctx, r)
		if err != nil {
			return nil, err
		}
		if other, dup := names[d.rec.Name]; dup && other != d.rec.ID {
			return nil, errs.Conflictf("two resource definitions named %q cannot belong to one component", d.rec.Name)
		}
		names[d.rec.Name] = d.rec.ID
		wanted[d.rec.ID] = d
	}
	var ops []store.Op
	// Name items of this component: keep, re-point (Update at its revision) or delete.
	currentNames := make(map[string]storedResdef)
	for _, d := range current {
		currentNames[d.rec.Name] = d
		if _, keep := wanted[d.rec.ID]; keep {
			continue
		}
		if id, taken := names[d.rec.Name]; taken {
			ops = append(ops, store.Update(resdefNameKey(&component, d.rec.Name), mustJSON(aliasRecord{ID: id}), d.nameRev))
		} else {
			ops = append(ops, store.DeleteAt(resdefNameKey(&component, d.rec.Name), d.nameRev))
		}
		if err := s.mustBeFree(ctx, resdefNameKey(nil, d.rec.Name), "a resource definition named %q already exists outside any component", d.rec.Name); err != nil {
			return nil, err
		}
		d.rec.Component = nil
		ops = append(ops, store.Update(resdefKey(d.rec.ID), mustJSON(d.rec), d.rev),
			store.Create(resdefNameKey(nil, d.rec.Name), mustJSON(aliasRecord{ID: d.rec.ID})))
	}
	for _, d := range wanted {
		if d.rec.Component != nil && d.rec.Component.ID == component.ID {
			continue
		}
		ops = append(ops, store.DeleteAt(resdefNameKey(d.rec.Component, d.rec.Name), d.nameRev))
		if _, replaced := currentNames[d.rec.Name]; !replaced {
			ops = append(ops, store.Create(resdefNameKey(&component, d.rec.Name), mustJSON(aliasRecord{ID: d.rec.ID})))
		}
		d.rec.Component = &component
		ops = append(ops, store.Update(resdefKey(d.rec.ID), mustJSON(d.rec), d.rev))
	}
	return ops, nil
}

// DeleteComponent deletes a component and every definition attached to it.
// Documents stored for those definitions stay unreachable: ids are never reused.
func (s *Service) DeleteComponent(ctx context.Context, ref string) error {
	return store.RetryConflicts(ctx, "delete component", func() error {
		rec, rev, err := s.componentByRef(ctx, ref)
		if err != nil {
			return err
		}
		defs, err := s.componentDefinitions(ctx, ptr(rec.ident()))
		if err != nil {
			return err
		}
		// Definitions go first, in batches; the component itself goes last, with a
		// check that no definition was attached meanwhile (that retries the whole delete).
		for chunk := range slices.Chunk(defs, store.MaxWriteBatch/opsPerEntity) {
			var ops []store.Op
			for _, d := range chunk {
				ops = append(ops, store.DeleteAt(resdefKey(d.rec.ID), d.rev),
					store.Delete(resdefNameKey(d.rec.Component, d.rec.Name)),
					store.Delete(uuidKey(d.rec.UUID)))
			}
			if err := s.idx.Write(ctx, ops...); err != nil {
				return err
			}
		}
		if left, err := s.componentDefinitions(ctx, ptr(rec.ident())); err != nil {
			return err
		} else if len(left) > 0 {
			return store.ErrConflict
		}
		return s.idx.Write(ctx,
			store.DeleteAt(componentKey(rec.ID), rev),
			store.Delete(componentNameKey(rec.Name)),
			store.Delete(uuidKey(rec.UUID)))
	})
}
