package configdb_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func TestVersionWriters(t *testing.T) {
	b := mem.New()
	configdbtest.VersionWriters(t, b)
}
