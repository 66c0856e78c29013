package configdb

import (
	"context"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
)

// A service without a schema compiler (WithSchemas) cannot check a schema, so
// it refuses to save a definition with one rather than store it unchecked;
// definitions without a schema save as before. Its schema tests, with the
// compiler, are shared/configdb/schema's.
func TestNoSchemaCompilerRefusesSchemas(t *testing.T) {
	s := newTestService(t)
	ctx := context.Background()
	_, err := s.CreateResourceDefinition(ctx, NewResourceDefinition{Name: "checked", Component: "fuel", Content: []byte(`{"schema":{"type":"object"}}`)})
	if errs.KindOf(err) != errs.Internal {
		t.Fatalf("a definition with a schema, without a compiler: %v, want an internal error", err)
	}
	if _, err := s.CreateResourceDefinition(ctx, NewResourceDefinition{Name: "plain", Component: "fuel", Content: []byte(`{"description":"no schema"}`)}); err != nil {
		t.Fatalf("a definition without a schema: %v", err)
	}
}
