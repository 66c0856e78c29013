// Command templates is the Lambda function serving deploy templates, default
// deploy steps and the node registry (/api/v1/deploy_templates,
// /api/v1/deploy_steps, /api/v1/nodes). Wiring only: config -> backend -> handler -> adapter.
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
	handler, err := app.LambdaHandler(context.Background(), os.Getenv, logger, "templates")
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambdaadapter.Start(handler)
}
