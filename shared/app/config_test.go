package app_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/shared/app"
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
