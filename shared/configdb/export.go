package configdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// EnvironmentExport is what an export holds of an environment besides its
// documents (shared/envexport writes it as a file): its id and UUID, its
// hierarchy levels, and its components with every definition they have.
// Components and definitions are named, not numbered: ids belong to a store.
type EnvironmentExport struct {
	ID         int64               `json:"id"`
	UUID       string              `json:"uuid"`
	Levels     []string            `json:"hierarchy_levels"`
	Components []ExportedComponent `json:"components"`
}

// ExportedComponent is a component with its definitions.
type ExportedComponent struct {
	Name        string               `json:"name"`
	Definitions []ExportedDefinition `json:"resource_definitions"`
}

// ExportedDefinition is a resource definition and its content.
type ExportedDefinition struct {
	Name    string          `json:"name"`
	Content json.RawMessage `json:"content"`
}

// DocumentHistory is every version of one document, oldest first.
type DocumentHistory struct {
	Component string `json:"component"`
	Resource  string `json:"resource"`
	Kind      Kind   `json:"kind"`
	// Path holds the document's level values, one per level from the first
	// ([] at the global level); the levels are the environment's.
	Path     []string         `json:"path"`
	Versions []VersionContent `json:"versions"`
}

// VersionContent is a version with its document as stored (canonical JSON):
// its SHA-256 is the version's sha256.
type VersionContent struct {
	Version
	Content json.RawMessage `json:"content"`
}

// ImportStage stages what an imported environment env holds besides its
// documents (its nodes, its cluster's graphs, its deploy templates): it
// returns their writes in groups, each written in one batch (a blob's
// reference with the record that holds it), and the node-level values that
// change (a node whose id is taken here gets another). shared/envexport's
// Import makes one of shared/nodes', shared/graphs' and shared/templates' ImportOps.
type ImportStage func(ctx context.Context, env Environment) (writes [][]store.Op, renamed map[string]string, err error)

// ImportCounts says how much an import wrote.
type ImportCounts struct {
	Documents int
	Versions  int
}

// ExportEnvironment reads the environment envRef names and returns it with
// its documents: those of every definition of its components, each with its
// whole history, read one after another as docs is ranged over. Versions are
// immutable, so each document's history is whole; a document written while
// the export runs may be in it or not, with or without its newest version.
func (s *Service) ExportEnvironment(ctx context.Context, envRef string) (EnvironmentExport, iter.Seq2[DocumentHistory, error], error) {
	rec, _, err := s.envByRef(ctx, envRef)
	if err != nil {
		return EnvironmentExport{}, nil, err
	}
	out := EnvironmentExport{ID: rec.ID, UUID: rec.UUID, Levels: make([]string, len(rec.Levels)), Components: []ExportedComponent{}}
	for i, l := range rec.Levels {
		out.Levels[i] = l.Name
	}
	type source struct {
		component string
		def       resdefRecord
	}
	var sources []source
	for _, c := range rec.Components {
		comp, _, err := getRecord[componentRecord](ctx, s.idx, componentKey(c.ID))
		if err != nil {
			return EnvironmentExport{}, nil, err
		}
		defs, err := s.componentDefinitions(ctx, &c)
		if err != nil {
			return EnvironmentExport{}, nil, err
		}
		exported := ExportedComponent{Name: comp.Name, Definitions: make([]ExportedDefinition, len(defs))}
		for i, d := range defs {
			exported.Definitions[i] = ExportedDefinition{Name: d.rec.Name, Content: d.rec.Content}
			sources = append(sources, source{comp.Name, d.rec})
		}
		out.Components = append(out.Components, exported)
	}
	docs := func(yield func(DocumentHistory, error) bool) {
		for _, src := range sources {
			heads, err := s.idx.Query(ctx, store.Query{Partition: headPartition(rec.ID, src.def.ID)})
			if err != nil {
				yield(DocumentHistory{}, err)
				return
			}
			for _, h := range heads {
				doc, err := s.documentHistory(ctx, rec, src.def.ID, h.Sort)
				if err != nil {
					yield(DocumentHistory{}, err)
					return
				}
				doc.Component, doc.Resource = src.component, src.def.Name
				if !yield(doc, nil) {
					return
				}
			}
		}
	}
	return out, docs, nil
}

