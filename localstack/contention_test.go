package localstack

import (
	"os"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/awsstore"
)

// TestContentionRun is the heavy contention run of .ci/contention.sh (make
// bench): 32 writers x 20 key batches on one 12 KB document on the emulators,
// each variant on a table and bucket of its own.
func TestContentionRun(t *testing.T) {
	if os.Getenv("TUNINGBOX_CONTENTION") == "" {
		t.Skip("heavy: run by .ci/contention.sh (make bench)")
	}
	awsConfig(t) // skips without emulators
	for _, run := range []struct {
		name      string
		instances int
	}{{"one-server", 1}, {"32-instances", 32}} {
		suffix := randomSuffix()
		cfg := awsstore.Config{Table: "tuningbox-contention-" + suffix, Bucket: "tuningbox-contention-" + suffix, PathStyle: true}
		if err := awsstore.EnsureResources(t.Context(), cfg); err != nil {
			t.Fatal(err)
		}
		b, err := awsstore.Connect(t.Context(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		r := configdbtest.Contention(t, b, run.name, 32, 20, run.instances)
		t.Logf("contention %s: %d accepted writes in %.1f s (%d refused with 409), %d versions, %d conditional-check failures = %.2f per accepted write; "+
			"S3 objects: %d added = %.2f per accepted write; gc: %+v; orphans after a sweep: %d",
			run.name, r.Accepted, r.Elapsed.Seconds(), r.Refused, r.Versions, r.Conflicts, float64(r.Conflicts)/float64(r.Accepted),
			r.BlobsAdded, float64(r.BlobsAdded)/float64(r.Accepted), r.AfterGC, r.Orphans)
	}
}
