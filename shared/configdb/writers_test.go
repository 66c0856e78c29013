package configdb_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func TestVersionWriters(t *testing.T) {
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	configdbtest.VersionWriters(t, b)
}
