package configdb

import (
	"encoding/json"
	"time"

	"github.com/tuningbox/tuningbox/shared/levelpath"
	"github.com/tuningbox/tuningbox/shared/wire"
)

// Kind selects one of the two documents kept per (environment, level path, resource).
type Kind string

const (
	// Values is the data uploaded by the deployment (astute.yaml, globals.yaml, ...).
	Values Kind = "values"
	// Overrides is what operators set on top; an override beats values of its own
	// level and of the levels above it.
	Overrides Kind = "overrides"
)

// Ident is an entity's identity: a legacy integer id, never reused, and a UUID.
type Ident struct {
	ID   int64  `json:"id"`
	UUID string `json:"uuid"`
}

// Component groups resource definitions; it stands for the part of the system
// that owns the data sources.
type Component struct {
	Ident
	Name                string
	CreatedAt           time.Time
	UpdatedAt           time.Time
	ResourceDefinitions []ResourceDefinition
}

// ResourceDefinition is a data source (astute, globals, override/plugins, ...).
type ResourceDefinition struct {
	Ident
	Name string
	// Component is nil for a definition attached to no component.
	Component *Ident
	// Content is the definition's own JSON document (any JSON value).
	Content json.RawMessage
}

// Environment holds documents of the resources of its components, at the
// global level and at any prefix of its ordered hierarchy levels.
type Environment struct {
	Ident
	Components []Ident
	// Levels are ordered from the least to the most specific.
	Levels []Level
}

// Level is one hierarchy level of an environment.
type Level struct {
	Ident
	Name string
}

// HierarchyLevel is a level as listed by the API: with its environment, its
// parent (the level before it, nil for the first) and the values documents were stored under.
type HierarchyLevel struct {
	Level
	Environment Ident
	Parent      *Ident
	Values      []string
}

// LevelValue is one name/value pair of a level path, e.g. {nodes, 7}.
type LevelValue = levelpath.Level

// DocRef addresses the documents of one resource at one level path of an environment.
// Env and Resource are references: an integer id, a UUID or (Resource only) a name.
type DocRef struct {
	Env      string
	Levels   []LevelValue
	Resource string
}

// EffectiveQuery asks for the effective (merged) document of a resource at a level path.
type EffectiveQuery struct {
	Env      string
	Levels   []LevelValue
	Resource string
	// ShowLookup turns each top-level value into [value, "/lvl/val/.../"], the path where it was last set.
	ShowLookup bool
	// Key selects one value by a dot path ("a.b.0").
	Key string
	// Version, when > 0, selects that version of the addressed level's values document;
	// every other document contributes its latest version.
	Version int
}

// DocRef returns the document address the query reads.
func (q EffectiveQuery) DocRef() DocRef {
	return DocRef{Env: q.Env, Levels: q.Levels, Resource: q.Resource}
}

// Version describes one immutable version of a document: the wire's
// DocumentVersion, which is also its stored form (a version record).
type Version = wire.DocumentVersion
