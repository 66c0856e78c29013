// Package groupmain is the main of the Lambda functions that serve an
// endpoint group (shared/app.Group): each names its group, so its binary
// links that group's handlers and no other's.
package groupmain

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/lambdamain"
)

// Serve serves the group's routes to API Gateway (payload v1 or v2), with
// the options the group needs (app.Options: the config group's JSON Schemas).
func Serve(group app.Group, opts app.Options) {
	lambdamain.Start(func(ctx context.Context, logger *slog.Logger) (any, error) {
		h, m, err := app.LambdaHandler(ctx, os.Getenv, logger, group, opts)
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
// when CloudFormation sends the stack's Custom::FirstAdministrator resource,
// which gets an answer even when the function cannot start
// (lambdamain.StartupFailed).
func Auth() {
	lambdamain.StartOr(func(ctx context.Context, logger *slog.Logger) (any, error) {
		return app.LambdaAuth(ctx, os.Getenv, logger)
	}, lambdamain.StartupFailed)
}
