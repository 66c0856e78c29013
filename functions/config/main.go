// Command config is the Lambda function serving the ConfigDB endpoint group
// (/api/v1/config/...). Wiring only: config -> backend -> handler -> adapter.
// It alone of the functions links the JSON Schema compiler: it writes the
// definitions and documents that schemas check.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/schema"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() {
	groupmain.Serve(app.ConfigRoutes, app.Options{Schemas: configdb.WithSchemas(schema.Compile)})
}
