// Command watch is the Lambda function serving the config watchers' long
// polls (GET /api/v1/watch/config/environments/.../values?wait=, the
// ConfigDB's document read on a path of its own), in a concurrency pool of
// their own (infra/groups.go). Wiring only: config -> backend -> handler ->
// adapter.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() { groupmain.Serve(app.WatchRoutes, app.Options{}) }
