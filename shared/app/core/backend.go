package core

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// OpenBackend opens the storage backend that cfg names; logger receives the
// storage clients' own lines. shared/app's handler puts its blobs behind
// a bounded in-memory cache.
func OpenBackend(ctx context.Context, cfg Config, logger *slog.Logger) (store.Backend, error) {
	var (
		b   store.Backend
		err error
	)
	switch cfg.Backend {
	case BackendEmbedded:
		b, err = bolt.Open(cfg.DataDir)
	case BackendAWS:
		b, err = openAWS(ctx, cfg, logger)
	default:
		err = fmt.Errorf("unknown backend %q", cfg.Backend)
	}
	if err != nil {
		return store.Backend{}, err
	}
	// Before any write: on a new store, every orphan is then collectable.
	if err := store.InitGC(ctx, b.Index, b.Blobs); err != nil {
		if b.Close != nil {
			b.Close()
		}
		return store.Backend{}, fmt.Errorf("start blob garbage collection: %w", err)
	}
	return b, nil
}

// LambdaBackend loads a Lambda function's configuration and opens its backend.
func LambdaBackend(ctx context.Context, getenv func(string) string, logger *slog.Logger) (store.Backend, Config, error) {
	cfg, err := LoadConfig(func(name string) string {
		if name == "TUNINGBOX_BACKEND" && getenv(name) == "" {
			return BackendAWS
		}
		return getenv(name)
	})
	if err != nil {
		return store.Backend{}, cfg, err
	}
	if err := resolveSecrets(ctx, &cfg, ReadSecret); err != nil {
		return store.Backend{}, cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return store.Backend{}, cfg, err
	}
	b, err := OpenBackend(ctx, cfg, logger)
	return b, cfg, err
}
