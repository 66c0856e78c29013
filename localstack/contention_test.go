package localstack

import (
	"os"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
)

// TestContentionRun is the heavy contention run of .ci/contention.sh (make
// bench): 32 writers x 20 key batches on one 12 KB document on the emulators.
func TestContentionRun(t *testing.T) {
	if os.Getenv("TUNINGBOX_CONTENTION") == "" {
		t.Skip("heavy: run by .ci/contention.sh (make bench)")
	}
	b := connect(t)
	for _, run := range []struct {
		name      string
		instances int
	}{{"one-server", 1}, {"32-instances", 32}} {
		r := configdbtest.Contention(t, b, run.name+randomSuffix(), 32, 20, run.instances)
		t.Logf("contention %s: %d accepted writes, %d versions, %d conditional-check failures = %.2f per accepted write",
			run.name, r.Accepted, r.Versions, r.Conflicts, float64(r.Conflicts)/float64(r.Accepted))
	}
}
