package routes

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3gen"

	"github.com/tuningbox/tuningbox/shared/wire"
)

// documentSchemas are the component schemas of the ConfigDB's document
// operations, generated from their wire types (shared/wire) by kin-openapi's
// openapi3gen, so the document says what the handlers encode.
func documentSchemas() map[string]any {
	out := map[string]any{
		"Document":         generated(wire.Document{}),
		"DocumentVersions": generated([]wire.DocumentVersion{}),
		"KeyOps":           generated([]wire.KeyOp{}),
		"Preview":          generated(wire.Preview{}),
		"Lookup":           generated(wire.Lookup{}),
		"Explanation":      generated(wire.Explanation{}),
	}
	out["Document"].(object)["description"] = "Any JSON value: a document is what its writer stored (spec 000 gives it no schema)."
	out["KeyOps"].(object)["minItems"] = 1
	out["EffectiveDocument"] = object{
		"description": "An effective read's answer: the merged document (any JSON); with ?show_lookup each top-level value paired with the level path that set it (Lookup); with ?explain each key's winning layer (Explanation).",
		"anyOf":       []object{ref("Document"), ref("Lookup"), ref("Explanation")},
	}
	return out
}

// generated is the JSON Schema (2020-12) of v's type: openapi3gen's OpenAPI
// 3.0 schema, completed by what encoding/json does that it leaves out.
func generated(v any) object {
	s, err := openapi3gen.NewSchemaRefForValue(v, nil, openapi3gen.SchemaCustomizer(asEncoded))
	if err != nil {
		panic("routes: no schema for " + reflect.TypeOf(v).String() + ": " + err.Error())
	}
	b, err := json.Marshal(s.Value)
	if err != nil {
		panic(err)
	}
	out := object{}
	if err := json.Unmarshal(b, &out); err != nil {
		panic(err)
	}
	return out
}

// asEncoded completes the schema of a type as encoding/json writes its values:
// a struct's fields without omitempty are always there (required), a
// pointer's "nullable" is a type that includes "null" (as 3.1 writes it), and
// an array has its length.
func asEncoded(_ string, t reflect.Type, _ reflect.StructTag, s *openapi3.Schema) error {
	if s.Nullable && s.Type != nil {
		*s.Type = append(*s.Type, openapi3.TypeNull)
		s.Nullable = false
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		for f := range t.Fields() {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && name != "" && name != "-" && !strings.Contains(opts, "omitempty") {
				s.Required = append(s.Required, name)
			}
		}
	case reflect.Array:
		items := s.Items
		if items == nil {
			items = openapi3.NewSchemaRef("", &openapi3.Schema{})
		}
		n := uint64(t.Len())
		*s = openapi3.Schema{Type: &openapi3.Types{openapi3.TypeArray}, Items: items, MinItems: n, MaxItems: &n}
	}
	return nil
}
