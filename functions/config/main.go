// Command config is the Lambda function serving the ConfigDB endpoint group
// (/api/v1/config/...). Wiring only: config -> backend -> handler -> adapter.
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
	handler, err := app.LambdaHandler(context.Background(), os.Getenv, logger, "config")
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambdaadapter.Start(handler)
}
