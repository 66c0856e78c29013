// Package schemagen generates the component schemas of the OpenAPI document
// (shared/httpapi/routes) from the Go types of the API's bodies (shared/wire)
// with kin-openapi's openapi3gen. It runs at build time, not in the server:
// routes embeds what it wrote (schemas.json), so neither a Lambda's cold start
// nor its binary carries the generator. `go test ./shared/httpapi/routes/schemagen -update`
// rewrites the file; the test fails while the file is not what the types generate.
package schemagen

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// schema names a component schema and the Go value of its body.
type schema struct {
	name  string
	value any
}

// answers and requests are the document's component schemas, each generated
// from the Go type of its body (shared/wire). A struct type is named here by
// its schema name and elsewhere by its type name; the struct types it holds
// become components of their own under their type names. The fields of an
// answer without omitempty are required (encoding/json always writes them);
// a request's fields are not, since the server takes a body without them.
var (
	answers = []schema{
		{"Error", wire.ErrorBody{}},
		{"Versions", wire.VersionsDocument{}},
		{"OpenAPI", openAPIDocument{}},
		{"Text", ""},
		{"Document", json.RawMessage{}},
		{"DocumentVersions", []wire.DocumentVersion{}},
		{"Preview", wire.Preview{}},
		{"Lookup", wire.Lookup{}},
		{"Explanation", wire.Explanation{}},
		{"KeyHistory", wire.KeyHistory{}},

		{"Component", wire.Component{}},
		{"Components", []wire.Component{}},
		{"ResourceDefinition", wire.ResourceDefinition{}},
		{"ResourceDefinitions", []wire.ResourceDefinition{}},
		{"Environment", wire.Environment{}},
		{"Environments", []wire.Environment{}},
		{"HierarchyLevel", wire.Level{}},
		{"HierarchyLevels", []wire.Level{}},
		{"Diff", wire.Diff{}},
		{"OverridesResult", wire.OverridesResult{}},
		{"GCReport", wire.GCReport{}},
		{"EnvironmentImport", wire.EnvironmentImport{}},

		{"RegistryEntry", wire.RegistryEntry{}},
		{"RegistryEntries", []wire.RegistryEntry{}},
		{"Graph", wire.Graph{}},
		{"Graphs", []wire.Graph{}},
		{"Task", wire.TaskDocument{}},
		{"Tasks", []wire.TaskDocument{}},
		{"Cluster", wire.Cluster{}},
		{"ClusterTasks", wire.ClusterTasks{}},
		{"Transaction", wire.Transaction{}},
		{"Transactions", []wire.Transaction{}},
		{"Plan", wire.Plan{}},
		{"Claim", wire.Claim{}},
		{"NodeProgress", wire.NodeProgress{}},

		{"NodeBody", wire.NodeBody{}},
		{"NodeList", wire.NodeList{}},
		{"Template", wire.Template{}},
		{"TemplateSubset", templateSubset{}},
		{"TemplateList", wire.TemplateList{}},
		{"StepDefaults", wire.StepDefaults{}},
		{"DeploySteps", wire.DeploySteps{}},
		{"NodeValidation", wire.NodeValidation{}},

		{"UserBody", wire.UserBody{}},
		{"UserList", wire.UserList{}},
		{"CreatedToken", wire.CreatedToken{}},
		{"TokenList", wire.TokenList{}},
		{"Session", wire.Session{}},
		{"AuditPage", wire.AuditPage{}},
	}
	requests = []schema{
		{"NewComponent", wire.NewComponent{}},
		{"ComponentUpdate", wire.ComponentUpdate{}},
		{"NewResourceDefinition", wire.NewResourceDefinition{}},
		{"ResourceDefinitionUpdate", wire.ResourceDefinitionUpdate{}},
		{"NewEnvironment", wire.NewEnvironment{}},
		{"EnvironmentUpdate", wire.EnvironmentUpdate{}},
		{"LevelRename", wire.LevelRename{}},
		{"KeyOps", []wire.KeyOp{}},
		{"DiffRequest", wire.DiffRequest{}},
		{"OverridesRequest", wire.OverridesRequest{}},

		{"NewRegistryEntry", wire.NewRegistryEntry{}},
		{"GraphInput", wire.GraphInput{}},
		{"ClusterUpdate", wire.ClusterUpdate{}},
		{"ExecuteRequest", wire.ExecuteRequest{}},
		{"RetryRequest", wire.RetryRequest{}},
		{"TaskReport", wire.TaskReport{}},

		{"NewNode", wire.NewNode{}},
		{"NodeUpdate", wire.NodeUpdate{}},
		{"NewTemplate", wire.NewTemplate{}},
		{"PatchOps", []wire.PatchOp{}},
		{"NewStepDefaults", wire.NewStepDefaults{}},
		{"StepsRequest", wire.StepsRequest{}},

		{"NewUser", wire.NewUser{}},
		{"NewToken", wire.NewToken{}},
	}
)

