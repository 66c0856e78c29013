package configdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// guess is what a document reference resolved to last time. A read fetches the
// environment and definition items anyway, in the same BatchGet as the heads, and
// confirms the guess from them; only when it no longer holds is the reference
// resolved again. So a warm read is one index call, and renames or deletes are
// never answered from a stale cache.
type guess struct {
	env    int64
	resdef int64
	// components are the environment's component ids, for a definition named by name:
	// the name items of all of them are fetched, to confirm the name is still unique.
	components []int64
}

// parsedItem caches the decoded form of an item's exact bytes.
type parsedItem[T any] struct {
	raw []byte
	rec T
}

// cost counts the item's bytes twice: as stored and as decoded.
func (p parsedItem[T]) cost() int64 { return int64(2*len(p.raw)) + entryOverhead }

// snapshot is one consistent read of everything a document operation needs.
type snapshot struct {
	env       envRecord
	envRaw    []byte // the environment item's stored bytes
	envRev    int64
	resdef    resdefRecord
	resdefRev int64
	levels    []LevelValue
	// heads[d][k] is the head of kind k (0 values, 1 overrides) at depth d of the level path.
	heads [][2]*head
	// version is the requested version of the addressed document, when one was asked for.
	version *Version
	// placement is what a path naming a node resolved to (nil: it names none).
	placement *placement
	// plain, on a snapshot load keeps, identifies its plain effective answer.
	plain plainAnswer
}

// head is a document's current version with the revision of its head item.
type head struct {
	Version
	rev int64
}

var kinds = [2]Kind{Values, Overrides}

func kindIndex(k Kind) int {
	if k == Overrides {
		return 1
	}
	return 0
}

// ParseKind accepts "values", "overrides" and the spec's spelling "override".
func ParseKind(s string) (Kind, bool) {
	switch s {
	case "values":
		return Values, true
	case "overrides", "override":
		return Overrides, true
	}
	return "", false
}

func (sn *snapshot) depth() int { return len(sn.levels) }

// addressed returns the head of kind at the addressed level.
func (sn *snapshot) addressed(k Kind) *head { return sn.heads[sn.depth()][kindIndex(k)] }

// loadFresh loads a snapshot (snapshotLoader) with fresh reads of the index.
// When the environment changed between resolving the reference and reading
// the heads (other writers adding levels, as nodes registering at once do),
// it resolves again under the one retry policy.
func (s *Service) loadFresh(ctx context.Context, ref DocRef, version int, vk Kind) (sn *snapshot, err error) {
	err = store.RetryConflicts(ctx, "environment "+ref.Env+" changed during the request", func() error {
		g, err := s.guessOf(ctx, ref)
		if err != nil {
			return err
		}
		p, err := s.place(ctx, g.env, ref.Levels)
		if err != nil {
			return err
		}
		if sn, err = s.fetch(ctx, ref, g, p, version, vk); err != nil || sn != nil {
			return err
		}
		s.cache.guesses.Remove(guessKey(ref))
		if p != nil {
			s.cache.placements.Remove(placementKey(g.env, ref.Levels))
		}
		return store.ErrConflict
	})
	return sn, err
}

func guessKey(ref DocRef) string { return ref.Env + "\x00" + ref.Resource }

// guessOf returns what ref resolved to last time, resolving it when nothing is cached.
func (s *Service) guessOf(ctx context.Context, ref DocRef) (guess, error) {
	if g, ok := s.cache.guesses.Get(guessKey(ref)); ok {
		return g, nil
	}
	g, err := s.resolve(ctx, ref)
	if err != nil {
		return guess{}, err
	}
	s.cache.guesses.Add(guessKey(ref), g)
	return g, nil
}

