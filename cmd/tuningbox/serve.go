package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/auth"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/keystone"
	"github.com/tuningbox/tuningbox/shared/logjson"
	"github.com/tuningbox/tuningbox/shared/logwriter"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func newServeCmd() *cobra.Command {
	var (
		listen           string
		tlsCert, tlsKey  string
		clientCA, crl    string
		shutdownDeadline time.Duration
	)
	cfg, cfgErr := app.LoadConfig(os.Getenv)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the API server (embedded store by default)",
		Long: `Run the tuningbox API server with every endpoint group on one listener.

Settings come from TUNINGBOX_* environment variables, overridden by flags.
With --client-ca, a client may authenticate with a certificate of that CA
instead of a password: a --server-certname reads every node as an observer,
any other certname is the registered node of that FQDN. With --keystone-url,
Keystone tokens (X-Auth-Token) of --keystone-project are accepted, their
roles mapped by --keystone-roles.
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
			if clientCA != "" && tlsCert == "" {
				return usagef("--client-ca needs --tls-cert and --tls-key")
			}
			if crl != "" && clientCA == "" {
				return usagef("--client-crl needs --client-ca")
			}
			tlsCfg := newServerTLSConfig()
			if clientCA != "" {
				v, err := clientcert.New(clientCA, crl)
				if err != nil {
					return err
				}
				v.Configure(tlsCfg)
			}
			return serve(cmd.Context(), cfg, listen, tlsCert, tlsKey, tlsCfg, shutdownDeadline)
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
	f.DurationVar(&cfg.GCInterval, "gc-interval", cfg.GCInterval, "how often to remove unreferenced blobs older than an hour and audit records older than --audit-retention, the first time at start-up (0: never; POST /api/v1/store/gc still sweeps blobs, not audit records)")
	f.DurationVar(&cfg.AuditRetention, "audit-retention", cfg.AuditRetention, "how long audit records are kept (env TUNINGBOX_AUDIT_RETENTION; 0: for ever)")
	f.Int64Var(&cfg.CacheBytes, "cache-bytes", cfg.CacheBytes, "memory budget of every cache together, in bytes (env TUNINGBOX_CACHE_BYTES)")
	f.StringVar(&tlsCert, "tls-cert", "", "TLS certificate file (PEM); serve HTTPS")
	f.StringVar(&tlsKey, "tls-key", "", "TLS private key file (PEM)")
	f.StringVar(&clientCA, "client-ca", os.Getenv("TUNINGBOX_CLIENT_CA"), "accept client certificates signed by this CA (PEM, e.g. the Puppet CA's ca.pem)")
	f.StringVar(&crl, "client-crl", os.Getenv("TUNINGBOX_CLIENT_CRL"), "refuse client certificates this CRL revokes (PEM, e.g. the Puppet CA's crl.pem; re-read when it changes)")
	f.StringSliceVar(&cfg.ServerCertnames, "server-certname", cfg.ServerCertnames, "certname of a Puppet server whose certificate reads every node as an observer (repeatable)")
	f.StringVar(&cfg.Keystone.URL, "keystone-url", cfg.Keystone.URL, "accept Keystone tokens (X-Auth-Token) validated by this Keystone v3 endpoint")
	f.StringVar(&cfg.Keystone.User, "keystone-user", cfg.Keystone.User, "service user that validates Keystone tokens (password from TUNINGBOX_KEYSTONE_PASSWORD)")
	f.StringVar(&cfg.Keystone.ServiceProject, "keystone-service-project", cfg.Keystone.ServiceProject, "project of the Keystone service user")
	f.StringVar(&cfg.Keystone.Project, "keystone-project", cfg.Keystone.Project, "project (id, or name in TUNINGBOX_KEYSTONE_PROJECT_DOMAIN) whose Keystone tokens are accepted")
	f.Var(keystoneRolesFlag{&cfg.Keystone.Roles}, "keystone-roles", "Keystone roles in that project mapped to tuningbox roles: keystoneRole=admin|observer,...")
	f.DurationVar(&cfg.Keystone.CacheBound, "keystone-cache", cfg.Keystone.CacheBound, "longest time a Keystone token is trusted without asking Keystone again (a revoked token works at most this long)")
	f.DurationVar(&shutdownDeadline, "shutdown-timeout", 10*time.Second, "how long to let requests finish on shutdown")
	return cmd
}

// serveMemoryLimit is the Go runtime's soft memory limit of a server whose
// caches hold cacheBytes (unless GOMEMLIMIT sets one; "off" for none): the
// caches and 64 MiB for the rest. Without a limit the collector lets the heap
// grow to twice what is live, so a server with full caches held twice its
// budget; at this limit it collects sooner instead. The limit is soft: while
// large answers are built (7 MB documents explained) the heap runs past it
// between collections, and a quarter of the budget is left for that, below
// the bound of 1.25 x the budget + 64 MiB (memory/). Ordinary loads stay far
// below it and pay nothing.
func serveMemoryLimit(cacheBytes int64) int64 { return cacheBytes + 64<<20 }

// logFlushInterval is how late serve's log lines may come out.
const logFlushInterval = 100 * time.Millisecond

// newServerTLSConfig is the TLS configuration of an HTTPS listener before any client CA.
func newServerTLSConfig() *tls.Config { return &tls.Config{MinVersion: tls.VersionTLS12} }

func serve(ctx context.Context, cfg app.Config, listen, tlsCert, tlsKey string, tlsCfg *tls.Config, shutdownDeadline time.Duration) error {
	// Log lines go out in batches (at most logFlushInterval late), not a write each.
	logs := logwriter.New(os.Stderr, logFlushInterval)
	defer logs.Close()
	logger := slog.New(logjson.New(logs, nil))
	slog.SetDefault(logger) // lines of libraries that log through the log or slog defaults, in the same JSON format
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(serveMemoryLimit(cfg.CacheBytes))
	}
	backend, err := app.OpenBackend(ctx, cfg, logger)
	if errors.Is(err, bolt.ErrDamaged) {
		return fmt.Errorf("%w; `tuningbox store check --data %s` lists what is wrong", err, cfg.DataDir)
	}
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
	handler, err := server.NewHandler(backend, cfg, logger)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ln = httpapi.CoalescingListener(ln)
	draining := make(chan struct{})
	srv := &http.Server{
		Handler:           handler,
		BaseContext:       func(net.Listener) context.Context { return httpapi.WithDraining(context.Background(), draining) },
		ConnContext:       httpapi.ConnContext,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      60 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		TLSConfig:         tlsCfg,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	// Long polls (agents waiting for work) answer at once when shutdown begins.
	srv.RegisterOnShutdown(func() { close(draining) })
	scheme := "http"
	if tlsCert != "" {
		scheme = "https"
	}
	logger.Info("listening", "url", fmt.Sprintf("%s://%s", scheme, ln.Addr()), "backend", cfg.Backend)

	if cfg.GCInterval > 0 {
		gcCtx, stopGC := context.WithCancel(ctx)
		defer stopGC()
		go app.CollectGarbageEvery(gcCtx, backend, cfg.GCInterval, cfg.AuditRetention, logger)
	}
	deadlineCtx, stopDeadlines := context.WithCancel(ctx)
	defer stopDeadlines()
	go app.EnforceRunDeadlinesEvery(deadlineCtx, backend, app.RunDeadlineCheck, logger)
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

// keystoneRolesFlag sets a Keystone role mapping from "keystoneRole=role,...".
type keystoneRolesFlag struct{ roles *map[string]auth.Role }

func (f keystoneRolesFlag) String() string {
	if f.roles == nil {
		return ""
	}
	var parts []string
	for ks, tb := range *f.roles {
		parts = append(parts, ks+"="+string(tb))
	}
	slices.Sort(parts)
	return strings.Join(parts, ",")
}

func (f keystoneRolesFlag) Set(v string) error {
	roles, err := keystone.ParseRoles(v)
	if err == nil {
		*f.roles = roles
	}
	return err
}

func (keystoneRolesFlag) Type() string { return "mapping" }
