package configdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// JSON Schema: a resource definition's content may carry a JSON Schema (draft
// 2020-12 unless its "$schema" names another draft) under "schema". Every
// document written to the resource is validated before it is stored; a
// document that does not validate is a 400 naming the JSON pointer of the
// offending value and the schema rule it breaks.
//
// A values document is validated as a whole. An overrides document holds only
// the keys it changes, the rest comes from the values it overrides, so it is
// validated against the schema with the presence rules dropped (required,
// minProperties, dependentRequired, at every depth): each value it sets must
// satisfy the schema where it stands, but nothing has to be there.
//
// A schema may refer only to itself ("$ref": "#/$defs/..."): references to
// other documents, remote or local files, are refused when the definition is
// saved, so validation never reads anything but the document.

// schemaURL names the definition's schema inside its compiler.
const schemaURL = "urn:tuningbox:resource-schema"

// compiledSchema is a definition's schema, compiled for both kinds.
type compiledSchema struct {
	full, partial *boundedSchema
	// size estimates the memory of the compiled forms from their source.
	size int64
}

// definitionSchema returns the raw "schema" of a definition's content, if any.
func definitionSchema(content json.RawMessage) (json.RawMessage, bool) {
	if !bytes.Contains(content, []byte(`"schema"`)) {
		return nil, false
	}
	var c struct {
		Schema json.RawMessage `json:"schema"`
	}
	if json.Unmarshal(content, &c) != nil || c.Schema == nil {
		return nil, false
	}
	return c.Schema, true
}

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s: a resource schema may only refer to itself", url)
}

// compileSchema compiles raw for values (as is) and for overrides (presence
// rules dropped), after checking it against the schema limits.
func compileSchema(raw json.RawMessage) (*compiledSchema, error) {
	compile := func(partial bool) (*boundedSchema, error) {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
		if err != nil {
			return nil, err
		}
		if partial {
			dropPresenceRules(doc)
		}
		b := &boundedSchema{}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		c.UseLoader(noLoader{})
		c.RegisterVocabulary(b.budgetVocabulary())
		c.AssertVocabs()
		if err := c.AddResource(schemaURL, doc); err != nil {
			return nil, err
		}
		b.schema, err = c.Compile(schemaURL)
		return b, err
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil, errs.Invalidf("content.schema is not valid JSON: %v", err)
	}
	if err := checkSchemaLimits(doc, len(raw)); err != nil {
		return nil, err
	}
	full, err := compile(false)
	if err != nil {
		return nil, errs.Invalidf("content.schema is not a valid JSON Schema: %s", strings.ReplaceAll(err.Error(), schemaURL, "schema"))
	}
	partial, err := compile(true)
	if err != nil {
		return nil, errs.Invalidf("content.schema is not a valid JSON Schema: %s", strings.ReplaceAll(err.Error(), schemaURL, "schema"))
	}
	return &compiledSchema{full: full, partial: partial}, nil
}

// presenceRules are the keywords that require something to be there.
var presenceRules = []string{"required", "minProperties", "dependentRequired"}

// Keywords whose value is a schema, a list of schemas, or an object of schemas.
var (
	schemaKeywords     = []string{"items", "additionalItems", "additionalProperties", "contains", "propertyNames", "not", "if", "then", "else", "unevaluatedItems", "unevaluatedProperties"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)

// dropPresenceRules removes the presence rules from schema and every subschema
// (never a property that happens to be called "required").
func dropPresenceRules(schema any) {
	obj, ok := schema.(map[string]any)
	if !ok {
		return
	}
	for _, k := range presenceRules {
		delete(obj, k)
	}
	for _, k := range schemaKeywords {
		dropPresenceRules(obj[k])
	}
	for _, k := range schemaListKeywords {
		if list, ok := obj[k].([]any); ok {
			for _, sub := range list {
				dropPresenceRules(sub)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := obj[k].(map[string]any); ok {
			for _, sub := range m {
				dropPresenceRules(sub)
			}
		}
	}
}

// schemaFor returns the compiled schema of a definition (nil: it has none).
func (s *Service) schemaFor(def resdefRecord) (*compiledSchema, error) {
	raw, ok := definitionSchema(def.Content)
	if !ok {
		return nil, nil
	}
	key := sha256.Sum256(raw)
	if c, ok := s.cache.schemas.Get(key); ok {
		return c, nil
	}
	c, err := compileSchema(raw)
	if err != nil {
		return nil, err
	}
	c.size = int64(16*len(raw)) + entryOverhead
	s.cache.schemas.Add(key, c)
	return c, nil
}

// checkSchema validates a document of kind against its definition's schema,
// within the validation budget and while ctx lasts.
func (s *Service) checkSchema(ctx context.Context, def resdefRecord, kind Kind, doc []byte) error {
	c, err := s.schemaFor(def)
	if err != nil || c == nil {
		return err
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return err
	}
	schema, what := c.full, "the"
	if kind == Overrides {
		schema, what = c.partial, "the overrides of the"
	}
	err = schema.validate(ctx, v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	pointer, rule, message := firstViolation(ve.BasicOutput())
	return errs.Invalidf("the document does not match %s schema of resource %s: at %q: %s (rule %s)", what, def.Name, pointer, message, rule)
}

// firstViolation is the first leaf error of a validation: the instance's JSON
// pointer, the schema keyword's location and the message.
func firstViolation(out *jsonschema.OutputUnit) (pointer, rule, message string) {
	for _, u := range out.Errors {
		if u.Error != nil {
			return u.InstanceLocation, u.KeywordLocation, u.Error.String()
		}
	}
	if out.Error != nil {
		return out.InstanceLocation, out.KeywordLocation, out.Error.String()
	}
	return "", "", "invalid"
}
