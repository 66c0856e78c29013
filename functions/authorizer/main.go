// Command authorizer is the Lambda REQUEST authorizer API Gateway calls before
// every route (REST API and HTTP API with simple responses). Wiring only:
// config -> backend -> the same credential checks as the local server.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tuningbox/tuningbox/shared/app"
)

func main() {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	authorize, err := app.LambdaAuthorizer(context.Background(), os.Getenv, logger)
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambda.Start(authorize)
}