// documentHistory reads every version, with its content, of the document
// whose head has sort key slot in environment env and definition resdef.
func (s *Service) documentHistory(ctx context.Context, env envRecord, resdef int64, slot string) (DocumentHistory, error) {
	kind, path, _ := strings.Cut(slot, "|")
	doc := DocumentHistory{Kind: Kind(kind), Path: []string{}}
	if path != "" {
		for _, v := range strings.Split(path, "/") {
			value, err := url.PathUnescape(v)
			if err != nil {
				return doc, err
			}
			doc.Path = append(doc.Path, value)
		}
	}
	if len(doc.Path) > len(env.Levels) {
		return doc, errs.Conflictf("a document of environment %d is stored at %d levels; the environment has %d", env.ID, len(doc.Path), len(env.Levels))
	}
	items, err := s.idx.Query(ctx, store.Query{Partition: versionsPartition(env.ID, resdef, doc.Kind, path)})
	if err != nil {
		return doc, err
	}
	doc.Versions = make([]VersionContent, len(items))
	// The contents at once: a blob store a network away (S3) serves them in parallel.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(blobWindow)
	for i, it := range items {
		v := &doc.Versions[i]
		if err := json.Unmarshal(it.Value, &v.Version); err != nil {
			return doc, err
		}
		g.Go(func() (err error) {
			if v.Content, err = s.blobs.Get(gctx, v.SHA256); err != nil {
				return fmt.Errorf("version %d of %s|%s: %w", v.Version.Version, kind, path, err)
			}
			return nil
		})
	}
	return doc, g.Wait()
}

// ImportEnvironment creates an environment from an export, all or nothing:
// nothing of it is visible until its last write, which creates the
// environment item, and a failure (a document that does not fit, docs
// ending in an error) removes what was written before it and answers the
// error. The environment keeps the export's id and UUID when this store has
// neither (an id once used here is never reused), else it gets new ones.
// Components and definitions are matched by name: missing ones are created
// (they are shared, so they stay when the import fails), one whose content
// differs from the export's is a conflict, before anything is written.
// Levels get new ids. Every version keeps its number, time, writer and
// content, checked against its SHA-256. stage, when not nil, stages the rest
// of the environment (its nodes, ...), before any document is written: its
// writes come last before the environment's, and node-level values of
// renamed nodes are rewritten.
func (s *Service) ImportEnvironment(ctx context.Context, in EnvironmentExport, docs iter.Seq2[DocumentHistory, error], stage ImportStage) (Environment, ImportCounts, error) {
	var counts ImportCounts
	components, resdefs, err := s.importComponents(ctx, in.Components)
	if err != nil {
		return Environment{}, counts, err
	}
	levels, err := s.buildLevels(ctx, nil, in.Levels)
	if err != nil {
		return Environment{}, counts, err
	}
	id, err := s.stageEnvironment(ctx, in.ID)
	if err != nil {
		return Environment{}, counts, err
	}
	rec := envRecord{ID: id, UUID: s.newUUID(), Components: components, Levels: levels}
	if in.UUID != "" {
		_, err := s.idx.Get(ctx, uuidKey(in.UUID))
		switch {
		case errors.Is(err, store.ErrNotFound):
			rec.UUID = in.UUID
		case err != nil && !errors.Is(err, store.ErrInvalidKey):
			return Environment{}, counts, err
		}
	}
	var (
		staged  [][]store.Op
		renamed map[string]string
	)
	if stage != nil {
		if staged, renamed, err = stage(ctx, rec.environment()); err != nil {
			return Environment{}, counts, err
		}
	}
	w := newStagedWriter(ctx, s)
	err = w.documents(ctx, rec, resdefs, renamed, docs, &counts)
	for _, group := range staged {
		if err != nil {
			break
		}
		err = w.add(group...)
	}
	if err == nil {
		err = w.flush()
	}
	if werr := w.wait(); err == nil {
		err = werr
	}
	if err == nil {
		last := []store.Op{
			store.Create(envKey(id), mustJSON(rec)),
			uuidAlias(kindEnv, rec.ident()),
			store.Delete(envRetiredKey(id)),
		}
		for _, c := range components {
			last = append(last, store.Check(componentKey(c.ID), store.Cond{Kind: store.MustExist}))
		}
		err = w.write(ctx, last)
	}
	if err != nil {
		w.undo(ctx)
		return Environment{}, ImportCounts{}, err
	}
	audit.Note(ctx, id, 0)
	return rec.environment(), counts, nil
}

