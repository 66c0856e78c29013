package core

import (
	"reflect"
	"testing"
)

// Every cache takes a share of the one budget, credentials and Keystone's
// answers included, and the shares together stay within it.
func TestCacheSharesFitTheBudget(t *testing.T) {
	for _, budget := range []int64{DefaultCacheBytes, 64 << 20, 1 << 30} {
		shares := Config{CacheBytes: budget}.CacheShares()
		v := reflect.ValueOf(shares)
		var total int64
		for i := range v.NumField() {
			share := v.Field(i).Int()
			if share <= 0 {
				t.Errorf("budget %d: the %s cache gets %d bytes", budget, v.Type().Field(i).Name, share)
			}
			total += share
		}
		if total > budget {
			t.Errorf("budget %d: the shares add up to %d", budget, total)
		}
	}
	if got := (Config{CacheBytes: DefaultCacheBytes}).CacheShares(); got.Auth != 6<<20 || got.Keystone != 1<<20 || got.Gzip != 8<<20 {
		t.Errorf("shares of the default budget: %+v", got)
	}
}
