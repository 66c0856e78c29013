// Command gc is the scheduled Lambda function that removes unreferenced blobs
// (store.CollectGarbage), run hourly by an EventBridge rule of the stack.
// Wiring only: config -> backend -> one sweep per invocation.
package main

import "github.com/tuningbox/tuningbox/shared/lambdamain"

func main() { lambdamain.GC() }
