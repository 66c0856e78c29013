// Command claims is the Lambda function serving the agents' task claims
// (POST /api/v1/clusters/{id}/nodes/{node}/claim?wait=), the graphs group's
// long polls, in a concurrency pool of their own (infra/groups.go). Wiring
// only: config -> backend -> handler -> adapter.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() { groupmain.Serve(app.GraphsRoutes, app.Options{}) }
