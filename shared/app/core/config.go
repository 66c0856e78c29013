// Package core is what every tuningbox process needs before any endpoint
// group: its configuration, its secrets, its storage backend, the blob
// sweeps and the credential checks. The Lambda functions that serve no
// group (the authorizer, gc) link it without shared/app, which builds every
// domain service.
package core

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/httpapi"
	"github.com/tuningbox/tuningbox/shared/keystone"
)

// Backend names.
const (
	BackendEmbedded = "embedded"
	BackendAWS      = "aws"
)

// Config is the process configuration, loaded once at start-up.
type Config struct {
	// Backend is "embedded" (bbolt under DataDir) or "aws" (DynamoDB Table + S3 Bucket).
	Backend string
	DataDir string
	Table   string
	Bucket  string
	// S3PathStyle addresses the bucket in the path (emulators, LocalStack).
	S3PathStyle bool
	// CreateResources creates the table and bucket when missing (emulators only).
	CreateResources bool
	// MaxBody caps request bodies in bytes.
	MaxBody int64
	// CacheBytes is the one budget of every in-memory cache together (see
	// CacheShares): DefaultCacheBytes, or on Lambda a quarter of the function's
	// memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless TUNINGBOX_CACHE_BYTES says.
	CacheBytes int64
	// GCInterval is how often the local server sweeps unreferenced blobs and
	// expired audit records (0: never).
	GCInterval time.Duration
	// AuditRetention is how long audit records are kept (0: for ever):
	// audit.DefaultRetention unless TUNINGBOX_AUDIT_RETENTION says. The local
	// server's sweep deletes older ones; on AWS the table's TTL does.
	AuditRetention time.Duration
	// AdminUser and AdminPassword name a bootstrap administrator, created at
	// start-up when no user of that name exists (an existing one is left alone).
	AdminUser     string
	AdminPassword string
	// ServerCertnames are the client-certificate certnames that read as
	// observers (Puppet servers); every other verified certificate is the node
	// registered under its certname.
	ServerCertnames []string
	// Keystone validates X-Auth-Token headers when its URL is set.
	Keystone keystone.Config
	// KeystonePasswordSecret is the ARN of the Secrets Manager secret holding
	// Keystone.Password, read once at a Lambda function's start
	// (TUNINGBOX_KEYSTONE_PASSWORD_SECRET), so the password is no environment variable.
	KeystonePasswordSecret string
	// MaxWait caps the long polls (?wait= of ConfigDB reads and agents'
	// claims) below their own 25 s; 0 leaves them at that (TUNINGBOX_MAX_WAIT,
	// seconds: a stack parameter on Lambda, where a wait is billed as it runs).
	MaxWait time.Duration
}