// resolve finds the environment and definition of ref with fresh reads,
// answering 404 for anything unknown or invisible.
func (s *Service) resolve(ctx context.Context, ref DocRef) (guess, error) {
	env, _, err := s.envByRef(ctx, ref.Env)
	if err != nil {
		return guess{}, err
	}
	g := guess{env: env.ID}
	r := parseRef(ref.Resource)
	switch r.kind {
	case byName:
		g.components = make([]int64, len(env.Components))
		for i, c := range env.Components {
			g.components[i] = c.ID
		}
		items, err := s.batchGet(ctx, nameKeys(g.components, r.name))
		if err != nil {
			return guess{}, err
		}
		id, err := uniqueName(items, ref)
		if err != nil {
			return guess{}, err
		}
		g.resdef = id
	case byUUID:
		if g.resdef, err = s.resolveUUID(ctx, kindResdef, r.uuid); err != nil {
			return guess{}, notFound(err, "resource %s not found in environment %d", ref.Resource, env.ID)
		}
	default:
		g.resdef = r.id
	}
	rec, _, err := getRecord[resdefRecord](ctx, s.idx, resdefKey(g.resdef))
	if err != nil {
		return guess{}, notFound(err, "resource %s not found in environment %d", ref.Resource, env.ID)
	}
	if rec.Component == nil || !env.hasComponent(rec.Component.ID) {
		return guess{}, errs.NotFoundf("resource %s not found in environment %d", ref.Resource, env.ID)
	}
	return g, nil
}

func nameKeys(components []int64, name string) []store.Key {
	keys := make([]store.Key, len(components))
	for i, c := range components {
		keys[i] = resdefNameKey(&Ident{ID: c}, name)
	}
	return keys
}

// uniqueName returns the definition the name items found name; two components of
// one environment defining the same name make the name ambiguous there.
func uniqueName(items map[store.Key]store.Item, ref DocRef) (int64, error) {
	var (
		id    int64
		found int
	)
	for _, it := range items {
		var a aliasRecord
		if err := json.Unmarshal(it.Value, &a); err != nil {
			return 0, err
		}
		id = a.ID
		found++
	}
	switch found {
	case 0:
		return 0, errs.NotFoundf("resource %s not found in environment %s", ref.Resource, ref.Env)
	case 1:
		return id, nil
	}
	return 0, errs.Conflictf("%d components of environment %s define a resource named %q; use its id", found, ref.Env, ref.Resource)
}

// checkLevels checks that levels are a leading prefix of the environment's levels, by name.
func checkLevels(env envRecord, levels []LevelValue) error {
	if len(levels) > len(env.Levels) {
		return errs.NotFoundf("environment %d has %d hierarchy levels; the URL names %d", env.ID, len(env.Levels), len(levels))
	}
	for i, lv := range levels {
		if !levelNameMatches(lv.Name, env.Levels[i].Name) {
			return errs.NotFoundf("Unexpected level name '%s'. Expected '%s'.", lv.Name, env.Levels[i].Name)
		}
		if err := validLevelValue(lv); err != nil {
			return err
		}
	}
	return nil
}

// fetch reads everything in one BatchGet under guess g and placement p (nil:
// the path names no node). It returns nil (and no error) when the items show
// that the guess or the placement no longer holds.
func (s *Service) fetch(ctx context.Context, ref DocRef, g guess, p *placement, version int, vk Kind) (*snapshot, error) {
	sk, err := s.snapshotKeys(ref, g, p, version, vk)
	if err != nil {
		return nil, err
	}
	items, err := s.idx.BatchGet(ctx, sk.keys)
	if err != nil {
		return nil, err
	}
	return s.snapshotOf(ref, g, p, sk, items, version, vk)
}

// snapshotKeys are the index items a snapshot is read from: the environment,
// the definition, two heads per depth of the level path, then what the
// reference and the version need.
type snapshotKeys struct {
	keys   []store.Key
	paths  []string
	levels []LevelValue
}

// firstHead is the position of the first head in snapshotKeys.keys: the heads
// follow the environment and the definition, two per depth.
const firstHead = 2

func (s *Service) snapshotKeys(ref DocRef, g guess, p *placement, version int, vk Kind) (snapshotKeys, error) {
	levels := ref.Levels
	if p != nil {
		levels = p.levels
	}
	depth := len(levels)
	keys := make([]store.Key, 0, 4+2*(depth+1)+len(g.components))
	keys = append(keys, envKey(g.env), resdefKey(g.resdef))
	paths := make([]string, depth+1)
	for d := range paths {
		paths[d] = levelPath(levels[:d])
		for _, k := range kinds {
			keys = append(keys, headKey(g.env, g.resdef, k, paths[d]))
		}
	}
	if err := checkKeyLength(keys[len(keys)-1], versionsPartition(g.env, g.resdef, Overrides, paths[depth])); err != nil {
		return snapshotKeys{}, err
	}
	if version > 0 {
		keys = append(keys, versionKey(g.env, g.resdef, vk, paths[depth], version))
	}
	if r := parseRef(ref.Resource); r.kind == byName {
		keys = append(keys, nameKeys(g.components, r.name)...)
	}
	if p != nil {
		keys = append(keys, s.nodes.RecordKey(p.node.ID))
	}
	return snapshotKeys{keys: keys, paths: paths, levels: levels}, nil
}

