// Package configdb is the ConfigDB domain (spec 000, tuning-box compatible):
// components and their resource definitions, environments with ordered
// hierarchy levels, per (environment, level path, resource) a values and an
// overrides document with immutable versions, and the effective merge Hiera reads.
//
// It depends only on the storage contract (shared/store) and returns errs errors;
// shared/httpapi/configapi serves it over HTTP.
package configdb

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Service implements the ConfigDB over an index and a blob store. It is safe for concurrent use.
type Service struct {
	idx     store.Index
	blobs   store.Blobs
	now     func() time.Time
	newUUID func() string

	validatorsMu sync.RWMutex
	validators   map[string]func(doc []byte) error
	// compileSchema compiles the definitions' JSON Schemas (WithSchemas; nil: none).
	compileSchema func(raw json.RawMessage) (Schema, error)

	// cascades add other domains' writes to the deletion of an environment.
	cascades []EnvironmentCascade

	// documents reads stored documents, and snapshots what a document
	// operation reads from the index, each through its cache (readcache.go).
	documents cachedDocuments
	snapshots cachedSnapshots
	// answers renders what answers a read, through its cache (answers.go).
	answers cachedAnswers
	// cache is what the operations decoded and computed, kept while it holds.
	cache *readCache
	// nodes resolves the node-bound level (nil: it holds free values).
	nodes NodeRegistry
	// watch holds the reads waiting for a change (Wait).
	watch *watchHub
	// docWriters is how the writers of one document take turns.
	docWriters docWriters
}

// Option configures a Service.
type Option func(*Service)

// WithClock sets the source of timestamps (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithUUIDs sets the UUID generator (tests).
func WithUUIDs(gen func() string) Option { return func(s *Service) { s.newUUID = gen } }

// WithCacheBytes bounds every cache of the service together to total bytes
// (see readCache for the shares; the writers' contention state takes an
// entity cache's share).
func WithCacheBytes(total int64) Option {
	return func(s *Service) {
		s.cache = newReadCache(total)
		s.documents = newCachedDocuments(blobDocuments{s.blobs}, documentShare(total))
		s.snapshots = newCachedSnapshots(storeSnapshots{s}, s.idx, entityShare(total))
		s.answers = newCachedAnswers(mergedAnswers{s}, answerShare(total))
		s.docWriters.contention.Limit(entityShare(total))
	}
}

// DefaultCacheBytes is the cache budget of a service made without WithCacheBytes.
const DefaultCacheBytes = 128 << 20

// NewService returns a ConfigDB service over idx and blobs.
func NewService(idx store.Index, blobs store.Blobs, opts ...Option) *Service {
	s := &Service{
		idx:        idx,
		blobs:      blobs,
		now:        time.Now,
		newUUID:    func() string { return uuid.NewString() },
		validators: make(map[string]func([]byte) error),
	}
	s.watch = newWatchHub(s.fingerprint, watchRecheck)
	WithCacheBytes(DefaultCacheBytes)(s)
	for _, o := range opts {
		o(s)
	}
	return s
}

// RegisterValidator makes fn the validator called name. A resource definition
// whose content is an object with "validator": name has every new values or
// overrides document checked by fn before it is stored; fn's error is returned
// to the writer (an errs error keeps its kind, anything else becomes 400).
func (s *Service) RegisterValidator(name string, fn func(doc []byte) error) {
	s.validatorsMu.Lock()
	defer s.validatorsMu.Unlock()
	s.validators[name] = fn
}

// EnvironmentCascade returns the writes that belong in the same atomic write
// as the deletion of environment envID (another domain's data about it), or
// an error that refuses the deletion.
type EnvironmentCascade func(ctx context.Context, envID int64) ([]store.Op, error)

// OnDeleteEnvironment adds fn to every environment deletion. Call it while
// wiring the services, before they serve.
func (s *Service) OnDeleteEnvironment(fn EnvironmentCascade) {
	s.cascades = append(s.cascades, fn)
}

func (s *Service) validator(name string) (func([]byte) error, bool) {
	s.validatorsMu.RLock()
	defer s.validatorsMu.RUnlock()
	fn, ok := s.validators[name]
	return fn, ok
}

// getRecord reads and decodes the item at k; a missing item is store.ErrNotFound.
func getRecord[T any](ctx context.Context, idx store.Index, k store.Key) (T, int64, error) {
	var v T
	rev, err := store.GetJSON(ctx, idx, k, &v)
	return v, rev, err
}

// batchGet is store.Index.BatchGet without the 100-key bound.
func (s *Service) batchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	const maxKeys = 100
	if len(keys) <= maxKeys {
		return s.idx.BatchGet(ctx, keys)
	}
	all := make(map[store.Key]store.Item, len(keys))
	for start := 0; start < len(keys); start += maxKeys {
		items, err := s.idx.BatchGet(ctx, keys[start:min(start+maxKeys, len(keys))])
		if err != nil {
			return nil, err
		}
		for k, it := range items {
			all[k] = it
		}
	}
	return all, nil
}

// uuidAlias returns the op creating the UUID alias of an entity.
func uuidAlias(kind string, id Ident) store.Op {
	return store.Create(uuidKey(id.UUID), mustJSON(aliasRecord{Kind: kind, ID: id.ID}))
}

// newIdent allocates the next id of kind and a fresh UUID.
func (s *Service) newIdent(ctx context.Context, kind string) (Ident, error) {
	id, err := store.NextID(ctx, s.idx, counterKey(kind))
	if err != nil {
		return Ident{}, err
	}
	return Ident{ID: id, UUID: s.newUUID()}, nil
}

// resolveUUID returns the id of the entity of kind that u names.
func (s *Service) resolveUUID(ctx context.Context, kind, u string) (int64, error) {
	a, _, err := getRecord[aliasRecord](ctx, s.idx, uuidKey(u))
	if err != nil {
		return 0, err
	}
	if a.Kind != kind {
		return 0, store.ErrNotFound
	}
	return a.ID, nil
}

// notFound turns store.ErrNotFound into a 404 with msg; other errors pass through.
func notFound(err error, format string, args ...any) error {
	if errors.Is(err, store.ErrNotFound) {
		return errs.NotFoundf(format, args...)
	}
	return err
}
