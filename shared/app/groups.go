package app

import (
	"context"
	"log/slog"
	"strconv"
	"time"

	"github.com/tuningbox/tuningbox/shared/app/core"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/authapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/configapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/console"
	"github.com/tuningbox/tuningbox/shared/httpapi/graphsapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/nodesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/overridesapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
	"github.com/tuningbox/tuningbox/shared/httpapi/storeapi"
	"github.com/tuningbox/tuningbox/shared/httpapi/templatesapi"
	"github.com/tuningbox/tuningbox/shared/metrics"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/overrides"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/blobcache"
	"github.com/tuningbox/tuningbox/shared/templates"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// services holds one instance of every domain service over a backend.
type services struct {
	backend   store.Backend
	config    *configdb.Service
	overrides *overrides.Service
	nodes     *nodes.Service
	templates *templates.Service
	graphs    *graphs.Service
	// compressed holds gzip encodings of documents by ETag.
	compressed *httpapi.Compressed
	// guard authenticates, authorizes and audits every request (shared/httpapi/authapi).
	guard *authapi.Middleware
	// metrics count the requests, the store's calls and what the services report.
	metrics *Metrics
}

// newServices builds the services over b, whose calls they count, with its
// blobs behind a bounded in-memory cache (blobs are immutable, so the cache is
// never stale).
func newServices(b store.Backend, cfg core.Config, logger *slog.Logger, opts Options) (*services, error) {
	m := newMetrics(opts.Scraper)
	shares := cfg.CacheShares()
	cachedBlobs := blobcache.New(newCountedBlobs(b.Blobs, m.registry), shares.Blobs)
	m.registry.Cache("blobs", cachedBlobs.(metrics.CacheStats))
	b = store.Backend{Index: newCountedIndex(b.Index, m.registry), Blobs: cachedBlobs, Close: b.Close, Backup: b.Backup}
	registry := &registryNodes{}
	configOptions := []configdb.Option{configdb.WithNodes(registry), configdb.WithCacheBytes(shares.ConfigDB)}
	if opts.Schemas != nil {
		configOptions = append(configOptions, opts.Schemas)
	}
	config := configdb.NewService(b.Index, b.Blobs, configOptions...)
	// Resource definitions whose content names this validator hold override data (spec 001).
	config.RegisterValidator(overrides.ValidatorName, overrides.ValidateData)
	nodeRegistry := nodes.NewService(b.Index, configEnvironments{config})
	registry.svc = nodeRegistry
	s := &services{
		backend:    b,
		config:     config,
		overrides:  overrides.NewService(configEffective{config}),
		nodes:      nodeRegistry,
		templates:  templates.NewService(b.Index),
		graphs:     graphs.NewService(b.Index, b.Blobs, environmentClusters{config, nodeRegistry}, graphs.WithCacheBytes(shares.Graphs)),
		compressed: httpapi.NewCompressed(shares.Gzip),
		metrics:    m,
	}
	config.RegisterMetrics(m.registry)
	s.graphs.RegisterMetrics(m.registry)
	m.registry.Cache("gzip", s.compressed)
	// Deleting an environment deletes its deployment graphs in the same atomic write.
	config.OnDeleteEnvironment(s.graphs.DeleteClusterOps)
	var err error
	s.guard, err = core.NewGuard(b.Index, cfg, logger, nodeRegistry, configEnvironmentIDs{s})
	return s, err
}

// environmentServices are what an environment's export reads and its import writes.
func (s *services) environmentServices() envexport.Services {
	return envexport.Services{Config: s.config, Nodes: s.nodes, Graphs: s.graphs, Templates: s.templates}
}

// configEnvironments lets the node registry resolve ConfigDB environments.
type configEnvironments struct{ db *configdb.Service }

func (c configEnvironments) Environment(ctx context.Context, ref string) (nodes.Environment, error) {
	env, err := c.db.GetEnvironment(ctx, ref)
	if err != nil {
		return nodes.Environment{}, err
	}
	return nodes.Environment{ID: env.ID, UUID: env.UUID}, nil
}

// registryNodes lets the ConfigDB resolve its node level through the node registry.
type registryNodes struct{ svc *nodes.Service }

func (r *registryNodes) Resolve(ctx context.Context, ref string) (configdb.Node, error) {
	n, err := r.svc.Resolve(ctx, ref)
	return configNode(n), err
}

func (r *registryNodes) RecordKey(id int64) store.Key { return nodes.RecordKey(id) }

func (r *registryNodes) DecodeRecord(value []byte) (configdb.Node, error) {
	n, err := nodes.DecodeRecord(value)
	return configNode(n), err
}

// InEnvironment lists an environment's nodes, for the ConfigDB's dry runs.
func (r *registryNodes) InEnvironment(ctx context.Context, env int64) ([]configdb.Node, error) {
	list, err := r.svc.InEnvironment(ctx, env)
	out := make([]configdb.Node, len(list))
	for i, n := range list {
		out[i] = configNode(n)
	}
	return out, err
}

func configNode(n nodes.Node) configdb.Node {
	return configdb.Node{ID: n.ID, UUID: n.UUID, FQDN: n.FQDN, Environment: n.EnvironmentID, Levels: n.Levels}
}

// environmentClusters lets the graphs domain treat ConfigDB environments as
// clusters, with the node registry's nodes (by legacy integer id) as members.
type environmentClusters struct {
	db    *configdb.Service
	nodes *nodes.Service
}

func (c environmentClusters) Exists(ctx context.Context, id string) error {
	_, err := c.db.GetEnvironment(ctx, id)
	return err
}

func (c environmentClusters) Identify(ctx context.Context, ref string) (graphs.ClusterIdentity, error) {
	env, err := c.db.GetEnvironment(ctx, ref)
	if err != nil {
		return graphs.ClusterIdentity{}, err
	}
	return graphs.ClusterIdentity{ID: env.ID, UUID: env.UUID}, nil
}

// HasResource reads the resource's values at the environment's global level:
// a resource the environment does not define is not found.
func (c environmentClusters) HasResource(ctx context.Context, cluster, resource string) error {
	_, err := c.db.Read(ctx, configdb.ReadQuery{DocRef: configdb.DocRef{Env: cluster, Resource: resource}, Kind: configdb.Values})
	return err
}

func (c environmentClusters) Nodes(ctx context.Context, id string) ([]planner.ClusterNode, error) {
	env, err := c.db.GetEnvironment(ctx, id)
	if err != nil {
		return nil, err
	}
	members, err := c.nodes.InEnvironment(ctx, env.ID)
	if err != nil {
		return nil, err
	}
	out := make([]planner.ClusterNode, len(members))
	for i, n := range members {
		out[i] = planner.ClusterNode{ID: strconv.FormatInt(n.ID, 10), Roles: n.Roles, FQDN: n.FQDN}
	}
	return out, nil
}

// configEffective lets the overrides domain read override data from the
// effective values of a ConfigDB resource.
type configEffective struct{ db *configdb.Service }

func (c configEffective) EffectiveJSON(ctx context.Context, env string, levels []overrides.Level, resource string) ([]byte, error) {
	path := make([]configdb.LevelValue, len(levels))
	for i, l := range levels {
		path[i] = configdb.LevelValue{Name: l.Name, Value: l.Value}
	}
	doc, err := c.db.Effective(ctx, configdb.EffectiveQuery{Env: env, Levels: path, Resource: resource})
	if err != nil {
		return nil, err
	}
	return doc.Body, nil
}

// Group is an endpoint group: the routes of the table with its Name
// (routes.Group), which one Lambda function serves, and the binding of their
// handlers to the services. A function's binary links only the handlers of
// the group it names; the local server mounts them all (allGroups).
type Group struct {
	Name  string
	mount func(router *routes.Router, s *services)
}

// The endpoint groups.
var (
	ConfigRoutes    = Group{routes.GroupConfig, mountConfig}
	GraphsRoutes    = Group{routes.GroupGraphs, mountGraphs}
	TemplatesRoutes = Group{routes.GroupTemplates, mountTemplates}
	AuthRoutes      = Group{routes.GroupAuth, mountAuth}
	WatchRoutes     = Group{routes.GroupWatch, mountWatch}
)

// allGroups lists every endpoint group, by name.
func allGroups() []Group {
	return []Group{AuthRoutes, ConfigRoutes, GraphsRoutes, TemplatesRoutes, WatchRoutes}
}

func mountConfig(router *routes.Router, s *services) {
	// Both public: the microversion document and the OpenAPI document of the route table.
	router.Mount(routes.Handlers{"versions": httpapi.ServeVersions, "openapi": routes.ServeDocument, "metrics": s.metrics.serve})
	configapi.Register(router, s.config, s.compressed)
	overridesapi.Register(router, s.overrides)
	// Blob garbage collection: the blobs are the ConfigDB's documents (and graphs' tasks).
	storeapi.Register(router, s.backend, s.environmentServices())
	// The operators' console, whose files are public: it calls the other groups with a session.
	console.Register(router)
}

// mountWatch: the config watchers' document reads, on their own path.
func mountWatch(router *routes.Router, s *services) {
	configapi.RegisterWatch(router, s.config, s.compressed)
}

// mountGraphs: releases, plugins, deployment graphs and their execution (environments act as clusters).
func mountGraphs(router *routes.Router, s *services) { graphsapi.Register(router, s.graphs) }

// mountTemplates: deploy templates, default deploy steps and the node registry.
func mountTemplates(router *routes.Router, s *services) {
	nodesapi.Register(router, s.nodes)
	templatesapi.Register(router, s.templates, s.nodes)
}

// mountAuth: users, API tokens and the audit log.
func mountAuth(router *routes.Router, s *services) { s.guard.Register(router) }

// NodeData reads each node's deployment data: the effective document of the
// resource at the node (by its short path: the node level, its placement
// above), every node's in one batched read.
func (c environmentClusters) NodeData(ctx context.Context, cluster, resource string, ids []string, at time.Time) (map[string]graphs.NodeDocument, error) {
	docs, err := c.db.ReadNodes(ctx, configdb.ReadQuery{
		DocRef: configdb.DocRef{Env: cluster, Resource: resource},
		Kind:   configdb.Values, Effective: true, AsOf: at,
	}, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]graphs.NodeDocument, len(docs))
	for id, doc := range docs {
		out[id] = graphs.NodeDocument{Body: doc.Body, ETag: doc.ETag}
	}
	return out, nil
}

