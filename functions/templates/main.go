// Command templates is the Lambda function serving deploy templates, default
// deploy steps and the node registry (/api/v1/deploy_templates,
// /api/v1/deploy_steps, /api/v1/nodes). Wiring only: config -> backend -> handler -> adapter.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() { groupmain.Serve(app.TemplatesRoutes, app.Options{}) }