// LoadConfig reads the configuration from environment variables through getenv:
// TUNINGBOX_BACKEND, TUNINGBOX_DATA, TUNINGBOX_TABLE, TUNINGBOX_BUCKET,
// TUNINGBOX_S3_PATH_STYLE, TUNINGBOX_CREATE_RESOURCES, TUNINGBOX_MAX_BODY,
// TUNINGBOX_CACHE_BYTES, TUNINGBOX_ADMIN_USER, TUNINGBOX_ADMIN_PASSWORD,
// TUNINGBOX_SERVER_CERTNAMES (comma-separated), and for Keystone
// TUNINGBOX_KEYSTONE_URL, _USER, _PASSWORD, _USER_DOMAIN, _SERVICE_PROJECT,
// _SERVICE_PROJECT_DOMAIN, _PROJECT, _PROJECT_DOMAIN, _ROLES (keystoneRole=role,...)
// and _CACHE (a duration), TUNINGBOX_KEYSTONE_PASSWORD_SECRET, TUNINGBOX_MAX_WAIT,
// TUNINGBOX_GC_INTERVAL, TUNINGBOX_AUDIT_RETENTION.
// AWS endpoints come from the SDK's own AWS_ENDPOINT_URL* variables. Callers apply their own overrides (flags), then Validate.
func LoadConfig(getenv func(string) string) (Config, error) {
	cfg := Config{
		Backend:        BackendEmbedded,
		DataDir:        "./data",
		MaxBody:        httpapi.DefaultMaxBody,
		CacheBytes:     DefaultCacheBytes,
		GCInterval:     time.Hour,
		AuditRetention: audit.DefaultRetention,
	}
	setString := func(dst *string, name string) {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			*dst = v
		}
	}
	setString(&cfg.Backend, "TUNINGBOX_BACKEND")
	setString(&cfg.DataDir, "TUNINGBOX_DATA")
	setString(&cfg.Table, "TUNINGBOX_TABLE")
	setString(&cfg.Bucket, "TUNINGBOX_BUCKET")
	setString(&cfg.AdminUser, "TUNINGBOX_ADMIN_USER")
	cfg.AdminPassword = getenv("TUNINGBOX_ADMIN_PASSWORD") // as given: spaces may be part of it
	cfg.ServerCertnames = splitList(getenv("TUNINGBOX_SERVER_CERTNAMES"))
	ks := &cfg.Keystone
	ks.UserDomain, ks.ServiceProject, ks.ServiceProjectDomain, ks.ProjectDomain = keystone.DefaultDomain, "service", keystone.DefaultDomain, keystone.DefaultDomain
	setString(&ks.URL, "TUNINGBOX_KEYSTONE_URL")
	setString(&ks.User, "TUNINGBOX_KEYSTONE_USER")
	ks.Password = getenv("TUNINGBOX_KEYSTONE_PASSWORD")
	setString(&cfg.KeystonePasswordSecret, "TUNINGBOX_KEYSTONE_PASSWORD_SECRET")
	setString(&ks.UserDomain, "TUNINGBOX_KEYSTONE_USER_DOMAIN")
	setString(&ks.ServiceProject, "TUNINGBOX_KEYSTONE_SERVICE_PROJECT")
	setString(&ks.ServiceProjectDomain, "TUNINGBOX_KEYSTONE_SERVICE_PROJECT_DOMAIN")
	setString(&ks.Project, "TUNINGBOX_KEYSTONE_PROJECT")
	setString(&ks.ProjectDomain, "TUNINGBOX_KEYSTONE_PROJECT_DOMAIN")
	roles := keystone.DefaultRoles
	setString(&roles, "TUNINGBOX_KEYSTONE_ROLES")
	var err error
	if ks.Roles, err = keystone.ParseRoles(roles); err != nil {
		return cfg, err
	}
	ks.CacheBound = keystone.DefaultCacheBound
	if v := strings.TrimSpace(getenv("TUNINGBOX_KEYSTONE_CACHE")); v != "" {
		if ks.CacheBound, err = time.ParseDuration(v); err != nil || ks.CacheBound <= 0 {
			return cfg, fmt.Errorf("TUNINGBOX_KEYSTONE_CACHE: %q is not a positive duration", v)
		}
	}
	if cfg.S3PathStyle, err = parseBool(getenv, "TUNINGBOX_S3_PATH_STYLE", false); err != nil {
		return cfg, err
	}
	if cfg.CreateResources, err = parseBool(getenv, "TUNINGBOX_CREATE_RESOURCES", false); err != nil {
		return cfg, err
	}
	if cfg.MaxBody, err = parseSize(getenv, "TUNINGBOX_MAX_BODY", cfg.MaxBody); err != nil {
		return cfg, err
	}
	if mb, err := strconv.Atoi(strings.TrimSpace(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"))); err == nil && mb > 0 {
		cfg.CacheBytes = int64(mb) << 20 / lambdaMemoryPerCacheByte
	}
	if cfg.CacheBytes, err = parseSize(getenv, "TUNINGBOX_CACHE_BYTES", cfg.CacheBytes); err != nil {
		return cfg, err
	}
	if v := strings.TrimSpace(getenv("TUNINGBOX_GC_INTERVAL")); v != "" {
		if cfg.GCInterval, err = time.ParseDuration(v); err != nil || cfg.GCInterval < 0 {
			return cfg, fmt.Errorf("TUNINGBOX_GC_INTERVAL: %q is not a duration such as 1h (0 disables)", v)
		}
	}
	if v := strings.TrimSpace(getenv("TUNINGBOX_AUDIT_RETENTION")); v != "" {
		if cfg.AuditRetention, err = time.ParseDuration(v); err != nil || cfg.AuditRetention < 0 {
			return cfg, fmt.Errorf("TUNINGBOX_AUDIT_RETENTION: %q is not a duration such as 2160h (0 keeps records for ever)", v)
		}
	}
	if v := strings.TrimSpace(getenv("TUNINGBOX_MAX_WAIT")); v != "" {
		seconds, err := strconv.ParseFloat(v, 64)
		if err != nil || seconds <= 0 || math.IsInf(seconds, 0) {
			return cfg, fmt.Errorf("TUNINGBOX_MAX_WAIT: %q is not a positive number of seconds", v)
		}
		cfg.MaxWait = time.Duration(seconds * float64(time.Second))
	}
	return cfg, nil
}

