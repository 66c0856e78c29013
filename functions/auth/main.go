// Command auth is the Lambda function serving users, API tokens and the audit
// log (/api/v1/users, /api/v1/tokens, /api/v1/audit). Wiring only:
// config -> backend -> handler -> adapter.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	handler, err := app.LambdaHandler(context.Background(), os.Getenv, logger, "auth")
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambdaadapter.Start(handler)
}
