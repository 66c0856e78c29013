package core

import (
	"context"
	"log/slog"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/awsstore"
)

// openAWS connects the DynamoDB + S3 backend of cfg, first creating its table
// and bucket when cfg asks for it (emulators; in AWS the CDK stack owns them).
// The SDK's own log lines go to logger.
func openAWS(ctx context.Context, cfg Config, logger *slog.Logger) (store.Backend, error) {
	acfg := awsstore.Config{Table: cfg.Table, Bucket: cfg.Bucket, PathStyle: cfg.S3PathStyle, Logger: logger}
	if cfg.CreateResources {
		if err := awsstore.EnsureResources(ctx, acfg); err != nil {
			return store.Backend{}, err
		}
	}
	return awsstore.Connect(ctx, acfg)
}
