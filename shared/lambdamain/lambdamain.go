// Package lambdamain is the main of every Lambda function: a JSON logger,
// configuration from the environment, the backend's clients built once per
// cold start, then the Lambda runtime loop.
package lambdamain

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/logjson"
)

// Group serves one endpoint group's routes to API Gateway (payload v1 or v2).
func Group(name string) {
	start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		h, m, err := app.LambdaHandler(ctx, os.Getenv, logger, name)
		if err != nil {
			return nil, err
		}
		invoke := lambdaadapter.New(h, logger).Invoke
		// Each invocation's metrics go to CloudWatch as EMF lines on stdout: no API call.
		return func(ctx context.Context, payload json.RawMessage) (any, error) {
			out, err := invoke(ctx, payload)
			if err := m.FlushEMF(os.Stdout, time.Now()); err != nil {
				logger.ErrorContext(ctx, "write metrics", "err", err)
			}
			return out, err
		}, nil
	})
}

// Auth serves the auth group's routes and creates the first administrator
// when CloudFormation sends the stack's Custom::FirstAdministrator resource.
func Auth() {
	start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return app.LambdaAuth(ctx, os.Getenv, logger)
	})
}

// Authorizer answers API Gateway's REQUEST authorizer calls.
func Authorizer() {
	start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return app.LambdaAuthorizer(ctx, os.Getenv, logger)
	})
}

// GC runs one blob garbage collection sweep per invocation (an EventBridge schedule).
func GC() {
	start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return app.LambdaGC(ctx, os.Getenv, logger)
	})
}

// start builds the invocation handler and hands it to the runtime; a failed
// start-up exits non-zero so Lambda reports an init error.
func start(build func(context.Context, *slog.Logger) (any, error)) {
	logger := slog.New(logjson.New(os.Stderr, nil))
	slog.SetDefault(logger) // lines of libraries that log through the log or slog defaults, in the same JSON format
	handler, err := build(context.Background(), logger)
	if err != nil {
		logger.Error("start", "err", err)
		os.Exit(1)
	}
	lambda.Start(handler)
}
