// Command graphs is the Lambda function serving the deployment graph endpoint
// group (/api/v1/releases, plugins, clusters, graphs, transactions).
// Wiring only: config -> backend -> handler -> adapter.
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
	handler, err := app.LambdaHandler(context.Background(), os.Getenv, logger, "graphs")
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambdaadapter.Start(handler)
}