// snapshotOf builds the snapshot from the items read for sk; nil (and no
// error) when they show that the guess or the placement no longer holds.
func (s *Service) snapshotOf(ref DocRef, g guess, p *placement, sk snapshotKeys, items map[store.Key]store.Item, version int, vk Kind) (*snapshot, error) {
	r := parseRef(ref.Resource)
	keys, paths, levels := sk.keys, sk.paths, sk.levels
	depth := len(levels)
	envItem, ok := items[envKey(g.env)]
	if !ok {
		return nil, nil
	}
	sn := &snapshot{envRaw: envItem.Value, envRev: envItem.Revision, levels: levels, heads: make([][2]*head, depth+1), placement: p}
	var err error
	if sn.env, err = parsed(s.cache.envs, g.env, envItem); err != nil {
		return nil, err
	}
	if p != nil {
		it, ok := items[s.nodes.RecordKey(p.node.ID)]
		if !ok {
			return nil, nil
		}
		if envItem.Revision != p.envRev {
			return nil, nil
		}
		if ok, err := p.confirmedBy(g.env, it.Value, s.nodes.DecodeRecord); !ok {
			return nil, err
		}
	}
	if err := checkLevels(sn.env, levels); err != nil {
		return nil, err
	}
	resItem, ok := items[resdefKey(g.resdef)]
	if !ok {
		return nil, nil
	}
	sn.resdefRev = resItem.Revision
	if sn.resdef, err = parsed(s.cache.resdefs, g.resdef, resItem); err != nil {
		return nil, err
	}
	if !s.guessHolds(ref, r, g, sn, items) {
		return nil, nil
	}
	for d := range paths {
		for i := range kinds {
			k := keys[firstHead+2*d+i]
			if it, ok := items[k]; ok {
				v, err := parsed(s.cache.heads, k, it)
				if err != nil {
					return nil, err
				}
				sn.heads[d][i] = &head{Version: v, rev: it.Revision}
			}
		}
	}
	if version > 0 {
		it, ok := items[versionKey(g.env, g.resdef, vk, paths[depth], version)]
		if !ok {
			return nil, errs.NotFoundf("version %d of the %s of resource %s not found", version, vk, ref.Resource)
		}
		sn.version = new(Version)
		if err := json.Unmarshal(it.Value, sn.version); err != nil {
			return nil, err
		}
	}
	return sn, nil
}

// guessHolds confirms from freshly fetched items that ref still resolves to g.
func (s *Service) guessHolds(ref DocRef, r ref, g guess, sn *snapshot, items map[store.Key]store.Item) bool {
	if env := parseRef(ref.Env); env.kind == byUUID && env.uuid != sn.env.UUID {
		return false
	}
	if c := sn.resdef.Component; c == nil || !sn.env.hasComponent(c.ID) {
		return false
	}
	switch r.kind {
	case byUUID:
		return sn.resdef.UUID == r.uuid
	case byName:
		if sn.resdef.Name != r.name || len(g.components) != len(sn.env.Components) {
			return false
		}
		for i, c := range sn.env.Components {
			if g.components[i] != c.ID {
				return false
			}
		}
		id, err := uniqueName(pick(items, nameKeys(g.components, r.name)), ref)
		return err == nil && id == g.resdef
	}
	return true
}

func pick(items map[store.Key]store.Item, keys []store.Key) map[store.Key]store.Item {
	out := make(map[store.Key]store.Item, len(keys))
	for _, k := range keys {
		if it, ok := items[k]; ok {
			out[k] = it
		}
	}
	return out
}

// checkKeyLength refuses level paths too long for the store's keys.
func checkKeyLength(k store.Key, partition string) error {
	if len(k.Sort) > maxKeyBytes || len(partition) > maxKeyBytes {
		return errs.Invalidf("the level path is too long")
	}
	return nil
}

// parsed decodes item, reusing the cached form when its bytes are unchanged.
func parsed[K comparable, T any](c interface {
	Get(K) (parsedItem[T], bool)
	Add(K, parsedItem[T])
}, id K, item store.Item) (T, error) {
	if p, ok := c.Get(id); ok && bytes.Equal(p.raw, item.Value) {
		return p.rec, nil
	}
	var rec T
	if err := json.Unmarshal(item.Value, &rec); err != nil {
		return rec, err
	}
	c.Add(id, parsedItem[T]{raw: item.Value, rec: rec})
	return rec, nil
}