// NodeParts reads each node's own document of the resource (the node level,
// not merged) and the effective document of its placement above it, for
// all the nodes in two batched reads.
func (c environmentClusters) NodeParts(ctx context.Context, cluster, resource string, ids []string, at time.Time) (map[string]graphs.NodeParts, error) {
	q := configdb.ReadQuery{DocRef: configdb.DocRef{Env: cluster, Resource: resource}, Kind: configdb.Values, AsOf: at}
	own, err := c.db.ReadNodes(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	q.Effective, q.Above = true, true
	common, err := c.db.ReadNodes(ctx, q, ids)
	if err != nil {
		return nil, err
	}
	out := make(map[string]graphs.NodeParts, len(ids))
	for _, id := range ids {
		var p graphs.NodeParts
		if d, ok := own[id]; ok {
			p.Own = d.Body
		}
		if d, ok := common[id]; ok {
			p.Common = d.Body
		}
		out[id] = p
	}
	return out, nil
}

// KeyOrigin reads who wrote a key of a node's deployment data (configdb.KeyProvenance).
func (c environmentClusters) KeyOrigin(ctx context.Context, cluster, resource, node, key string, at time.Time) (wire.KeyOrigin, error) {
	src, err := c.db.KeyProvenance(ctx, cluster, node, resource, key, at)
	if err != nil {
		return wire.KeyOrigin{}, err
	}
	out := wire.KeyOrigin{Key: key, Level: src.Level, Version: src.Version, CreatedAt: src.CreatedAt}
	if w := src.WrittenBy; w != nil {
		out.WrittenBy = &wire.Writer{Principal: w.Principal, Role: w.Role, RequestID: w.RequestID, Time: w.Time}
	}
	return out, nil
}