// importComponents finds or creates the components of an import and returns
// their identities and those of their definitions by component and name.
// Every component and definition is looked at before any is created.
func (s *Service) importComponents(ctx context.Context, in []ExportedComponent) ([]Ident, map[[2]string]int64, error) {
	type missing struct {
		component string
		def       ExportedDefinition
	}
	var (
		newComponents []NewComponent
		newDefs       []missing
	)
	seen := make(map[string]bool)
	for _, c := range in {
		if seen[c.Name] {
			return nil, nil, errs.Invalidf("the export names component %s twice", c.Name)
		}
		seen[c.Name] = true
		rec, _, err := s.componentByRef(ctx, c.Name)
		if errs.Is(err, errs.NotFound) {
			nc := NewComponent{Name: c.Name}
			for _, d := range c.Definitions {
				nc.ResourceDefinitions = append(nc.ResourceDefinitions, NewResourceDefinition{Name: d.Name, Content: d.Content})
			}
			newComponents = append(newComponents, nc)
			continue
		}
		if err != nil {
			return nil, nil, err
		}
		defs, err := s.componentDefinitions(ctx, ptr(rec.ident()))
		if err != nil {
			return nil, nil, err
		}
	definitions:
		for _, d := range c.Definitions {
			content, err := s.checkContent(d.Content)
			if err != nil {
				return nil, nil, err
			}
			for _, have := range defs {
				if have.rec.Name == d.Name {
					if !bytes.Equal(have.rec.Content, content) {
						return nil, nil, errs.Conflictf("resource definition %s of component %s differs from the export's: make them the same, or import into a store without it", d.Name, c.Name)
					}
					continue definitions
				}
			}
			newDefs = append(newDefs, missing{c.Name, d})
		}
	}
	for _, nc := range newComponents {
		if _, err := s.CreateComponent(ctx, nc); err != nil {
			return nil, nil, err
		}
	}
	for _, m := range newDefs {
		if _, err := s.CreateResourceDefinition(ctx, NewResourceDefinition{Name: m.def.Name, Component: m.component, Content: m.def.Content}); err != nil {
			return nil, nil, err
		}
	}
	idents := []Ident{}
	resdefs := make(map[[2]string]int64)
	for _, c := range in {
		rec, _, err := s.componentByRef(ctx, c.Name)
		if err != nil {
			return nil, nil, err
		}
		defs, err := s.componentDefinitions(ctx, ptr(rec.ident()))
		if err != nil {
			return nil, nil, err
		}
		for _, d := range defs {
			resdefs[[2]string{c.Name, d.rec.Name}] = d.rec.ID
		}
		idents = append(idents, rec.ident())
	}
	if len(idents) > store.MaxWriteBatch/2 {
		return nil, nil, errs.Invalidf("an environment has at most %d components", store.MaxWriteBatch/2)
	}
	return idents, resdefs, nil
}

// stageEnvironment picks the id of an imported environment, want when this
// store never had it, and marks it retired until the import's last write:
// no environment can be created with it meanwhile, and an import that fails
// leaves it retired, so what it may have left behind never shows.
func (s *Service) stageEnvironment(ctx context.Context, want int64) (int64, error) {
	if want >= 1 && want <= store.MaxChosenID {
		if err := store.ReserveID(ctx, s.idx, counterKey(kindEnv), want); err != nil {
			return 0, err
		}
		err := s.idx.Write(ctx, store.Create(envRetiredKey(want), []byte("{}")), store.Check(envKey(want), store.Cond{Kind: store.MustNotExist}))
		if !errors.Is(err, store.ErrConflict) {
			return want, err
		}
	}
	id, err := store.NextID(ctx, s.idx, counterKey(kindEnv))
	if err != nil {
		return 0, err
	}
	return id, s.idx.Write(ctx, store.Create(envRetiredKey(id), []byte("{}")))
}

