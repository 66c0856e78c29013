package wire

import (
	"encoding/json"
	"time"
)

// Component is a group of resource definitions.
type Component struct {
	ID ID `json:"id"`
	// UUID is shown separately only before microversion 1.2.
	UUID                string               `json:"uuid,omitempty"`
	Name                string               `json:"name"`
	ResourceDefinitions []ResourceDefinition `json:"resource_definitions"`
	CreatedAt           time.Time            `json:"created_at"`
	UpdatedAt           time.Time            `json:"updated_at"`
}

// ResourceDefinition is a data source: the documents of one name.
type ResourceDefinition struct {
	ID          ID              `json:"id"`
	UUID        string          `json:"uuid,omitempty"`
	Name        string          `json:"name"`
	ComponentID *ID             `json:"component_id"`
	Content     json.RawMessage `json:"content" anyjson:"the definition's content: any JSON its writer stored"`
}

// Environment is a set of components and the hierarchy levels their documents are stored at.
type Environment struct {
	ID              ID       `json:"id"`
	UUID            string   `json:"uuid,omitempty"`
	Components      []ID     `json:"components"`
	HierarchyLevels []string `json:"hierarchy_levels"`
}

// Level is one hierarchy level of an environment and the values documents are stored under.
type Level struct {
	ID            ID       `json:"id"`
	UUID          string   `json:"uuid,omitempty"`
	Name          string   `json:"name"`
	EnvironmentID ID       `json:"environment_id"`
	Parent        *ID      `json:"parent"`
	Values        []string `json:"values"`
}

// NewComponent creates a component with new resource definitions in it.
type NewComponent struct {
	Name                string                  `json:"name"`
	ResourceDefinitions []NewResourceDefinition `json:"resource_definitions"`
}

// NewResourceDefinition is a resource definition to create.
type NewResourceDefinition struct {
	Name string `json:"name"`
	// ComponentID attaches it to a component (id or name); nil leaves it on
	// its own. Not taken inside a NewComponent.
	ComponentID *ID             `json:"component_id,omitempty"`
	Content     json.RawMessage `json:"content,omitempty" anyjson:"the definition's content: any JSON"`
}

// ComponentUpdate renames a component or sets exactly which resource definitions it has; nil fields stay.
type ComponentUpdate struct {
	Name                *string     `json:"name,omitempty"`
	ResourceDefinitions *[]IDObject `json:"resource_definitions,omitempty"`
}

// IDObject is a reference written as {"id": ...}.
type IDObject struct {
	ID ID `json:"id"`
}

// ResourceDefinitionUpdate changes a resource definition; nil fields stay.
// ComponentID "" (JSON null) detaches it from its component.
type ResourceDefinitionUpdate struct {
	Name        *string         `json:"name,omitempty"`
	ComponentID *ID             `json:"component_id,omitempty" nullable:"true"`
	Content     json.RawMessage `json:"content,omitempty" anyjson:"the definition's content: any JSON"`
}

// NewEnvironment creates an environment; ID 0 lets the server choose.
type NewEnvironment struct {
	ID              int64    `json:"id,omitempty"`
	Components      []ID     `json:"components"`
	HierarchyLevels []string `json:"hierarchy_levels"`
}

// EnvironmentUpdate sets an environment's components or levels; nil fields stay.
type EnvironmentUpdate struct {
	Components      *[]ID     `json:"components,omitempty"`
	HierarchyLevels *[]string `json:"hierarchy_levels,omitempty"`
}

// LevelRename renames a hierarchy level.
type LevelRename struct {
	Name string `json:"name"`
}

// Diff is what changed from one document to another, by dot key path.
type Diff struct {
	Added   map[string]any    `json:"added"`
	Removed map[string]any    `json:"removed"`
	Changed map[string]Change `json:"changed"`
}

// Change is one changed value.
type Change struct {
	From any `json:"from" anyjson:"the value before"`
	To   any `json:"to" anyjson:"the value after"`
}

// DiffRequest compares two documents or versions (POST /api/v1/config/diff,
// microversion 1.3); it changes nothing.
type DiffRequest struct {
	From DiffSide `json:"from"`
	To   DiffSide `json:"to"`
}

// DiffSide is one side of a diff. In "to", a field left out takes the value
// "from" gave it, except as_of and version (left out: the latest).
type DiffSide struct {
	// Environment is the environment's id or UUID (a UUID from 1.2 on).
	Environment string            `json:"environment,omitempty" jsontype:"string,integer"`
	Levels      map[string]string `json:"levels" nullable:"true"`
	// Resource is the resource definition's id, UUID or name.
	Resource  string `json:"resource,omitempty" jsontype:"string,integer"`
	Kind      string `json:"kind,omitempty" enum:"values,overrides"`
	Effective bool   `json:"effective"`
	Merge     string `json:"merge,omitempty" enum:"replace,deep"`
	AsOf      string `json:"as_of,omitempty" format:"date-time"`
	Version   int    `json:"version,omitempty"`
}
