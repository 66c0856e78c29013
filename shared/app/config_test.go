package app_test

import (
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/auth/audit"
)

// One cache budget: the default, a quarter of a Lambda function's memory, or
// TUNINGBOX_CACHE_BYTES, which wins over both.
func TestCacheBudget(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want int64
	}{
		{nil, app.DefaultCacheBytes},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256"}, 64 << 20},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024"}, 256 << 20},
		{map[string]string{"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256", "TUNINGBOX_CACHE_BYTES": "1048576"}, 1 << 20},
	} {
		cfg, err := app.LoadConfig(func(k string) string { return c.env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CacheBytes != c.want {
			t.Errorf("%v: budget %d, want %d", c.env, cfg.CacheBytes, c.want)
		}
	}
	if _, err := app.LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_CACHE_BYTES": "lots"}[k] }); err == nil {
		t.Error("a budget that is not a number was accepted")
	}
}

// Audit records are kept 90 days unless TUNINGBOX_AUDIT_RETENTION says
// otherwise (0: for ever); a retention that is no duration, or negative, is refused.
func TestAuditRetention(t *testing.T) {
	for env, want := range map[string]time.Duration{"": audit.DefaultRetention, "720h": 30 * 24 * time.Hour, "0": 0} {
		cfg, err := app.LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_AUDIT_RETENTION": env}[k] })
		if err != nil || cfg.AuditRetention != want {
			t.Errorf("TUNINGBOX_AUDIT_RETENTION=%q: %v, %v; want %v", env, cfg.AuditRetention, err, want)
		}
	}
	for _, env := range []string{"90d", "-1h"} {
		if _, err := app.LoadConfig(func(k string) string { return map[string]string{"TUNINGBOX_AUDIT_RETENTION": env}[k] }); err == nil {
			t.Errorf("TUNINGBOX_AUDIT_RETENTION=%q was accepted", env)
		}
	}
	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.AuditRetention = -time.Hour // as serve --audit-retention -1h sets it
	if cfg.Validate() == nil {
		t.Error("a negative retention passed Validate")
	}
}