// stagedWriter writes an import's items in batches of at most
// store.MaxWriteBatch operations and remembers what they created, for undo.
// The batches are independent (each creates keys of its own and checks only
// blob guards), so several are written at once.
type stagedWriter struct {
	s       *Service
	pending []pendingVersion
	ops     []store.Op
	keys    map[store.Key]bool // the keys of ops

	// writes are the batches under way, under ctx (ended by the first that fails).
	writes *errgroup.Group
	ctx    context.Context

	mu      sync.Mutex
	created []store.Key
}

// batchesInFlight is how many of an import's batches are written at once:
// an index a network away (DynamoDB) takes them in parallel, the embedded
// one commits them together (store.WithBulk).
const batchesInFlight = 8

func newStagedWriter(ctx context.Context, s *Service) *stagedWriter {
	g, gctx := errgroup.WithContext(store.WithBulk(ctx))
	g.SetLimit(batchesInFlight)
	return &stagedWriter{s: s, writes: g, ctx: gctx}
}

// add queues ops, which go in one batch, writing what is queued first when they do not fit.
func (w *stagedWriter) add(ops ...store.Op) error {
	if len(w.ops)+len(ops) > store.MaxWriteBatch {
		if err := w.flush(); err != nil {
			return err
		}
	}
	if w.keys == nil {
		w.keys = make(map[store.Key]bool)
	}
	for _, op := range ops {
		if w.keys[op.Key] {
			if op.Kind == store.OpCheck {
				continue // a blob's guard, checked once per batch
			}
			return fmt.Errorf("import writes %s/%s twice", op.Key.Partition, op.Key.Sort)
		}
		w.keys[op.Key] = true
		w.ops = append(w.ops, op)
	}
	return nil
}

// flush starts the write of what is queued (waiting while batchesInFlight
// are under way); a batch that failed before is its error.
func (w *stagedWriter) flush() error {
	ops := w.ops
	w.ops, w.keys = nil, nil
	if err := context.Cause(w.ctx); err != nil {
		return err
	}
	if len(ops) > 0 {
		w.writes.Go(func() error { return w.write(w.ctx, ops) })
	}
	return nil
}

// wait waits for the batches under way and returns the first failure.
func (w *stagedWriter) wait() error { return w.writes.Wait() }

// write writes ops in one batch and remembers what they created.
func (w *stagedWriter) write(ctx context.Context, ops []store.Op) error {
	if len(ops) == 0 {
		return nil
	}
	if err := w.s.idx.Write(ctx, ops...); err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, op := range ops {
		// Only creations: a put over an existing item (a guard of something
		// the import reuses) is not the import's to undo.
		if op.Kind == store.OpPut && op.Cond.Kind == store.MustNotExist {
			w.created = append(w.created, op.Key)
		}
	}
	return nil
}

// undo deletes what the import created, even when its request has ended;
// the batches under way end first. Blobs are left to the garbage collector,
// once their references are gone.
func (w *stagedWriter) undo(ctx context.Context) {
	_ = w.wait() // what failed is being answered already
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for start := 0; start < len(w.created); start += store.MaxWriteBatch {
		batch := w.created[start:min(start+store.MaxWriteBatch, len(w.created))]
		ops := make([]store.Op, len(batch))
		for i, k := range batch {
			ops[i] = store.Delete(k)
		}
		if w.s.idx.Write(ctx, ops...) != nil {
			return // the environment stays invisible: its id is retired
		}
	}
}

