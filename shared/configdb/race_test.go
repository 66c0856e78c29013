package configdb_test

import (
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

func TestHierarchyChangeRacesDocumentWrite(t *testing.T) {
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	const trials = 200
	writes, removals := configdbtest.HierarchyRace(t, b, trials)
	t.Logf("%d trials: the write won %d, the level removal %d, never both", trials, writes, removals)
}
