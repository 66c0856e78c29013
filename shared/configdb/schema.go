package configdb

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// JSON Schema: a resource definition's content may carry a JSON Schema under
// "schema". Every document written to the resource is validated before it is
// stored; a document that does not validate is a 400 naming the JSON pointer
// of the offending value and the schema rule it breaks. The schemas are
// compiled and checked by shared/configdb/schema, given to the service with
// WithSchemas: a process without it (a Lambda function that writes no
// document) does not link the JSON Schema library.

// Schema is a definition's compiled JSON Schema (*schema.Compiled).
type Schema interface {
	// Validate checks doc as a values document or (overrides) an overrides
	// document; it returns the violation of a document that does not match,
	// and an error for a validation that could not finish.
	Validate(ctx context.Context, doc []byte, overrides bool) (violation string, err error)
}

// WithSchemas sets how the service compiles the definitions' JSON Schemas
// (schema.Compile). Without it, saving a definition with a schema and writing
// a document to one fail: the service cannot check them.
func WithSchemas[S Schema](compile func(raw json.RawMessage) (S, error)) Option {
	return func(s *Service) {
		s.compileSchema = func(raw json.RawMessage) (Schema, error) {
			c, err := compile(raw)
			if err != nil {
				return nil, err
			}
			return c, nil
		}
	}
}

// cachedSchema is a compiled schema with the memory it is estimated to take.
type cachedSchema struct {
	Schema
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

// compile compiles a definition's schema with the service's compiler.
func (s *Service) compile(raw json.RawMessage) (Schema, error) {
	if s.compileSchema == nil {
		return nil, errs.New(errs.Internal, "this process has no JSON Schema compiler (configdb.WithSchemas)")
	}
	return s.compileSchema(raw)
}

// schemaFor returns the compiled schema of a definition (nil: it has none).
func (s *Service) schemaFor(def resdefRecord) (Schema, error) {
	raw, ok := definitionSchema(def.Content)
	if !ok {
		return nil, nil
	}
	key := sha256.Sum256(raw)
	if c, ok := s.cache.schemas.Get(key); ok {
		return c.Schema, nil
	}
	c, err := s.compile(raw)
	if err != nil {
		return nil, err
	}
	// The compiled forms' memory, estimated from their source.
	s.cache.schemas.Add(key, &cachedSchema{c, int64(16*len(raw)) + entryOverhead})
	return c, nil
}

// checkSchema validates a document of kind against its definition's schema,
// within the validation budget and while ctx lasts.
func (s *Service) checkSchema(ctx context.Context, def resdefRecord, kind Kind, doc []byte) error {
	c, err := s.schemaFor(def)
	if err != nil || c == nil {
		return err
	}
	violation, err := c.Validate(ctx, doc, kind == Overrides)
	if err != nil || violation == "" {
		return err
	}
	what := "the"
	if kind == Overrides {
		what = "the overrides of the"
	}
	return errs.Invalidf("the document does not match %s schema of resource %s: %s", what, def.Name, violation)
}
