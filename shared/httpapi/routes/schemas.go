package routes

import (
	_ "embed"
	"encoding/json"
)

// schemas are the document's component schemas, generated from the Go types
// of the API's bodies (shared/wire) by schemagen at build time, so that the
// server neither links the generator nor runs it at start-up.
//
//go:embed schemas.json
var schemas json.RawMessage
