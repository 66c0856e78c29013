// Command config is the Lambda function serving the ConfigDB endpoint group
// (/api/v1/config/...). Wiring only: config -> backend -> handler -> adapter.
package main

import (
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"
)

func main() { groupmain.Serve(app.ConfigRoutes) }
