package configdb_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// TestContentionRun is the embedded store's part of .ci/contention.sh (make
// bench): 32 writers x 20 key batches on one 12 KB document, then the bolt file's size.
func TestContentionRun(t *testing.T) {
	if os.Getenv("TUNINGBOX_CONTENTION") == "" {
		t.Skip("heavy: run by .ci/contention.sh (make bench)")
	}
	for _, run := range []struct {
		name      string
		instances int
	}{{"one-server", 1}, {"32-instances", 32}} {
		dir := t.TempDir()
		b, err := bolt.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		r := configdbtest.Contention(t, b, run.name, 32, 20, run.instances)
		b.Close()
		fi, err := os.Stat(filepath.Join(dir, bolt.FileName))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("contention bolt %s: %d accepted writes in %.1f s (%d refused with 409), %d versions, %d conditional-check failures = %.2f per accepted write; "+
			"blobs: %d added; gc: %+v; orphans after a sweep: %d; bolt file %.1f MB",
			run.name, r.Accepted, r.Elapsed.Seconds(), r.Refused, r.Versions, r.Conflicts, float64(r.Conflicts)/float64(r.Accepted),
			r.BlobsAdded, r.AfterGC, r.Orphans, float64(fi.Size())/(1<<20))
	}
}
