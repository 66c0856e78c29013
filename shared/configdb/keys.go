package configdb

import (
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/store"
)

// The index layout (partition prefix "cfg#"); see the ConfigDB design note.
const (
	pCounter       = "cfg#counter"
	pComponent     = "cfg#component"
	pComponentName = "cfg#component-name"
	pResdef        = "cfg#resdef"
	pUUID          = "cfg#uuid"
	pEnv           = "cfg#env"
	// pEnvRetired keeps the ids of deleted environments, so a client cannot choose
	// one again and find the old documents (ids are never reused).
	pEnvRetired = "cfg#env-retired"
)

// Entity kinds, as counter names and in UUID aliases.
const (
	kindComponent = "component"
	kindResdef    = "resdef"
	kindEnv       = "env"
	kindLevel     = "level"
)

func counterKey(kind string) store.Key { return store.Key{Partition: pCounter, Sort: kind} }

func componentKey(id int64) store.Key {
	return store.Key{Partition: pComponent, Sort: store.SortID(id)}
}

func componentNameKey(name string) store.Key {
	return store.Key{Partition: pComponentName, Sort: name}
}

func resdefKey(id int64) store.Key { return store.Key{Partition: pResdef, Sort: store.SortID(id)} }

// resdefNamePartition lists the names of the definitions of one component
// ("none": attached to no component). Creating the name item conditionally keeps
// names unique within a component, and resolving a name in an environment is one
// BatchGet over the environment's components.
func resdefNamePartition(component *Ident) string {
	if component == nil {
		return "cfg#resdef-name#none"
	}
	return "cfg#resdef-name#" + strconv.FormatInt(component.ID, 10)
}

func resdefNameKey(component *Ident, name string) store.Key {
	return store.Key{Partition: resdefNamePartition(component), Sort: name}
}

func uuidKey(u string) store.Key { return store.Key{Partition: pUUID, Sort: u} }

func envKey(id int64) store.Key { return store.Key{Partition: pEnv, Sort: store.SortID(id)} }
func envRetiredKey(id int64) store.Key {
	return store.Key{Partition: pEnvRetired, Sort: store.SortID(id)}
}

// levelValuesPartition lists the values under which documents were stored at one level.
func levelValuesPartition(env, level int64) string {
	return "cfg#env#" + strconv.FormatInt(env, 10) + "#lvl#" + strconv.FormatInt(level, 10)
}

func levelValueKey(env, level int64, value string) store.Key {
	return store.Key{Partition: levelValuesPartition(env, level), Sort: value}
}

// levelPath is the canonical form of a level path in keys: the escaped level
// values joined by "/" ("" = global). Level names are not part of it, so renaming
// a level moves nothing.
func levelPath(values []LevelValue) string {
	parts := make([]string, len(values))
	for i, lv := range values {
		parts[i] = url.PathEscape(lv.Value)
	}
	return strings.Join(parts, "/")
}

// docSlot is the part of a document's keys after the environment and resource.
func docSlot(kind Kind, path string) string { return string(kind) + "|" + path }

func headKey(env, resdef int64, kind Kind, path string) store.Key {
	return store.Key{Partition: headPartition(env, resdef), Sort: docSlot(kind, path)}
}

func headPartition(env, resdef int64) string {
	return "cfg#head#" + strconv.FormatInt(env, 10) + "#" + strconv.FormatInt(resdef, 10)
}

func versionsPartition(env, resdef int64, kind Kind, path string) string {
	return "cfg#ver#" + strconv.FormatInt(env, 10) + "#" + strconv.FormatInt(resdef, 10) + "#" + docSlot(kind, path)
}

func versionKey(env, resdef int64, kind Kind, path string, version int) store.Key {
	return store.Key{Partition: versionsPartition(env, resdef, kind, path), Sort: store.SortID(int64(version))}
}

// Stored records (JSON values of index items).

type componentRecord struct {
	ID        int64     `json:"id"`
	UUID      string    `json:"uuid"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

type resdefRecord struct {
	ID        int64           `json:"id"`
	UUID      string          `json:"uuid"`
	Name      string          `json:"name"`
	Component *Ident          `json:"component,omitempty"`
	Content   json.RawMessage `json:"content"`
}

type envRecord struct {
	ID         int64   `json:"id"`
	UUID       string  `json:"uuid"`
	Components []Ident `json:"components"`
	Levels     []Level `json:"levels"`
}

// aliasRecord is the value of a UUID alias and of a name item: which entity it names.
type aliasRecord struct {
	Kind string `json:"kind,omitempty"`
	ID   int64  `json:"id"`
}

func (r componentRecord) ident() Ident { return Ident{ID: r.ID, UUID: r.UUID} }
func (r resdefRecord) ident() Ident    { return Ident{ID: r.ID, UUID: r.UUID} }
func (r envRecord) ident() Ident       { return Ident{ID: r.ID, UUID: r.UUID} }

func (r resdefRecord) definition() ResourceDefinition {
	return ResourceDefinition{Ident: r.ident(), Name: r.Name, Component: r.Component, Content: r.Content}
}

func (r envRecord) environment() Environment {
	return Environment{Ident: r.ident(), Components: r.Components, Levels: r.Levels}
}

// hasComponent reports whether the environment has component id attached.
func (r envRecord) hasComponent(id int64) bool {
	for _, c := range r.Components {
		if c.ID == id {
			return true
		}
	}
	return false
}

// mustJSON encodes records, which are plain structs that always encode.
func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
