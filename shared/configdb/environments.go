package configdb

import (
	"context"
	"encoding/json"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/levelpath"
	"github.com/tuningbox/tuningbox/shared/store"
)

// NewEnvironment is an environment to create.
type NewEnvironment struct {
	// ID is chosen by the client (the deployment tool's cluster id) or 0 to generate one.
	ID int64
	// Components are references (ids, UUIDs or names) of the components whose resources it holds.
	Components []string
	// Levels are the hierarchy level names, from the least to the most specific.
	Levels []string
}

// EnvironmentUpdate is a partial update; nil fields are left as they are.
type EnvironmentUpdate struct {
	Components *[]string
	// Levels replaces the hierarchy. Levels that keep their name and position keep
	// their identity and documents; a level with documents cannot be moved or removed.
	Levels *[]string
}

// CreateEnvironment creates an environment. A client-chosen id that exists, or
// that an environment had before (ids are never reused), is a conflict (409).
func (s *Service) CreateEnvironment(ctx context.Context, in NewEnvironment) (Environment, error) {
	if in.ID < 0 || in.ID > store.MaxChosenID {
		return Environment{}, errs.Invalidf("environment id must be an integer from 1 to %d (a cluster id of the deployment tool)", store.MaxChosenID)
	}
	components, checks, err := s.resolveComponents(ctx, in.Components)
	if err != nil {
		return Environment{}, err
	}
	levels, err := s.buildLevels(ctx, nil, in.Levels)
	if err != nil {
		return Environment{}, err
	}
	id := Ident{ID: in.ID, UUID: s.newUUID()}
	if in.ID == 0 {
		id.ID, err = store.NextID(ctx, s.idx, counterKey(kindEnv))
	} else {
		err = store.ReserveID(ctx, s.idx, counterKey(kindEnv), in.ID)
	}
	if err != nil {
		return Environment{}, err
	}
	rec := envRecord{ID: id.ID, UUID: id.UUID, Components: components, Levels: levels}
	ops := append([]store.Op{
		store.Create(envKey(id.ID), mustJSON(rec)),
		uuidAlias(kindEnv, id),
		store.Check(envRetiredKey(id.ID), store.Cond{Kind: store.MustNotExist}),
	}, checks...)
	err = store.RetryConflicts(ctx, "create environment", func() error {
		if err := s.mustBeFree(ctx, envKey(id.ID), "environment %d already exists", id.ID); err != nil {
			return err
		}
		if err := s.mustBeFree(ctx, envRetiredKey(id.ID), "environment id %d was used before; ids are never reused", id.ID); err != nil {
			return err
		}
		if _, _, err := s.resolveComponents(ctx, in.Components); err != nil {
			return err
		}
		return s.idx.Write(ctx, ops...)
	})
	if err != nil {
		return Environment{}, err
	}
	audit.Note(ctx, rec.ID, 0)
	return rec.environment(), nil
}

// resolveComponents resolves component references, dropping repeats, and returns
// the checks that keep them existing until the write.
func (s *Service) resolveComponents(ctx context.Context, refs []string) ([]Ident, []store.Op, error) {
	idents := []Ident{}
	var checks []store.Op
	seen := make(map[int64]bool)
	for _, r := range refs {
		c, _, err := s.componentByRef(ctx, r)
		if err != nil {
			return nil, nil, err
		}
		if !seen[c.ID] {
			seen[c.ID] = true
			idents = append(idents, c.ident())
			checks = append(checks, store.Check(componentKey(c.ID), store.Cond{Kind: store.MustExist}))
		}
	}
	if len(checks) > store.MaxWriteBatch/2 {
		return nil, nil, errs.Invalidf("an environment has at most %d components", store.MaxWriteBatch/2)
	}
	return idents, checks, nil
}

// buildLevels validates level names and gives each its identity: the one it had
// in old when the name is kept, a new one otherwise.
func (s *Service) buildLevels(ctx context.Context, old []Level, names []string) ([]Level, error) {
	if len(names) > maxLevels {
		return nil, errs.Invalidf("an environment has at most %d hierarchy levels", maxLevels)
	}
	seen := make(map[string]bool)
	for _, n := range names {
		if err := validLevelName(n); err != nil {
			return nil, err
		}
		if seen[n] {
			return nil, errs.Conflictf("hierarchy level %q is given twice", n)
		}
		seen[n] = true
	}
	if seen[NodeLevel] && seen[levelpath.NodeLevelAlias] {
		return nil, errs.Conflictf("an environment has one node level: %q or %q, not both", NodeLevel, levelpath.NodeLevelAlias)
	}
	levels := make([]Level, 0, len(names))
	for _, n := range names {
		lvl, ok := levelNamed(old, n)
		if !ok {
			id, err := s.newIdent(ctx, kindLevel)
			if err != nil {
				return nil, err
			}
			lvl = Level{Ident: id, Name: n}
		}
		levels = append(levels, lvl)
	}
	return levels, nil
}

