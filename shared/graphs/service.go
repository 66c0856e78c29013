package graphs

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/tuningbox/tuningbox/shared/cache"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Clusters is what graphs needs from the environments a deployment runs on
// (shared/app adapts the environment and node stores to it).
type Clusters interface {
	// Exists returns nil when the cluster exists and an errs.NotFound error when it does not.
	Exists(ctx context.Context, id string) error
	// Nodes returns the cluster's nodes with their roles, and an errs.NotFound
	// error when the cluster does not exist.
	Nodes(ctx context.Context, id string) ([]planner.ClusterNode, error)
	// Identify resolves a cluster given by integer id or UUID, and answers an
	// errs.NotFound error when it does not exist.
	Identify(ctx context.Context, ref string) (ClusterIdentity, error)
	// KeyOrigin returns the document version that wrote key (a dot path) of
	// resource's effective document at node, as it was at instant at (zero:
	// now); an errs.Conflict error when the key has no value there.
	KeyOrigin(ctx context.Context, cluster, resource, node, key string, at time.Time) (wire.KeyOrigin, error)
	// HasResource returns nil when the cluster's environment defines the
	// resource (by name or id) and an errs.NotFound error when it does not.
	HasResource(ctx context.Context, cluster, resource string) error
	// NodeData returns the deployment data of the cluster's nodes (by id):
	// the effective document of resource at each node, now (zero at) or as
	// it was at that instant; an errs.NotFound error when the cluster has no
	// such resource. A node with no document at that instant is left out.
	NodeData(ctx context.Context, cluster, resource string, nodes []string, at time.Time) (map[string]NodeDocument, error)
	// NodeParts returns each node's deployment data split as Fuel split it:
	// the node level's own document of resource ($node in a task's yaql) and
	// the effective document of the levels above it ($common), now (zero at)
	// or as they were at that instant.
	NodeParts(ctx context.Context, cluster, resource string, nodes []string, at time.Time) (map[string]NodeParts, error)
}

// NodeParts is a node's deployment data as two documents (JSON; empty: none).
type NodeParts struct {
	Own, Common []byte
}

// Service implements the deployment graph domain over the index and blobs.
type Service struct {
	idx      store.Index
	blobs    store.Blobs
	clusters Clusters
	now      func() time.Time
	// decoded holds task lists by the SHA-256 of their JSON. Graphs and frozen
	// plans are read far more often than written (every agent claim reads its
	// plan), and decoding with validation is most of the cost of a read.
	decoded *cache.LRU[[sha256.Size]byte, decodedTasks]
	// plans holds decoded frozen plans by blob hash: every claim and report reads one.
	plans *cache.LRU[string, decodedPlan]
	// txRecords holds decoded transaction records by key and revision (decodeTx).
	txRecords *cache.LRU[recordAt, decodedRecord]
	// patterns holds the compiled "/re/" names plans match nodes and tasks with.
	patterns *planner.Patterns
	// executions wakes waiting cluster claims when an execution starts.
	executions executions
	// heartbeat is how often agents running a task claim it again.
	heartbeat time.Duration
	// deadlineChecks spaces the deadline checks of each transaction (enforceDeadlines).
	deadlineChecks *cache.LRU[string, time.Time]
	// passedEvery remembers how many nodes of a compact wait are known to
	// have passed its task (everyPassed).
	passedEvery *cache.LRU[everyWait, int]
	// states counts the transactions and tasks that entered each state (metrics).
	states stateCounts
	// planLimits bound the requests that plan.
	planLimits PlanLimits
}

type decodedPlan struct {
	plan *storedPlan
	size int64
}

type decodedTasks struct {
	tasks []planner.Task
	size  int64 // of the JSON they were decoded from
}

// DefaultCacheBytes is the cache budget of a service made without WithCacheBytes.
const DefaultCacheBytes = 64 << 20

// Option configures a Service.
type Option func(*Service)