// openAPIDocument is the top of this document (GET /api/v1/openapi.json):
// OpenAPI's own schema describes the rest.
type openAPIDocument struct {
	OpenAPI string                     `json:"openapi"`
	Info    map[string]any             `json:"info"`
	Paths   map[string]json.RawMessage `json:"paths"`
}

// templateSubset is a deploy template with only the attributes a listing or
// ?fields= asked for: Template's fields, none of them required but links.
type templateSubset wire.Template

// Descriptions of the schemas whose type does not say enough.
var descriptions = map[string]string{
	"Document":          "Any JSON value: a document is what its writer stored (spec 000 gives it no schema).",
	"EffectiveDocument": "An effective read's answer: the merged document (any JSON); with ?show_lookup each top-level value paired with the level path that set it (Lookup); with ?explain each key's winning layer (Explanation).",
	"KeyOps":            "A keys/set or keys/delete batch: a list of key paths, each a list of segments (strings, or integers for list indexes); for set, the last element is the value, any JSON its writer gives.",
	"NodeValidation":    "A node's validation by driver interface (Ironic's shape).",
	"TemplateSubset":    "A deploy template with the attributes asked for (?fields=; uuid, name and links in a listing without ?detail).",
}

// anyOf names the schemas of a request body that takes either of two forms.
var anyOf = map[string][]string{
	// PATCH of a resource definition: a partial update, or a keys batch (…/keys/set, …/keys/delete).
	"DefinitionPatch": {"ResourceDefinitionUpdate", "KeyOps"},
	// An effective read: the merged document, or with ?show_lookup or ?explain what tells where its values came from.
	"EffectiveDocument": {"Document", "Lookup", "Explanation"},
}

var (
	idType       = reflect.TypeFor[wire.ID]()
	taskType     = reflect.TypeFor[wire.TaskDocument]()
	rawType      = reflect.TypeFor[json.RawMessage]()
	timeType     = reflect.TypeFor[time.Time]()
	templateType = reflect.TypeFor[templateSubset]()
)

// Generate returns the component schemas, by name.
func Generate() (openapi3.Schemas, error) {
	names := map[reflect.Type]string{}
	optional := map[reflect.Type]bool{templateType: true}
	for _, s := range append(answers, requests...) {
		if t := reflect.TypeOf(s.value); t.Kind() == reflect.Struct {
			names[t] = s.name
		}
	}
	for _, s := range requests {
		markStructs(reflect.TypeOf(s.value), optional)
	}
	out := openapi3.Schemas{}
	for _, s := range append(answers, requests...) {
		gen := openapi3gen.NewGenerator(
			openapi3gen.CreateComponentSchemas(openapi3gen.ExportComponentSchemasOptions{ExportComponentSchemas: true, ExportTopLevelSchema: true}),
			openapi3gen.CreateTypeNameGenerator(func(t reflect.Type) string {
				if name, ok := names[t]; ok {
					return name
				}
				return t.Name()
			}),
			openapi3gen.SchemaCustomizer(func(_ string, t reflect.Type, _ reflect.StructTag, s *openapi3.Schema) error {
				return customize(t, s, optional[t])
			}),
		)
		ref, err := gen.NewSchemaRefForValue(s.value, out)
		if err != nil {
			return nil, fmt.Errorf("the schema of %s: %w", s.name, err)
		}
		if ref.Ref == "" {
			out[s.name] = ref
		}
		if _, ok := out[s.name]; !ok {
			return nil, fmt.Errorf("schema %s was not generated", s.name)
		}
		if d := descriptions[s.name]; d != "" {
			out[s.name].Value.Description = d
		}
	}
	for name, forms := range anyOf {
		s := &openapi3.Schema{}
		for _, form := range forms {
			s.AnyOf = append(s.AnyOf, openapi3.NewSchemaRef("#/components/schemas/"+form, nil))
		}
		s.Description = descriptions[name]
		out[name] = openapi3.NewSchemaRef("", s)
	}
	return out, nil
}

// JSON returns the component schemas as routes embeds them: one JSON
// object, indented, its keys sorted.
func JSON() ([]byte, error) {
	schemas, err := Generate()
	if err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(schemas, "", "  ")
	return append(b, '\n'), err
}

// markStructs adds to set the struct types t holds (a request's), t included.
func markStructs(t reflect.Type, set map[reflect.Type]bool) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || t == timeType || set[t] {
		return
	}
	set[t] = true
	for i := range t.NumField() {
		markStructs(t.Field(i).Type, set)
	}
}

