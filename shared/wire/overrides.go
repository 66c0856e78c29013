package wire

import "encoding/json"

// OverridesRequest applies override data to a Puppet catalog (spec 001): the
// data given inline (Data), or read from a ConfigDB document (Source).
type OverridesRequest struct {
	// Catalog is a list of resources {type, title, parameters}.
	Catalog json.RawMessage `json:"catalog" schema:"[]CatalogResource"`
	// Data is override data with configuration and configuration_options.
	Data   json.RawMessage  `json:"data,omitempty" anyjson:"override data: {configuration: {type: {title: parameters}}, configuration_options: {...}}"`
	Source *OverridesSource `json:"source,omitempty"`
	// KnownTypes are the resource types that exist (spec 001's unknown-type check); nil skips it.
	KnownTypes []string `json:"known_types"`
}

// OverridesSource names the ConfigDB document that holds the override data.
type OverridesSource struct {
	// Env is the environment's id or UUID (a UUID from 1.2 on), a JSON string or number.
	Env string `json:"env" jsontype:"string,integer"`
	// Levels is the level path, least specific first: "name/value/..." with
	// each segment URL-escaped, or (from other clients) an object whose key
	// order is the level order ({"role": "compute", "nodes": "3"}).
	Levels   string `json:"levels" jsontype:"string,object,null"`
	Resource string `json:"resource"`
}

// CatalogResource is one resource of a Puppet catalog.
type CatalogResource struct {
	Type       string         `json:"type"`
	Title      string         `json:"title"`
	Parameters map[string]any `json:"parameters"`
}

// OverridesResult is the overridden catalog and the report of what changed.
type OverridesResult struct {
	Catalog []CatalogResource `json:"catalog"`
	Report  OverridesReport   `json:"report"`
}

// OverridesReport lists the override entries by outcome, each in the order
// of the data (type, then title).
type OverridesReport struct {
	Updated []OverridesEntry `json:"updated"`
	Created []OverridesEntry `json:"created"`
	Skipped []OverridesEntry `json:"skipped"`
	// UncheckedTypes lists, when the caller named no known types, the types of
	// entries missing from the catalog whose existence nobody checked (sorted).
	UncheckedTypes []string `json:"unchecked_types,omitempty"`
}

// OverridesEntry is the outcome for one configuration.<type>.<title> entry.
type OverridesEntry struct {
	Type  string `json:"type"`
	Title string `json:"title"`
	// Parameters names the parameters set on an updated or created resource, defaults included.
	Parameters []string `json:"parameters,omitempty"`
	Reason     string   `json:"reason"`
}