// PutDocument stores body (a JSON object) as the next version of the kind document
// at ref. With ifMatch, the current document's ETag must match it (412 otherwise).
func (s *Service) PutDocument(ctx context.Context, ref DocRef, kind Kind, body []byte, ifMatch string) (Version, error) {
	edit, err := putEdit(body)
	if err != nil {
		return Version{}, err
	}
	return s.write(ctx, ref, kind, ifMatch, edit)
}

// putEdit replaces the document with body.
func putEdit(body []byte) (documentEdit, error) {
	doc, err := canonicalDocument(body)
	if err != nil {
		return nil, err
	}
	return func([]byte, bool) ([]byte, error) { return doc, nil }, nil
}

// EditKeys applies a keys/set or keys/delete batch to the newest kind document
// at ref, all or nothing. Nothing stored at that level is 404; a path that does
// not exist is 409.
func (s *Service) EditKeys(ctx context.Context, ref DocRef, kind Kind, edit KeyEdit, ops []KeyOp, ifMatch string) (Version, error) {
	return s.write(ctx, ref, kind, ifMatch, keysEdit(ref, kind, edit, ops))
}

// keysEdit applies a keys/set or keys/delete batch to the stored document.
func keysEdit(ref DocRef, kind Kind, edit KeyEdit, ops []KeyOp) documentEdit {
	return func(current []byte, exists bool) ([]byte, error) {
		if !exists {
			return nil, errs.NotFoundf("no %s of resource %s are stored at this level", kind, ref.Resource)
		}
		return applyKeyOps(current, ops, edit)
	}
}

// emptyDocument is what a level without a document reads as.
var emptyDocument = []byte("{}")

// write stores edit(current document) as version N+1 of the addressed document:
// one atomic index write creates the version item (naming its writer, when the
// write is audited: audit.Writer), moves the head (conditional on its revision),
// records the level values and stores the write's audit record (audit.CommitOps), checking that the environment and
// the definition did not change meanwhile. A conflict re-reads and retries, so
// concurrent writers each get their own version; with ifMatch, a retry happens
// only while the current ETag still matches, else 412.
func (s *Service) write(ctx context.Context, ref DocRef, kind Kind, ifMatch string, edit documentEdit) (Version, error) {
	var (
		stored  Version
		written watchKey
	)
	err := s.docWriters.write(ctx, docLockKey(ref, kind), func() error {
		sn, err := s.snapshots.load(ctx, ref, 0, "")
		if err != nil {
			return err
		}
		written = watchKey{env: sn.env.ID, resdef: sn.resdef.ID}
		cur, doc, err := s.nextDocument(ctx, sn, kind, ifMatch, edit)
		if err != nil {
			return err
		}
		// The blob goes first: a failed index write leaves only an unreferenced
		// blob, which the garbage collector removes; its reference commits with the version.
		blob, err := store.PutBlob(ctx, s.idx, s.blobs, doc)
		if err != nil {
			return err
		}
		stored = Version{Version: 1, CreatedAt: s.now().UTC(), Size: int64(len(doc)), SHA256: blob.Hash}
		if cur != nil {
			stored.Version = cur.Version.Version + 1
		}
		if w, ok := audit.Writer(ctx); ok {
			stored.WrittenBy = &Writer{Principal: w.Principal, Role: w.Role, RequestID: w.RequestID, Time: stored.CreatedAt}
		}
		path := levelPath(sn.levels)
		value := mustJSON(stored)
		ops := []store.Op{
			store.Create(versionKey(sn.env.ID, sn.resdef.ID, kind, path, stored.Version), value),
			store.Check(envKey(sn.env.ID), store.Cond{Kind: store.RevisionIs, Revision: sn.envRev}),
			store.Check(resdefKey(sn.resdef.ID), store.Cond{Kind: store.RevisionIs, Revision: sn.resdefRev}),
		}
		if cur != nil {
			ops = append(ops, store.Update(headKey(sn.env.ID, sn.resdef.ID, kind, path), value, cur.rev))
		} else {
			ops = append(ops, store.Create(headKey(sn.env.ID, sn.resdef.ID, kind, path), value))
			newValues, err := s.newLevelValues(ctx, sn)
			if err != nil {
				return err
			}
			ops = append(ops, newValues...)
			if len(newValues) > 0 {
				// A level gets its first documents: move the environment's revision
				// (same bytes), so that a hierarchy change that found the level
				// empty and updates the environment at the old revision fails.
				ops[1] = store.Update(envKey(sn.env.ID), sn.envRaw, sn.envRev)
			}
		}
		ops = append(ops, blob.Ops...)
		// The audit record of the write commits with the version it records.
		ops = append(ops, audit.CommitOps(ctx, sn.env.ID, stored.Version)...)
		return s.idx.Write(ctx, ops...)
	})
	if err == nil {
		s.watch.changed(written)
	}
	return stored, err
}