func levelNamed(levels []Level, name string) (Level, bool) {
	for _, l := range levels {
		if l.Name == name {
			return l, true
		}
	}
	return Level{}, false
}

// envByRef resolves an environment by id or UUID (environments have no names).
func (s *Service) envByRef(ctx context.Context, refStr string) (envRecord, int64, error) {
	r := parseRef(refStr)
	id := r.id
	switch r.kind {
	case byName:
		return envRecord{}, 0, errs.NotFoundf("environment %s not found", refStr)
	case byUUID:
		var err error
		if id, err = s.resolveUUID(ctx, kindEnv, r.uuid); err != nil {
			return envRecord{}, 0, notFound(err, "environment %s not found", refStr)
		}
	}
	rec, rev, err := getRecord[envRecord](ctx, s.idx, envKey(id))
	if err != nil {
		return envRecord{}, 0, notFound(err, "environment %s not found", refStr)
	}
	return rec, rev, nil
}

// GetEnvironment returns the environment envRef names (id or UUID).
func (s *Service) GetEnvironment(ctx context.Context, envRef string) (Environment, error) {
	rec, _, err := s.envByRef(ctx, envRef)
	if err != nil {
		return Environment{}, err
	}
	envs, err := s.withLiveComponents(ctx, []envRecord{rec})
	if err != nil {
		return Environment{}, err
	}
	return envs[0], nil
}

// EnvironmentExists reports whether envRef names an environment.
func (s *Service) EnvironmentExists(ctx context.Context, envRef string) (bool, error) {
	_, _, err := s.envByRef(ctx, envRef)
	if errs.Is(err, errs.NotFound) {
		return false, nil
	}
	return err == nil, err
}

// ListEnvironments returns every environment, sorted by id.
func (s *Service) ListEnvironments(ctx context.Context) ([]Environment, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: pEnv})
	if err != nil {
		return nil, err
	}
	recs := make([]envRecord, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Value, &recs[i]); err != nil {
			return nil, err
		}
	}
	return s.withLiveComponents(ctx, recs)
}

// withLiveComponents converts records, leaving out components deleted since they were attached.
func (s *Service) withLiveComponents(ctx context.Context, recs []envRecord) ([]Environment, error) {
	var keys []store.Key
	for _, r := range recs {
		for _, c := range r.Components {
			keys = append(keys, componentKey(c.ID))
		}
	}
	live, err := s.batchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	envs := make([]Environment, len(recs))
	for i, r := range recs {
		env := r.environment()
		env.Components = []Ident{}
		for _, c := range r.Components {
			if _, ok := live[componentKey(c.ID)]; ok {
				env.Components = append(env.Components, c)
			}
		}
		envs[i] = env
	}
	return envs, nil
}

// UpdateEnvironment changes an environment's components and/or hierarchy levels.
func (s *Service) UpdateEnvironment(ctx context.Context, envRef string, upd EnvironmentUpdate) error {
	return store.RetryConflicts(ctx, "update environment", func() error {
		rec, rev, err := s.envByRef(ctx, envRef)
		if err != nil {
			return err
		}
		audit.Note(ctx, rec.ID, 0)
		var checks []store.Op
		if upd.Components != nil {
			if rec.Components, checks, err = s.resolveComponents(ctx, *upd.Components); err != nil {
				return err
			}
		}
		if upd.Levels != nil {
			levels, err := s.buildLevels(ctx, rec.Levels, *upd.Levels)
			if err != nil {
				return err
			}
			if err := s.checkLevelsMovable(ctx, rec, levels); err != nil {
				return err
			}
			rec.Levels = levels
		}
		return s.idx.Write(ctx, append(checks, store.Update(envKey(rec.ID), mustJSON(rec), rev))...)
	})
}

// checkLevelsMovable refuses a new hierarchy that changes the position of a level
// documents were stored under: level paths in keys are positional, so the documents
// would silently change meaning. A document write that gives a level its first
// value moves the environment's revision, and every document write checks it, so
// none can slip in between this check and the update (configdbtest.HierarchyRace).
func (s *Service) checkLevelsMovable(ctx context.Context, rec envRecord, levels []Level) error {
	for i, old := range rec.Levels {
		if i < len(levels) && levels[i].ID == old.ID {
			continue
		}
		used, err := s.levelHasDocuments(ctx, rec.ID, old.ID)
		if err != nil {
			return err
		}
		if used {
			return errs.Conflictf("hierarchy level %q has documents; it cannot be moved or removed (only new levels may be added after it)", old.Name)
		}
	}
	return nil
}

// levelHasDocuments reports whether documents were stored under some value of the level.
func (s *Service) levelHasDocuments(ctx context.Context, env, level int64) (bool, error) {
	items, err := s.idx.Query(ctx, store.Query{Partition: levelValuesPartition(env, level), Limit: 1})
	return len(items) > 0, err
}

