// Command authorizer is the Lambda REQUEST authorizer API Gateway calls before
// every route (REST API and HTTP API with simple responses). Wiring only:
// config -> backend -> the same credential checks as the local server.
package main

import "github.com/tuningbox/tuningbox/shared/lambdamain"

func main() { lambdamain.Authorizer() }