// DefaultCacheBytes is the cache budget of a server that names none.
const DefaultCacheBytes = 256 << 20

// lambdaMemoryPerCacheByte: a Lambda function gives a quarter of its memory to
// caches; the rest is the runtime, the GC's headroom below GOMEMLIMIT and the
// requests in flight (a large answer exists a few times over while it is
// encoded, compressed and wrapped in the response event).
const lambdaMemoryPerCacheByte = 4

// CacheShares splits the budget between the caches, in sixteenths: immutable
// blobs 4, the ConfigDB 9 (parsed documents, merges, encoded answers,
// entities, the writers' contention), the graphs 2 (decoded tasks and plans,
// deadline checks), and the last sixteenth in sixteenths again: compressed
// answers 8, credentials 6 (verifications and failed-login buckets), Keystone's
// answers 1 and the routes requests took 1.
type CacheShares struct{ Blobs, ConfigDB, Graphs, Gzip, Auth, Keystone, Routes int64 }

// CacheShares is the budget's split between the caches.
func (c Config) CacheShares() CacheShares {
	part := c.CacheBytes / 16
	small := part / 16
	return CacheShares{Blobs: 4 * part, ConfigDB: 9 * part, Graphs: 2 * part, Gzip: 8 * small, Auth: 6 * small, Keystone: small, Routes: small}
}

// Validate checks that the settings fit together.
func (c Config) Validate() error {
	switch c.Backend {
	case BackendEmbedded:
		if c.DataDir == "" {
			return fmt.Errorf("the embedded backend needs a data directory")
		}
	case BackendAWS:
		if c.Table == "" || c.Bucket == "" {
			return fmt.Errorf("the aws backend needs TUNINGBOX_TABLE and TUNINGBOX_BUCKET")
		}
	default:
		return fmt.Errorf("unknown backend %q (want %s or %s)", c.Backend, BackendEmbedded, BackendAWS)
	}
	if c.MaxBody <= 0 {
		return fmt.Errorf("max body must be positive")
	}
	if c.AuditRetention < 0 {
		return fmt.Errorf("the audit retention must be a duration, at least 0 (0 keeps records for ever)")
	}
	if (c.AdminUser == "") != (c.AdminPassword == "") {
		return fmt.Errorf("TUNINGBOX_ADMIN_USER and TUNINGBOX_ADMIN_PASSWORD go together")
	}
	if c.Keystone.URL != "" {
		if _, err := keystone.New(c.Keystone, http.DefaultClient, time.Now); err != nil {
			return err
		}
	}
	return nil
}

func parseBool(getenv func(string) string, name string, def bool) (bool, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return def, fmt.Errorf("%s: %q is not a boolean", name, v)
	}
	return b, nil
}

func parseSize(getenv func(string) string, name string, def int64) (int64, error) {
	v := strings.TrimSpace(getenv(name))
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return def, fmt.Errorf("%s: %q is not a positive number of bytes", name, v)
	}
	return n, nil
}

// splitList reads a comma-separated list, dropping blanks.
func splitList(v string) []string {
	var out []string
	for _, item := range strings.Split(v, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
