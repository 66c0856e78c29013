// Package configdbtest holds ConfigDB tests that run on every storage backend:
// the embedded one in `go test ./shared/configdb/...`, the AWS one against the
// emulators in localstack/.
package configdbtest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// HierarchyRace races, trials times, the removal of an environment's "nodes"
// level against the first document written at that level. One of the two may
// win, never both: a write's condition must cover what the level check relied
// on, or an acknowledged node document would afterwards read as a role document.
// It returns how many trials each side won.
func HierarchyRace(t *testing.T, b store.Backend, trials int) (writes, removals int) {
	t.Helper()
	ctx := context.Background()
	svc := configdb.NewService(b.Index, b.Blobs)
	comp, err := svc.CreateComponent(ctx, configdb.NewComponent{
		Name:                fmt.Sprintf("race-%p", svc),
		ResourceDefinitions: []configdb.NewResourceDefinition{{Name: fmt.Sprintf("race-data-%p", svc)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	resource := comp.ResourceDefinitions[0].Name
	for trial := range trials {
		env, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{Components: []string{comp.Name}, Levels: []string{"role", "nodes"}})
		if err != nil {
			t.Fatal(err)
		}
		ref := configdb.DocRef{
			Env:      fmt.Sprint(env.ID),
			Levels:   []configdb.LevelValue{{Name: "role", Value: "compute"}, {Name: "nodes", Value: "node-1"}},
			Resource: resource,
		}
		var writeErr, removeErr error
		var wg sync.WaitGroup
		wg.Go(func() { _, writeErr = svc.PutDocument(ctx, ref, configdb.Values, []byte(`{"trial":1}`), "") })
		wg.Go(func() {
			removeErr = svc.UpdateEnvironment(ctx, ref.Env, configdb.EnvironmentUpdate{Levels: &[]string{"role"}})
		})
		wg.Wait()
		switch {
		case writeErr == nil && removeErr == nil:
			t.Fatalf("trial %d: the node-level write and the removal of the nodes level both succeeded", trial)
		case writeErr == nil:
			if !errs.Is(removeErr, errs.Conflict) {
				t.Fatalf("trial %d: removal after the write: %v, want a conflict", trial, removeErr)
			}
			writes++
		case removeErr == nil:
			if !errs.Is(writeErr, errs.NotFound) {
				t.Fatalf("trial %d: write after the removal: %v, want not found", trial, writeErr)
			}
			removals++
		default:
			t.Fatalf("trial %d: both failed: write %v, removal %v", trial, writeErr, removeErr)
		}
		got, err := svc.GetEnvironment(ctx, ref.Env)
		if err != nil {
			t.Fatal(err)
		}
		if levels := len(got.Levels); (writeErr == nil) != (levels == 2) {
			t.Fatalf("trial %d: write error %v but the environment has %d levels", trial, writeErr, levels)
		}
	}
	return writes, removals
}
