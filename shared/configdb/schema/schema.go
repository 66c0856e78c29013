// Package schema compiles the JSON Schema a resource definition's content may
// carry under "schema" (draft 2020-12 unless its "$schema" names another
// draft) and validates documents against it, for shared/configdb
// (configdb.WithSchemas). It is a package of its own because its library
// compiles every draft's metaschema when the process starts (about 4.5 ms of
// CPU, 30 ms at a 256 MB Lambda's share): only the processes that write
// documents link it, the config function and the local server.
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
package schema

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// Compiled is a definition's schema, compiled for both kinds of document.
type Compiled struct {
	full, partial *boundedSchema
}

// Validate checks doc against the schema, as an overrides document
// (overrides: the presence rules dropped) or as a values document, within
// the validation budget and while ctx lasts. A document that does not match
// gives the violation: the offending value's JSON pointer, the message and
// the schema rule it breaks; err is for a validation that could not finish.
func (c *Compiled) Validate(ctx context.Context, doc []byte, overrides bool) (violation string, err error) {
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return "", err
	}
	schema := c.full
	if overrides {
		schema = c.partial
	}
	err = schema.validate(ctx, v)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "", err
	}
	pointer, rule, message := firstViolation(ve.BasicOutput())
	return fmt.Sprintf("at %q: %s (rule %s)", pointer, message, rule), nil
}

// schemaURL names the definition's schema inside its compiler.
const schemaURL = "urn:tuningbox:resource-schema"

// noLoader refuses every external reference.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s: a resource schema may only refer to itself", url)
}

// Compile compiles raw for values (as is) and for overrides (presence rules
// dropped), after checking it against the schema limits; a schema it refuses
// is a 400 (errs.Invalid) that says why.
func Compile(raw json.RawMessage) (*Compiled, error) {
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
	return &Compiled{full: full, partial: partial}, nil
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
