package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/app"
)

func newServeCmd() *cobra.Command {
	var (
		listen           string
		tlsCert, tlsKey  string
		shutdownDeadline time.Duration
	)
	cfg, cfgErr := app.LoadConfig(os.Getenv)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server (embedded store by default)",
		Long: `Run the tuningbox API server with every endpoint group on one listener.

Settings come from TUNINGBOX_* environment variables, overridden by flags.
The embedded backend keeps everything in DATA/tuningbox.db; the aws backend
uses a DynamoDB table and an S3 bucket (endpoints from AWS_ENDPOINT_URL*).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfgErr != nil {
				return cfgErr
			}
			if err := cfg.Validate(); err != nil {
				return usagef("%v", err)
			}
			if (tlsCert == "") != (tlsKey == "") {
				return usagef("--tls-cert and --tls-key go together")
			}
			return serve(cmd.Context(), cfg, listen, tlsCert, tlsKey, shutdownDeadline)
		},
	}
	f := cmd.Flags()
	f.StringVar(&listen, "listen", "127.0.0.1:8080", "address to listen on")
	f.StringVar(&cfg.Backend, "backend", cfg.Backend, "storage backend: embedded or aws")
	f.StringVar(&cfg.DataDir, "data", cfg.DataDir, "data directory of the embedded backend")
	f.StringVar(&cfg.Table, "table", cfg.Table, "DynamoDB table of the aws backend")
	f.StringVar(&cfg.Bucket, "bucket", cfg.Bucket, "S3 bucket of the aws backend")
	f.BoolVar(&cfg.S3PathStyle, "s3-path-style", cfg.S3PathStyle, "path-style S3 addressing (emulators)")
	f.BoolVar(&cfg.CreateResources, "create-resources", cfg.CreateResources, "create the table and bucket if missing (emulators)")
	f.Int64Var(&cfg.MaxBody, "max-body", cfg.MaxBody, "largest request body in bytes")
	f.StringVar(&tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve HTTPS")
	f.StringVar(&tlsKey, "tls-key", "", "TLS private key file (PEM)")
	f.DurationVar(&shutdownDeadline, "shutdown-timeout", 10*time.Second, "how long to let requests finish on shutdown")
	return cmd
}

func serve(ctx context.Context, cfg app.Config, listen, tlsCert, tlsKey string, shutdownDeadline time.Duration) error {
	logger := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	backend, err := app.OpenBackend(ctx, cfg)
	if err != nil {
		return err
	}
	defer func() {
		if backend.Close != nil {
			if err := backend.Close(); err != nil {
				logger.Error("close backend", "err", err)
			}
		}
	}()
	handler, err := app.NewHandler(backend, cfg, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	scheme := "http"
	if tlsCert != "" {
		scheme = "https"
	}
	logger.Info("listening", "url", fmt.Sprintf("%s://%s", scheme, ln.Addr()), "backend", cfg.Backend)

	errc := make(chan error, 1)
	go func() {
		if tlsCert != "" {
			errc <- srv.ServeTLS(ln, tlsCert, tlsKey)
		} else {
			errc <- srv.Serve(ln)
		}
	}()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownDeadline)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
