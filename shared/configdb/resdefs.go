package configdb

import (
	"context"
	"encoding/json"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NewResourceDefinition is a resource definition to create.
type NewResourceDefinition struct {
	Name string
	// Component references the owning component (id, UUID or name); "" = none.
	// Ignored for definitions created inside a component.
	Component string
	// Content is any JSON value; empty means {}.
	Content json.RawMessage
}

// ResourceDefinitionUpdate is a partial update; nil fields are left as they are.
type ResourceDefinitionUpdate struct {
	Name *string
	// Component references the new owner; "" detaches the definition.
	Component *string
	Content   json.RawMessage
}

// maxContentBytes keeps a definition within one index item.
const maxContentBytes = 256 << 10

// checkContent returns the canonical form of a definition's content ({} when
// empty) and checks that a "validator" it names is registered.
func (s *Service) checkContent(content json.RawMessage) (json.RawMessage, error) {
	if len(content) == 0 {
		return json.RawMessage("{}"), nil
	}
	canon, err := canonicalJSON(content)
	if err != nil {
		return nil, err
	}
	if len(canon) > maxContentBytes {
		return nil, errs.New(errs.TooLarge, "resource definition content is larger than %d bytes", maxContentBytes)
	}
	if err := checkDefinitionMerge(canon); err != nil {
		return nil, err
	}
	if raw, ok := definitionSchema(canon); ok {
		if _, err := s.compile(raw); err != nil {
			return nil, err
		}
	}
	if name, ok := validatorName(canon); ok {
		if _, known := s.validator(name); !known {
			return nil, errs.Invalidf("unknown validator %q", name)
		}
	}
	return canon, nil
}

// validatorName returns the "validator" a definition's content names, if any.
func validatorName(content json.RawMessage) (string, bool) {
	var c struct {
		Validator *string `json:"validator"`
	}
	if json.Unmarshal(content, &c) != nil || c.Validator == nil {
		return "", false
	}
	return *c.Validator, true
}

// CreateResourceDefinition creates a definition, attached to a component or to none.
// Names are unique within a component (409).
func (s *Service) CreateResourceDefinition(ctx context.Context, in NewResourceDefinition) (ResourceDefinition, error) {
	if err := validName("resource definition name", in.Name); err != nil {
		return ResourceDefinition{}, err
	}
	content, err := s.checkContent(in.Content)
	if err != nil {
		return ResourceDefinition{}, err
	}
	var component *Ident
	if in.Component != "" {
		c, _, err := s.componentByRef(ctx, in.Component)
		if err != nil {
			return ResourceDefinition{}, err
		}
		component = ptr(c.ident())
	}
	id, err := s.newIdent(ctx, kindResdef)
	if err != nil {
		return ResourceDefinition{}, err
	}
	rec := resdefRecord{ID: id.ID, UUID: id.UUID, Name: in.Name, Component: component, Content: content}
	ops := []store.Op{
		store.Create(resdefKey(id.ID), mustJSON(rec)),
		store.Create(resdefNameKey(component, in.Name), mustJSON(aliasRecord{ID: id.ID})),
		uuidAlias(kindResdef, id),
	}
	if component != nil {
		ops = append(ops, store.Check(componentKey(component.ID), store.Cond{Kind: store.MustExist}))
	}
	err = store.RetryConflicts(ctx, "create resource definition", func() error {
		if err := s.nameFree(ctx, component, in.Name); err != nil {
			return err
		}
		if component != nil {
			if _, err := s.idx.Get(ctx, componentKey(component.ID)); err != nil {
				return notFound(err, "component %s not found", in.Component)
			}
		}
		return s.idx.Write(ctx, ops...)
	})
	if err != nil {
		return ResourceDefinition{}, err
	}
	return rec.definition(), nil
}

// nameFree answers 409 when component (nil: none) already has a definition called name.
func (s *Service) nameFree(ctx context.Context, component *Ident, name string) error {
	if component == nil {
		return s.mustBeFree(ctx, resdefNameKey(nil, name), "a resource definition named %q already exists outside any component", name)
	}
	return s.mustBeFree(ctx, resdefNameKey(component, name), "component %d already has a resource definition named %q", component.ID, name)
}

// ListResourceDefinitions lists definitions sorted by id: all of them when
// component is nil, those attached to no component when it is "", else those of that component.
func (s *Service) ListResourceDefinitions(ctx context.Context, component *string) ([]ResourceDefinition, error) {
	var stored []storedResdef
	switch {
	case component == nil:
		items, err := s.idx.Query(ctx, store.Query{Partition: pResdef})
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			var rec resdefRecord
			if err := json.Unmarshal(it.Value, &rec); err != nil {
				return nil, err
			}
			stored = append(stored, storedResdef{rec: rec})
		}
	case *component == "":
		var err error
		if stored, err = s.componentDefinitions(ctx, nil); err != nil {
			return nil, err
		}
	default:
		c, _, err := s.componentByRef(ctx, *component)
		if err != nil {
			return nil, err
		}
		if stored, err = s.componentDefinitions(ctx, ptr(c.ident())); err != nil {
			return nil, err
		}
	}
	defs := make([]ResourceDefinition, len(stored))
	for i, d := range stored {
		defs[i] = d.rec.definition()
	}
	return defs, nil
}

