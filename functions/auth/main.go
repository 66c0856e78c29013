// Command auth is the Lambda function serving users, API tokens and the audit
// log (/api/v1/users, /api/v1/tokens, /api/v1/audit). Wiring only:
// config -> backend -> handler -> adapter.
package main

import "github.com/tuningbox/tuningbox/shared/lambdamain"

func main() { lambdamain.Group("auth") }
