package configdb_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/configdb/configdbtest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

func TestHierarchyChangeRacesDocumentWrite(t *testing.T) {
	b := mem.New()
	const trials = 200
	writes, removals := configdbtest.HierarchyRace(t, b, trials)
	t.Logf("%d trials: the write won %d, the level removal %d, never both", trials, writes, removals)
}

// TestNoWriteAfterDeadline: a write whose request deadline has passed while it
// waited (for the document's turn, a backoff or the store's writer lock)
// commits nothing and says so.
func TestNoWriteAfterDeadline(t *testing.T) {
	b := mem.New()
	ctx := context.Background()
	svc := configdb.NewService(b.Index, b.Blobs)
	if _, err := svc.CreateComponent(ctx, configdb.NewComponent{Name: "c", ResourceDefinitions: []configdb.NewResourceDefinition{{Name: "r"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{ID: 1, Components: []string{"c"}}); err != nil {
		t.Fatal(err)
	}
	ref := configdb.DocRef{Env: "1", Resource: "r"}
	expired, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := svc.PutDocument(expired, ref, configdb.Values, []byte(`{"late":true}`), ""); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("write after the deadline: %v", err)
	}
	if versions, err := svc.ListVersions(ctx, ref, configdb.Values); err != nil || len(versions) != 0 {
		t.Fatalf("versions after a timed-out write: %v, %v", versions, err)
	}
}