// DeleteEnvironment deletes an environment. Its id is retired: it is never handed
// out or accepted again, so its documents can never reappear.
func (s *Service) DeleteEnvironment(ctx context.Context, envRef string) error {
	return store.RetryConflicts(ctx, "delete environment", func() error {
		rec, rev, err := s.envByRef(ctx, envRef)
		if err != nil {
			return err
		}
		audit.Note(ctx, rec.ID, 0)
		ops := []store.Op{
			store.DeleteAt(envKey(rec.ID), rev),
			store.Delete(uuidKey(rec.UUID)),
			store.Put(envRetiredKey(rec.ID), []byte("{}")),
		}
		for _, cascade := range s.cascades {
			more, err := cascade(ctx, rec.ID)
			if err != nil {
				return err
			}
			ops = append(ops, more...)
		}
		if len(ops) > store.MaxWriteBatch {
			return errs.Conflictf("environment %d has too much attached to delete in one atomic write (%d items, at most %d): delete its deployment graphs first", rec.ID, len(ops), store.MaxWriteBatch)
		}
		return s.idx.Write(ctx, ops...)
	})
}

// ListHierarchyLevels returns an environment's levels, the least specific first,
// each with the values documents were stored under.
func (s *Service) ListHierarchyLevels(ctx context.Context, envRef string) ([]HierarchyLevel, error) {
	rec, _, err := s.envByRef(ctx, envRef)
	if err != nil {
		return nil, err
	}
	levels := make([]HierarchyLevel, len(rec.Levels))
	for i := range rec.Levels {
		if levels[i], err = s.hierarchyLevel(ctx, rec, i); err != nil {
			return nil, err
		}
	}
	return levels, nil
}

func (s *Service) hierarchyLevel(ctx context.Context, rec envRecord, i int) (HierarchyLevel, error) {
	lvl := rec.Levels[i]
	items, err := s.idx.Query(ctx, store.Query{Partition: levelValuesPartition(rec.ID, lvl.ID)})
	if err != nil {
		return HierarchyLevel{}, err
	}
	hl := HierarchyLevel{Level: lvl, Environment: rec.ident(), Values: make([]string, len(items))}
	if i > 0 {
		hl.Parent = ptr(rec.Levels[i-1].Ident)
	}
	for j, it := range items {
		hl.Values[j] = it.Sort
	}
	return hl, nil
}

// levelIndex finds a level of rec by id, UUID or name.
func levelIndex(rec envRecord, levelRef string) (int, error) {
	r := parseRef(levelRef)
	for i, l := range rec.Levels {
		if (r.kind == byID && l.ID == r.id) || (r.kind == byUUID && l.UUID == r.uuid) || (r.kind == byName && l.Name == r.name) {
			return i, nil
		}
	}
	return 0, errs.NotFoundf("hierarchy level %s not found in environment %d", levelRef, rec.ID)
}

// GetHierarchyLevel returns one level of an environment, by id, UUID or name.
func (s *Service) GetHierarchyLevel(ctx context.Context, envRef, levelRef string) (HierarchyLevel, error) {
	rec, _, err := s.envByRef(ctx, envRef)
	if err != nil {
		return HierarchyLevel{}, err
	}
	i, err := levelIndex(rec, levelRef)
	if err != nil {
		return HierarchyLevel{}, err
	}
	return s.hierarchyLevel(ctx, rec, i)
}

// RenameHierarchyLevel renames a level. Documents stay where they are: keys hold level values, not names.
func (s *Service) RenameHierarchyLevel(ctx context.Context, envRef, levelRef, name string) error {
	if err := validLevelName(name); err != nil {
		return err
	}
	return store.RetryConflicts(ctx, "rename hierarchy level", func() error {
		rec, rev, err := s.envByRef(ctx, envRef)
		if err != nil {
			return err
		}
		audit.Note(ctx, rec.ID, 0)
		i, err := levelIndex(rec, levelRef)
		if err != nil {
			return err
		}
		for _, other := range rec.Levels {
			if other.ID != rec.Levels[i].ID && (other.Name == name || IsNodeLevel(other.Name) && IsNodeLevel(name)) {
				return errs.Conflictf("environment %d already has a hierarchy level named %q", rec.ID, other.Name)
			}
		}
		// Node ids and free values do not mean the same: a level with documents
		// keeps whether it is the node level.
		if IsNodeLevel(rec.Levels[i].Name) != IsNodeLevel(name) {
			used, err := s.levelHasDocuments(ctx, rec.ID, rec.Levels[i].ID)
			if err != nil {
				return err
			}
			if used {
				return errs.Conflictf("hierarchy level %q has documents; it cannot become or stop being the node level (%q)", rec.Levels[i].Name, NodeLevel)
			}
		}
		rec.Levels[i].Name = name
		return s.idx.Write(ctx, store.Update(envKey(rec.ID), mustJSON(rec), rev))
	})
}