// documents writes every version, head and level value of docs under the
// staged environment rec.
func (w *stagedWriter) documents(ctx context.Context, rec envRecord, resdefs map[[2]string]int64, renamed map[string]string, docs iter.Seq2[DocumentHistory, error], counts *ImportCounts) error {
	levelValues := make(map[store.Key]bool)
	heads := make(map[store.Key]bool)
	for doc, err := range docs {
		if err != nil {
			return err
		}
		resdef, ok := resdefs[[2]string{doc.Component, doc.Resource}]
		if !ok {
			return errs.Invalidf("a document of resource %s of component %s, which the export does not define", doc.Resource, doc.Component)
		}
		if doc.Kind != Values && doc.Kind != Overrides {
			return errs.Invalidf("a document of resource %s is of kind %q", doc.Resource, doc.Kind)
		}
		if len(doc.Path) > len(rec.Levels) {
			return errs.Invalidf("a document of resource %s is at %d levels; the environment has %d", doc.Resource, len(doc.Path), len(rec.Levels))
		}
		levels := make([]LevelValue, len(doc.Path))
		for i, v := range doc.Path {
			if to, ok := renamed[v]; ok && IsNodeLevel(rec.Levels[i].Name) {
				v = to
			}
			levels[i] = LevelValue{Name: rec.Levels[i].Name, Value: v}
			if err := validLevelValue(levels[i]); err != nil {
				return err
			}
			k := levelValueKey(rec.ID, rec.Levels[i].ID, v)
			if !levelValues[k] {
				levelValues[k] = true
				if err := w.add(store.Create(k, []byte("{}"))); err != nil {
					return err
				}
			}
		}
		path := levelPath(levels)
		head := headKey(rec.ID, resdef, doc.Kind, path)
		if err := checkKeyLength(head, versionsPartition(rec.ID, resdef, Overrides, path)); err != nil {
			return err
		}
		if heads[head] {
			return errs.Invalidf("the export holds the %s of resource %s at /%s twice", doc.Kind, doc.Resource, path)
		}
		heads[head] = true
		if len(doc.Versions) == 0 {
			return errs.Invalidf("a document of resource %s has no versions", doc.Resource)
		}
		for i, v := range doc.Versions {
			if err := checkImportedVersion(v, i+1); err != nil {
				return errs.Invalidf("resource %s, %s at /%s: %v", doc.Resource, doc.Kind, path, err)
			}
			pv := pendingVersion{key: versionKey(rec.ID, resdef, doc.Kind, path, v.Version.Version), value: mustJSON(v.Version), content: v.Content}
			if i == len(doc.Versions)-1 {
				pv.head = head
			}
			if err := w.addVersion(ctx, pv); err != nil {
				return err
			}
		}
		counts.Documents++
		counts.Versions += len(doc.Versions)
	}
	if err := w.putPending(ctx); err != nil {
		return err
	}
	return w.flush()
}

// pendingVersion is an imported version whose blob is not stored yet.
type pendingVersion struct {
	key   store.Key
	value []byte
	// head is the key of the document's head when this is its last version.
	head    store.Key
	content []byte
}

const (
	// blobWindow is how many versions' blobs an import stores at a time, all
	// at once: a blob store a network away (S3) takes them in parallel, the
	// embedded one commits them together (store.WithBulk).
	blobWindow = 64
)

// addVersion queues v; a full window's blobs are stored and their versions queued for writing.
func (w *stagedWriter) addVersion(ctx context.Context, v pendingVersion) error {
	w.pending = append(w.pending, v)
	if len(w.pending) < blobWindow {
		return nil
	}
	return w.putPending(ctx)
}

// putPending stores the blobs of the pending versions, in parallel, and
// queues each version's item (with its head's, for a last version) and its
// blob's reference.
func (w *stagedWriter) putPending(ctx context.Context) error {
	refs := make([]store.BlobRef, len(w.pending))
	g, gctx := errgroup.WithContext(store.WithBulk(ctx))
	for i, v := range w.pending {
		g.Go(func() (err error) {
			refs[i], err = store.PutBlob(gctx, w.s.idx, w.s.blobs, v.content)
			return err
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	for i, v := range w.pending {
		ops := append([]store.Op{store.Create(v.key, v.value)}, refs[i].Ops...)
		if v.head != (store.Key{}) {
			ops = append(ops, store.Create(v.head, v.value))
		}
		if err := w.add(ops...); err != nil {
			return err
		}
	}
	w.pending = w.pending[:0]
	return nil
}

// checkImportedVersion refuses a version that is not number want, or whose
// content is not the canonical document its size and SHA-256 describe.
func checkImportedVersion(v VersionContent, want int) error {
	if v.Version.Version != want {
		return fmt.Errorf("version %d where version %d belongs", v.Version.Version, want)
	}
	canon, err := canonicalDocument(v.Content)
	if err != nil || !bytes.Equal(canon, v.Content) {
		return fmt.Errorf("the content of version %d is not a stored document", want)
	}
	if int64(len(v.Content)) != v.Size || sha256Hex(v.Content) != v.SHA256 {
		return fmt.Errorf("the content of version %d does not match its size and sha256", want)
	}
	return nil
}