// nextDocument is the document a write would store after sn's addressed kind
// document cur: ifMatch checked, edit applied, the definition's validation passed.
func (s *Service) nextDocument(ctx context.Context, sn *snapshot, kind Kind, ifMatch string, edit documentEdit) (cur *head, doc []byte, err error) {
	cur = sn.addressed(kind)
	current, etag := emptyDocument, emptyETag
	if cur != nil {
		d, err := s.documents.document(ctx, cur.SHA256)
		if err != nil {
			return nil, nil, err
		}
		current, etag = d.raw, d.etag
	}
	if ifMatch != "" && !ETagMatches(ifMatch, etag) {
		return nil, nil, errs.New(errs.PreconditionFailed, "the %s document changed: its ETag is %s", kind, etag)
	}
	if doc, err = edit(current, cur != nil); err != nil {
		return nil, nil, err
	}
	if err := s.validate(sn.resdef, doc); err != nil {
		return nil, nil, err
	}
	if err := s.checkSchema(ctx, sn.resdef, kind, doc); err != nil {
		return nil, nil, err
	}
	return cur, doc, nil
}

// documentEdit computes a new document from the current one (exists: one is stored).
type documentEdit func(current []byte, exists bool) ([]byte, error)

// newLevelValues returns the creates of the level-value items of sn's level
// path that do not exist yet (the items that make a level "have documents").
func (s *Service) newLevelValues(ctx context.Context, sn *snapshot) ([]store.Op, error) {
	keys := make([]store.Key, len(sn.levels))
	for i, lv := range sn.levels {
		keys[i] = levelValueKey(sn.env.ID, sn.env.Levels[i].ID, lv.Value)
	}
	if len(keys) == 0 {
		return nil, nil
	}
	existing, err := s.idx.BatchGet(ctx, keys)
	if err != nil {
		return nil, err
	}
	var ops []store.Op
	for _, k := range keys {
		if _, ok := existing[k]; !ok {
			ops = append(ops, store.Create(k, []byte("{}")))
		}
	}
	return ops, nil
}

// validate runs the validator the definition's content names, if any.
func (s *Service) validate(def resdefRecord, doc []byte) error {
	name, ok := validatorName(def.Content)
	if !ok {
		return nil
	}
	fn, ok := s.validator(name)
	if !ok {
		return errs.Invalidf("resource %s names validator %q, which this server does not have", def.Name, name)
	}
	if err := fn(doc); err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return err
		}
		return errs.Wrap(errs.Invalid, err, err.Error())
	}
	return nil
}

// ListVersions lists the versions of the kind document at ref, newest first.
func (s *Service) ListVersions(ctx context.Context, ref DocRef, kind Kind) ([]Version, error) {
	sn, err := s.snapshots.load(ctx, ref, 0, "")
	if err != nil {
		return nil, err
	}
	items, err := s.idx.Query(ctx, store.Query{
		Partition: versionsPartition(sn.env.ID, sn.resdef.ID, kind, levelPath(sn.levels)),
		Reverse:   true,
	})
	if err != nil {
		return nil, err
	}
	versions := make([]Version, len(items))
	for i, it := range items {
		if err := json.Unmarshal(it.Value, &versions[i]); err != nil {
			return nil, err
		}
	}
	return versions, nil
}

// lookupLabel is the level path as show_lookup prints it: "/" for global, else "/lvl1/v1/.../".
func lookupLabel(env envRecord, levels []LevelValue) string {
	var b strings.Builder
	b.WriteString("/")
	for i, lv := range levels {
		b.WriteString(env.Levels[i].Name)
		b.WriteString("/")
		b.WriteString(lv.Value)
		b.WriteString("/")
	}
	return b.String()
}
