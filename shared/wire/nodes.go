package wire

import "time"

// Node is a registered node as the API shows it at the request's microversion.
type Node struct {
	// ID is the UUID from microversion 1.2 on, the legacy integer id before.
	ID ID `json:"id"`
	// UUID is shown separately only before 1.2.
	UUID string `json:"uuid,omitempty"`
	FQDN string `json:"fqdn"`
	// EnvironmentID follows the same rule as ID.
	EnvironmentID ID       `json:"environment_id"`
	Roles         []string `json:"roles"`
	Traits        []string `json:"traits"`
	// Levels is the node's placement: its values for the ConfigDB levels above the node level.
	Levels map[string]string `json:"levels"`
	// Interfaces are the deploy steps the node supports by driver interface
	// ("*": every step); null: everything is supported.
	Interfaces     map[string][]string `json:"interfaces" nullable:"true"`
	Status         string              `json:"status" enum:"enabled,disabled"`
	DisabledReason *string             `json:"disabled_reason"`
	Maintenance    bool                `json:"maintenance"`
	CreatedAt      time.Time           `json:"created_at"`
	UpdatedAt      *time.Time          `json:"updated_at"`
}

// NodeBody is the answer of a node's create, show and update: {"node": ...}.
type NodeBody struct {
	Node Node `json:"node"`
}

// NodeList is a page of nodes, with a "next" link when the page is full.
type NodeList struct {
	Nodes []Node     `json:"nodes"`
	Links []PageLink `json:"nodes_links,omitempty"`
}

// PageLink is a link of a paged listing ("next").
type PageLink struct {
	Rel  string `json:"rel"`
	Href string `json:"href"`
}

// Link is a link of an entity ("self", "bookmark").
type Link struct {
	Href string `json:"href"`
	Rel  string `json:"rel"`
}

// NewNode registers a node. ID and UUID are chosen by the registry when
// empty; ID is the legacy integer id before 1.2 and the UUID from 1.2 on,
// UUID works at every version.
type NewNode struct {
	ID            ID                  `json:"id,omitempty"`
	UUID          string              `json:"uuid,omitempty"`
	FQDN          string              `json:"fqdn"`
	EnvironmentID ID                  `json:"environment_id"`
	Roles         []string            `json:"roles"`
	Traits        []string            `json:"traits"`
	Levels        map[string]string   `json:"levels,omitempty"`
	Interfaces    map[string][]string `json:"interfaces,omitempty"`
}

// NodeUpdate changes a node; absent (nil) fields stay as they are.
type NodeUpdate struct {
	Status         *string            `json:"status,omitempty" enum:"enabled,disabled"`
	DisabledReason *string            `json:"disabled_reason,omitempty"`
	Maintenance    *bool              `json:"maintenance,omitempty"`
	Roles          *[]string          `json:"roles,omitempty"`
	Traits         *[]string          `json:"traits,omitempty"`
	Levels         *map[string]string `json:"levels,omitempty"`
	FQDN           *string            `json:"fqdn,omitempty"`
	EnvironmentID  *ID                `json:"environment_id,omitempty"`
	// Interfaces pointing to a nil map (JSON null) makes every deploy step supported again.
	Interfaces *map[string][]string `json:"interfaces,omitempty" nullable:"true"`
}