// GetResourceDefinition returns the definition ref names (id, UUID or name).
func (s *Service) GetResourceDefinition(ctx context.Context, ref string) (ResourceDefinition, error) {
	d, err := s.resdefByRef(ctx, ref)
	if err != nil {
		return ResourceDefinition{}, err
	}
	return d.rec.definition(), nil
}

// resdefByRef resolves a definition by id, UUID or name, outside any environment.
// A name shared by definitions of several components is ambiguous (409).
func (s *Service) resdefByRef(ctx context.Context, refStr string) (storedResdef, error) {
	r := parseRef(refStr)
	id := r.id
	switch r.kind {
	case byUUID:
		var err error
		if id, err = s.resolveUUID(ctx, kindResdef, r.uuid); err != nil {
			return storedResdef{}, notFound(err, "resource definition %s not found", refStr)
		}
	case byName:
		items, err := s.idx.Query(ctx, store.Query{Partition: pResdef})
		if err != nil {
			return storedResdef{}, err
		}
		found := 0
		for _, it := range items {
			var rec resdefRecord
			if err := json.Unmarshal(it.Value, &rec); err != nil {
				return storedResdef{}, err
			}
			if rec.Name == r.name {
				id = rec.ID
				found++
			}
		}
		switch {
		case found == 0:
			return storedResdef{}, errs.NotFoundf("resource definition %s not found", refStr)
		case found > 1:
			return storedResdef{}, errs.Conflictf("%d resource definitions are named %q; use an id", found, r.name)
		}
	}
	rec, rev, err := getRecord[resdefRecord](ctx, s.idx, resdefKey(id))
	if err != nil {
		return storedResdef{}, notFound(err, "resource definition %s not found", refStr)
	}
	name, err := s.idx.Get(ctx, resdefNameKey(rec.Component, rec.Name))
	if err != nil {
		return storedResdef{}, err
	}
	return storedResdef{rec: rec, rev: rev, nameRev: name.Revision}, nil
}

// UpdateResourceDefinition renames, moves or changes the content of a definition.
func (s *Service) UpdateResourceDefinition(ctx context.Context, ref string, upd ResourceDefinitionUpdate) error {
	if upd.Name != nil {
		if err := validName("resource definition name", *upd.Name); err != nil {
			return err
		}
	}
	var content json.RawMessage
	if upd.Content != nil {
		var err error
		if content, err = s.checkContent(upd.Content); err != nil {
			return err
		}
	}
	return store.RetryConflicts(ctx, "update resource definition", func() error {
		d, err := s.resdefByRef(ctx, ref)
		if err != nil {
			return err
		}
		rec := d.rec
		if upd.Name != nil {
			rec.Name = *upd.Name
		}
		var ops []store.Op
		if upd.Component != nil {
			rec.Component = nil
			if *upd.Component != "" {
				c, _, err := s.componentByRef(ctx, *upd.Component)
				if err != nil {
					return err
				}
				rec.Component = ptr(c.ident())
				ops = append(ops, store.Check(componentKey(c.ID), store.Cond{Kind: store.MustExist}))
			}
		}
		if content != nil {
			rec.Content = content
		}
		oldName, newName := resdefNameKey(d.rec.Component, d.rec.Name), resdefNameKey(rec.Component, rec.Name)
		if oldName != newName {
			if err := s.nameFree(ctx, rec.Component, rec.Name); err != nil {
				return err
			}
			ops = append(ops, store.DeleteAt(oldName, d.nameRev), store.Create(newName, mustJSON(aliasRecord{ID: rec.ID})))
		}
		ops = append(ops, store.Update(resdefKey(rec.ID), mustJSON(rec), d.rev))
		return s.idx.Write(ctx, ops...)
	})
}

// EditResourceDefinitionKeys applies a keys/set or keys/delete batch to a
// definition's content, all or nothing.
func (s *Service) EditResourceDefinitionKeys(ctx context.Context, ref string, edit KeyEdit, ops []KeyOp) error {
	return store.RetryConflicts(ctx, "edit resource definition", func() error {
		d, err := s.resdefByRef(ctx, ref)
		if err != nil {
			return err
		}
		edited, err := applyKeyOps(d.rec.Content, ops, edit)
		if err != nil {
			return err
		}
		if d.rec.Content, err = s.checkContent(edited); err != nil {
			return err
		}
		return s.idx.Write(ctx, store.Update(resdefKey(d.rec.ID), mustJSON(d.rec), d.rev))
	})
}

// DeleteResourceDefinition deletes a definition. Its documents stay unreachable:
// definition ids are never reused.
func (s *Service) DeleteResourceDefinition(ctx context.Context, ref string) error {
	return store.RetryConflicts(ctx, "delete resource definition", func() error {
		d, err := s.resdefByRef(ctx, ref)
		if err != nil {
			return err
		}
		return s.idx.Write(ctx,
			store.DeleteAt(resdefKey(d.rec.ID), d.rev),
			store.DeleteAt(resdefNameKey(d.rec.Component, d.rec.Name), d.nameRev),
			store.Delete(uuidKey(d.rec.UUID)))
	})
}
