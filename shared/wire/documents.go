package wire

import (
	"encoding/json"
	"time"
)

// The bodies of the ConfigDB's document operations (spec 000, and
// microversion 1.3's explain and dry runs): the values and overrides
// documents at a level path, their versions and key edits.

// Document is a values or overrides document: any JSON value, what its
// writer stored (spec 000 defines no schema for it), and what a plain or
// effective read answers.
type Document = json.RawMessage

// DocumentVersion is one stored version of a document (GET …/versions lists
// them, oldest first).
type DocumentVersion struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// Size is the length of the stored JSON in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex digest of the stored JSON: the version's strong ETag.
	SHA256 string `json:"sha256"`
	// WrittenBy is who wrote the version, stored with it; absent for a version
	// written outside an audited request, or before versions recorded it.
	WrittenBy *Writer `json:"written_by,omitempty"`
}

// KeyOp is one edit of PATCH …/keys/set or …/keys/delete: the key path (an
// object key, or a list index where the value there is a list), then for set
// the value: ["nova", "workers", 8]; for delete the path alone: ["nova", "workers"].
type KeyOp []any

// Preview is a dry run's answer (?dry_run=true): the version the write would
// create and the registered nodes whose effective document it would change.
type Preview struct {
	Version  int            `json:"version"`
	Affected []AffectedNode `json:"affected"`
}

// AffectedNode is a node whose effective document a write changes, and how.
type AffectedNode struct {
	// Node is the node's FQDN.
	Node string `json:"node"`
	// NodeID is the legacy integer id before microversion 1.2, the UUID from it on.
	NodeID  any  `json:"node_id"`
	Changes Diff `json:"changes"`
}

// Lookup is an effective read with ?show_lookup: each top-level key's value
// paired with the level path where it was last set ("/" for the global
// level, else "/level/value/.../").
type Lookup map[string][2]any

// Explanation is an effective read with ?explain (microversion 1.3): each
// key's value (every leaf under a deep merge) and the layer it came from.
type Explanation struct {
	// Merge is the merge mode: "replace" or "deep".
	Merge string                  `json:"merge"`
	Keys  map[string]ExplainedKey `json:"keys"`
}

// ExplainedKey is one key of an Explanation.
type ExplainedKey struct {
	Value any   `json:"value"`
	From  Layer `json:"from"`
	// MergedFrom names, under a deep merge, the lower layers whose lists this one merged.
	MergedFrom []Layer `json:"merged_from,omitempty"`
	// Shadows are the lower layers the value hides.
	Shadows []Layer `json:"shadows"`
}

// Layer is one stored document version of a level path: in from, the
// version that wrote the key's value; in merged_from and shadows, the
// version that was read.
type Layer struct {
	// Level is the level path ("/" for the global level).
	Level string `json:"level"`
	// Kind is values or overrides.
	Kind      string    `json:"kind"`
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// WrittenBy is who wrote the version, null for a version stored before
	// versions recorded their writer.
	WrittenBy *Writer `json:"written_by"`
	// DocumentVersion (from only) is the version of the document that was
	// read: Version, or a later one that left the value as it was.
	DocumentVersion int `json:"document_version,omitempty"`
	// AtOrBefore (from only): the value did not change over the 256 versions
	// the server looked at, so Version is the oldest of them and the value
	// may be older still.
	AtOrBefore bool `json:"at_or_before,omitempty"`
	// Value is the shadowed layer's own value at the key (shadows only).
	Value any `json:"value,omitempty"`
}

// KeyHistory is GET …/values/history?key=a.b (and …/overrides/history): the
// versions of the document in which the value at the key changed, newest first.
type KeyHistory struct {
	// Key is the dot path asked for.
	Key     string      `json:"key"`
	Changes []KeyChange `json:"changes"`
	// Before, when set, says the history goes on: ?before= this version
	// reads the next page. A page ends after ?limit changes or after 256
	// versions looked at, so a page may hold no change and still go on.
	Before int `json:"before,omitempty"`
}

// KeyChange is one version in which a key's value changed.
type KeyChange struct {
	Version   int       `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	// WrittenBy is who wrote the version, null when it is not known.
	WrittenBy *Writer `json:"written_by"`
	// Change is "added" (no Old), "removed" (no New) or "changed".
	Change string `json:"change"`
	// Old is the value in the version before; New the value in this one.
	Old json.RawMessage `json:"old,omitempty"`
	New json.RawMessage `json:"new,omitempty"`
}

// Writer is who wrote a document version and when.
type Writer struct {
	Principal string `json:"principal"`
	Role      string `json:"role,omitempty"`
	// RequestID is the request that wrote the version, as its audit record names it.
	RequestID string    `json:"request_id,omitempty"`
	Time      time.Time `json:"time"`
}
