// Command graphs is the Lambda function serving the deployment graph endpoint
// group (/api/v1/releases, plugins, clusters, graphs, transactions).
// Wiring only: config -> backend -> handler -> adapter.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() { groupmain.Serve(app.GraphsRoutes, app.Options{}) }
