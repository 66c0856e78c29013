// Package lambdamain is the main of every Lambda function: a JSON logger,
// configuration from the environment, the backend's clients built once per
// cold start, then the Lambda runtime loop. It and shared/app/core are all
// that the authorizer and gc link; the functions serving an endpoint group
// start through shared/lambdamain/groupmain, which links shared/app.
package lambdamain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/tuningbox/tuningbox/shared/app/core"
	"github.com/tuningbox/tuningbox/shared/logjson"
)

// StartupFailed answers CloudFormation's event for a custom resource when
// the function could not start: FAILED with the start-up error (a Delete
// succeeds: nothing was created), sent to the event's ResponseURL, instead
// of no answer, which kept CloudFormation waiting for the resource's
// ServiceTimeout. It returns the start-up error for any other event.
func StartupFailed(ctx context.Context, payload json.RawMessage, startErr error) error {
	var ev cfn.Event
	if json.Unmarshal(payload, &ev) != nil || ev.RequestType == "" || ev.ResponseURL == "" {
		return startErr
	}
	_, err := cfn.LambdaWrap(func(_ context.Context, ev cfn.Event) (string, map[string]any, error) {
		if ev.RequestType == cfn.RequestDelete {
			return ev.PhysicalResourceID, nil, nil
		}
		return "", nil, fmt.Errorf("the function could not start: %w", startErr)
	})(ctx, ev)
	return errors.Join(startErr, err)
}

// Authorizer answers API Gateway's REQUEST authorizer calls.
func Authorizer() {
	Start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return core.LambdaAuthorizer(ctx, os.Getenv, logger)
	})
}

// GC runs one blob garbage collection sweep per invocation (an EventBridge schedule).
func GC() {
	Start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return core.LambdaGC(ctx, os.Getenv, logger)
	})
}

// Start builds the invocation handler and hands it to the runtime; a failed
// start-up exits non-zero so Lambda reports an init error.
func Start(build func(context.Context, *slog.Logger) (any, error)) { StartOr(build, nil) }

// StartOr is Start, but after a failed start-up the runtime gets failed,
// which sees the start-up error and the one event that comes, then the
// process exits (Lambda starts a new environment for the next event).
func StartOr(build func(context.Context, *slog.Logger) (any, error), failed func(context.Context, json.RawMessage, error) error) {
	logger := newLogger()
	handler, err := build(context.Background(), logger)
	if err != nil {
		logger.Error("start", "err", err)
		if failed == nil {
			os.Exit(1)
		}
		lambda.Start(func(ctx context.Context, payload json.RawMessage) error {
			defer os.Exit(1)
			return failed(ctx, payload, err)
		})
		return
	}
	lambda.Start(handler)
}

// newLogger is the JSON logger of a function, also the log and slog defaults.
func newLogger() *slog.Logger {
	logger := slog.New(logjson.New(os.Stderr, nil))
	slog.SetDefault(logger) // lines of libraries that log through the log or slog defaults, in the same JSON format
	return logger
}
