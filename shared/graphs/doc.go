// Package graphs keeps deployment graphs (spec 002): releases and plugins as
// small registries, clusters (tuningbox environments) with their release and
// enabled plugins, one graph per (owner, type), the merged and ordered task
// list of a cluster, its DOT rendering, each node's share of it (tasks chosen
// by the node's roles, ordered across nodes by cross dependencies), and
// executions as transactions whose frozen plans the nodes' agents (tuningbox
// agent) drive through the API. The planning itself (tasks, order, placement,
// cross-node waits, bodies) is package planner's, which reads no store.
//
// Storage layout (all in the index, partition prefix "gr#"):
//
//	gr#counter            / graph | release | plugin          id counters (store.NextID)
//	gr#release, gr#plugin / SortID(id)                        registry entry {id, name, version}
//	gr#release-name, ...  / len:name:version                  uniqueness of (name, version)
//	gr#cluster            / SortID(id)                        cluster settings {release_id, plugins}
//	gr#graph              / SortID(id)                        graph record (tasks inline or in a blob)
//	gr#owner#<kind>#<id>  / <type>                            {graph_id}: one graph per (owner, type)
//	gr#lock               / SortID(cluster)                   the cluster's running transaction
//	gr#tx                 / <uuid>                            top-level transaction
//	gr#txsub              / <uuid>                            sub-transaction (one per executed graph)
//	gr#txnode#<sub uuid>  / <node>                            a node's progress through a sub-transaction
//	gr#txcluster#<id>     / <uuid>                            a cluster's transaction history
//
// A graph whose record would exceed inlineLimit keeps its tasks in store.Blobs
// and only their hash in the record; frozen execution plans always live in blobs.
package graphs
