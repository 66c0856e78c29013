// Package awsstore is the AWS storage backend: store.Index on ONE DynamoDB
// table and store.Blobs on one S3 bucket with versioning on.
//
// # DynamoDB key design
//
// The table has a composite primary key and three other attributes:
//
//	pk  S  (partition key) = store.Key.Partition
//	sk  S  (sort key)      = store.Key.Sort
//	rev N  the item's revision: 1 on creation, +1 on every put (UpdateItem "ADD rev :one")
//	val B  the item's value, usually a JSON document
//	expires_at N  when the item may go (store.Op.Expires, Unix seconds): the
//	       table's TTL attribute; only expiring items (audit records) have it
//
// Every domain owns a partition-key prefix (configdb "cfg#", graphs "gr#",
// templates "tpl#", nodes "node#", auth "auth#", audit "audit#", and the
// store's blob references "blob#"), so one table holds every kind of item
// without collisions and without secondary indexes. Each Lambda function may
// touch only the prefixes of its own domains (dynamodb:LeadingKeys conditions
// on its grants, listed in shared/app/keyspace).
// For the ConfigDB, for example:
//
//	entities          pk=cfg#env            sk=SortID(id)          the entity's JSON
//	name lookups      pk=cfg#component-name sk=<name>              -> id
//	UUID lookups      pk=cfg#uuid           sk=<uuid>              -> {kind, id}
//	version heads     pk=cfg#head#<env>#<resdef>  sk=<kind>|<path> -> {version, sha256, ...}; rev is the CAS token
//	version lists     pk=cfg#ver#<env>#<resdef>#<kind>|<path>  sk=SortID(version), immutable
//	id counters       pk=cfg#counter        sk=<entity kind>       -> {last}
//
// A Query lists one partition in sort-key order (begins_with for a prefix), so
// every list the API serves is one partition. The table is on-demand
// (PAY_PER_REQUEST); reads are strongly consistent, as the store contract asks.
//
// Writes map to the cheapest DynamoDB call that keeps them atomic: one
// operation is a conditional UpdateItem (put) or DeleteItem, or a strongly
// consistent GetItem (check); several are one TransactWriteItems. Conditions
// become ConditionExpressions (attribute_not_exists(pk), attribute_exists(pk),
// rev = :rev); a failed condition is store.ErrConflict and nothing is applied.
//
// # S3 layout
//
// Blobs are immutable objects at blobs/<hex sha256>. A put is conditional
// (If-None-Match: *): it never replaces an object, so re-putting content that
// is already stored costs one request and creates no new object version.
// Versioning on the bucket guards against deletion by mistake. Because the
// ConfigDB stores a blob before the index write that references it, an index
// write that fails leaves at most an unreferenced blob, which readers never see.
//
// # Clients and calls
//
// Connect builds the DynamoDB and S3 clients once, from the SDK's default
// configuration: endpoints come from AWS_ENDPOINT_URL, AWS_ENDPOINT_URL_DYNAMODB
// and AWS_ENDPOINT_URL_S3 (read by the SDK itself). Every client Connect builds
// counts its calls into the CallCounter carried by the request context
// (WithCallCounter), per service and operation.
package awsstore
