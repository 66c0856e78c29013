// Package keyspace says which partitions of the index and which objects of the
// blob bucket each Lambda function of the stack touches: the one list that the
// CDK app (infra) turns into each function's IAM grants, with
// dynamodb:LeadingKeys conditions on these partition-key prefixes, and that
// the tests check against the store's key design (shared/store/awsstore/doc.go)
// and against the calls each function's code path makes (apptest's
// Lambda-shaped server). It imports nothing, so the CDK module can read it.
package keyspace

// Partition-key prefixes of the index, one per owner.
const (
	Config    = "cfg#"   // shared/configdb
	Graphs    = "gr#"    // shared/graphs
	Templates = "tpl#"   // shared/templates
	Nodes     = "node#"  // shared/nodes
	Auth      = "auth#"  // shared/auth: users and tokens
	Audit     = "audit#" // shared/auth/audit
	Blob      = "blob#"  // shared/store: blob references and collection guards
)

// Prefixes lists every owner's prefix.
var Prefixes = []string{Config, Graphs, Templates, Nodes, Auth, Audit, Blob}

// BlobKeys are the object keys of the blob bucket (blobs/<hex sha256>).
const BlobKeys = "blobs/"

// Access is what one function may do: in the index, read the partitions of
// Read and write (put, delete, condition-check) those of Write; in the
// bucket, what Blobs says (on BlobKeys only).
type Access struct {
	Read, Write []string
	Blobs       BlobAccess
}

// BlobAccess is what a function may do with the blob bucket.
type BlobAccess int

const (
	// BlobsNone: the function keeps everything in the table.
	BlobsNone BlobAccess = iota
	// BlobsRead: it reads blobs that others write.
	BlobsRead
	// BlobsReadWrite: it stores blobs and reads them back.
	BlobsReadWrite
	// BlobsCollect: BlobsReadWrite, and it lists and deletes unreferenced
	// blobs (their current version: a delete marker, see infra/storage.go).
	BlobsCollect
)

// Function names besides the endpoint groups (shared/httpapi/routes).
const (
	Authorizer = "authorizer"
	GC         = "gc"
)

// Functions maps each function (an endpoint group, the authorizer, the
// collector) to its access. On Lambda the authorizer alone checks
// credentials: the groups get the caller from its answer and never read
// users, except the auth group that keeps them. Every group audits its writes
// and stores blobs with references (blob#) when it keeps any.
var Functions = map[string]Access{
	// The ConfigDB, overrides and the blob sweep; deleting an environment
	// deletes its deployment graphs; node-level values read the node registry;
	// a document's history names its writers from the audit log; exporting
	// and importing an environment reads and writes its nodes, its cluster's
	// graphs and its deploy templates.
	"config": {
		Read:  []string{Config, Nodes, Graphs, Templates, Blob, Audit},
		Write: []string{Config, Nodes, Graphs, Templates, Blob, Audit},
		Blobs: BlobsCollect,
	},
	// The config watchers' document reads (routes.GroupWatch): the reads
	// of the config function's documents, node-level ones through the node
	// registry; they write nothing.
	"watch": {
		Read:  []string{Config, Nodes, Blob},
		Blobs: BlobsRead,
	},
	// Deployment graphs; environments act as clusters, with the registry's nodes.
	"graphs": {
		Read:  []string{Graphs, Config, Nodes, Blob},
		Write: []string{Graphs, Blob, Audit},
		Blobs: BlobsReadWrite,
	},
	// Deploy templates, deploy steps and the node registry.
	"templates": {
		Read:  []string{Templates, Nodes, Config},
		Write: []string{Templates, Nodes, Audit},
	},
	// Users, tokens and the audit log, listed by environment (id or UUID).
	"auth": {
		Read:  []string{Auth, Audit, Config},
		Write: []string{Auth, Audit},
	},
	// Verifies passwords, tokens and certificates; a node user's identity
	// comes from the registry. Read-only.
	Authorizer: {
		Read: []string{Auth, Nodes},
	},
	// The hourly sweep: unreferenced blobs, and audit records past the
	// retention that the table's TTL does not delete (app.LambdaGC).
	GC: {
		Read:  []string{Blob, Audit},
		Write: []string{Blob, Audit},
		Blobs: BlobsCollect,
	},
}