// customize completes the schema openapi3gen made of type t: the types JSON
// Schema cannot tell from Go's, nullability as OpenAPI 3.1 writes it (a
// "null" type), and for a struct its required fields and what its fields'
// tags say (enum, format, pattern, minimum, maximum, nullable, jsontype,
// anyjson: a description of a field that holds any JSON, schema: "[]Name"
// for a raw field that holds a list of Name).
func customize(t reflect.Type, s *openapi3.Schema, optional bool) error {
	switch t {
	case idType:
		s.Type = &openapi3.Types{"integer", "string"}
		s.Description = "An id: the legacy integer before microversion 1.2, the UUID from 1.2 on (in requests also a name where the entity has one)."
	case taskType:
		s.Type, s.Format = &openapi3.Types{"object"}, ""
		s.Required = []string{"id", "type"}
		s.Properties = openapi3.Schemas{"id": openapi3.NewStringSchema().NewRef(), "type": openapi3.NewStringSchema().NewRef()}
		s.Description = "A deployment task: id, type and the fields of its type; fields tuningbox does not know are kept as given."
	}
	if s.Nullable && s.Type != nil && !s.Type.IsEmpty() && !s.Type.Includes("null") {
		s.Type.With("null")
	}
	s.Nullable = false
	if t.Kind() != reflect.Struct || t == timeType {
		return nil
	}
	for _, f := range jsonFields(t) {
		if !optional && !f.omitEmpty {
			s.Required = append(s.Required, f.name)
		}
		prop := s.Properties[f.name]
		if prop == nil || prop.Value == nil || strings.HasPrefix(prop.Ref, "#/") {
			continue // a component's schema is its type's, not this field's
		}
		if err := fieldTags(f.tag, prop.Value); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.name, err)
		}
		// A request's list or map may be null: the server reads it as absent
		// (and clients such as Go's send a nil one as null).
		if k := f.typ.Kind(); optional && (k == reflect.Slice || k == reflect.Map) && prop.Value.Type != nil && !prop.Value.Type.IsEmpty() {
			prop.Value.Type.With("null")
		}
	}
	return nil
}

// fieldTags applies a field's schema tags to its schema.
func fieldTags(tag reflect.StructTag, s *openapi3.Schema) error {
	if v, ok := tag.Lookup("jsontype"); ok {
		s.Type = &openapi3.Types{}
		s.Type.With(strings.Split(v, ",")...)
	}
	if v, ok := tag.Lookup("schema"); ok {
		item, isList := strings.CutPrefix(v, "[]")
		if !isList {
			return fmt.Errorf("schema tag %q: only lists ([]Name) are supported", v)
		}
		s.Type = &openapi3.Types{"array"}
		s.Format = ""
		s.Items = openapi3.NewSchemaRef("#/components/schemas/"+item, nil)
	}
	if v, ok := tag.Lookup("nullable"); ok && v == "true" && s.Type != nil && !s.Type.Includes("null") {
		s.Type.With("null")
	}
	if v, ok := tag.Lookup("enum"); ok {
		for _, e := range strings.Split(v, ",") {
			s.Enum = append(s.Enum, e)
		}
		if s.Type.Includes("null") {
			s.Enum = append(s.Enum, nil)
		}
	}
	if v, ok := tag.Lookup("anyjson"); ok {
		s.Description = "Any JSON: " + v + "."
	}
	s.Format = tagOr(tag, "format", s.Format)
	s.Pattern = tagOr(tag, "pattern", s.Pattern)
	for key, dst := range map[string]**float64{"minimum": &s.Min, "maximum": &s.Max} {
		if v, ok := tag.Lookup(key); ok {
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return fmt.Errorf("%s tag %q: %w", key, v, err)
			}
			*dst = &n
		}
	}
	return nil
}

func tagOr(tag reflect.StructTag, key, otherwise string) string {
	if v, ok := tag.Lookup(key); ok {
		return v
	}
	return otherwise
}

// jsonField is a field as encoding/json writes it.
type jsonField struct {
	name      string
	omitEmpty bool
	tag       reflect.StructTag
	typ       reflect.Type
}

// jsonFields lists the fields encoding/json writes of struct type t, an
// embedded struct's among them.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag, hasTag := f.Tag.Lookup("json")
		name, opts, _ := strings.Cut(tag, ",")
		switch {
		case tag == "-" || !f.IsExported() && !f.Anonymous:
			continue
		case f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct:
			out = append(out, jsonFields(f.Type)...)
			continue
		case !hasTag || name == "":
			name = f.Name
		}
		out = append(out, jsonField{name: name, omitEmpty: strings.Contains(","+opts+",", ",omitempty,"), tag: f.Tag, typ: f.Type})
	}
	return out
}