// WithCacheBytes bounds the service's caches together to total bytes: a
// sixty-fourth for when each transaction's deadlines were last checked, one
// for how far compact waits are known passed, a sixteenth for compiled names,
// one for decoded transaction records, the rest halved between decoded task
// lists and frozen plans, whose entries count twice the JSON they were decoded from
// (the decoded form is about as large again) and their compiled expressions
// (which a few bytes of regular expression make 50 KB).
func WithCacheBytes(total int64) Option {
	return func(s *Service) {
		checks, names, records := total/64, total/16, total/16
		rest := (total - 2*checks - names - records) / 2
		s.deadlineChecks = newDeadlineChecks(checks)
		s.passedEvery = cache.New[everyWait](checks, func(int) int64 { return everyWaitBytes })
		s.patterns = planner.NewPatterns(names)
		s.decoded = cache.New[[sha256.Size]byte](rest, func(d decodedTasks) int64 { return 2*d.size + planner.CompiledBytes(d.tasks) })
		s.plans = cache.New[string](rest, func(d decodedPlan) int64 { return 2*d.size + planner.CompiledBytes(d.plan.Tasks) })
		s.txRecords = cache.New[recordAt](records, func(d decodedRecord) int64 { return 2*d.size + cache.EntryOverhead })
	}
}

// NewService returns the graphs service.
func NewService(idx store.Index, blobs store.Blobs, clusters Clusters, opts ...Option) *Service {
	s := &Service{
		idx: idx, blobs: blobs, clusters: clusters,
		now:       func() time.Time { return time.Now().UTC() },
		heartbeat: DefaultHeartbeat,
	}
	WithCacheBytes(DefaultCacheBytes)(s)
	WithPlanLimits(PlanLimits{})(s)
	for _, o := range opts {
		o(s)
	}
	return s
}

// decodeTasks decodes a stored task list. The tasks returned may be shared
// with other callers: they are never modified in place (changes copy the Task).
func (s *Service) decodeTasks(raw []byte) ([]planner.Task, error) {
	key := sha256.Sum256(raw)
	if d, ok := s.decoded.Get(key); ok {
		return d.tasks, nil
	}
	var tasks []planner.Task
	if err := json.Unmarshal(raw, &tasks); err != nil {
		return nil, err
	}
	s.decoded.Add(key, decodedTasks{tasks: tasks, size: int64(len(raw))})
	return tasks, nil
}

const prefix = "gr#"

var counterPartition = prefix + "counter"

func graphKey(id int64) store.Key {
	return store.Key{Partition: prefix + "graph", Sort: store.SortID(id)}
}

func ownerPartition(o Owner) string {
	return fmt.Sprintf("%sowner#%s#%d", prefix, o.Kind, o.ID)
}

func ownerGraphKey(o Owner, graphType string) store.Key {
	return store.Key{Partition: ownerPartition(o), Sort: graphType}
}

func clusterKey(id int64) store.Key {
	return store.Key{Partition: prefix + "cluster", Sort: store.SortID(id)}
}

// clusterName is the id the Clusters interface knows a cluster by.
func clusterName(id int64) string { return strconv.FormatInt(id, 10) }

// getMany reads keys in BatchGet-sized chunks.
func (s *Service) getMany(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	out := make(map[store.Key]store.Item, len(keys))
	for start := 0; start < len(keys); start += store.MaxBatchGet {
		items, err := s.idx.BatchGet(ctx, keys[start:min(start+store.MaxBatchGet, len(keys))])
		if err != nil {
			return nil, err
		}
		for k, it := range items {
			out[k] = it
		}
	}
	return out, nil
}

// writeChunks applies ops in batches of at most store.MaxWriteBatch; each batch is atomic.
func (s *Service) writeChunks(ctx context.Context, ops []store.Op) error {
	for start := 0; start < len(ops); start += store.MaxWriteBatch {
		if err := s.idx.Write(ctx, ops[start:min(start+store.MaxWriteBatch, len(ops))]...); err != nil {
			return err
		}
	}
	return nil
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with plain records
	}
	return b
}

func decodeItem(it store.Item, v any) error {
	if err := json.Unmarshal(it.Value, v); err != nil {
		return fmt.Errorf("decode %s/%s: %w", it.Partition, it.Sort, err)
	}
	return nil
}

// notFoundIf turns store.ErrNotFound into the given domain error and leaves other errors alone.
func notFoundIf(err error, nf error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nf
	}
	return err
}
