// Command auth is the Lambda function serving users, API tokens and the audit
// log (/api/v1/users, /api/v1/tokens, /api/v1/audit), and the custom resource
// that creates the first administrator at deploy. Wiring only:
// config -> backend -> handler -> adapter.
package main

import "github.com/tuningbox/tuningbox/shared/lambdamain/groupmain"

func main() { groupmain.Auth() }
