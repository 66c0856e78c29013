package configdbtest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
)

// ContentionResult is what one contention run measured.
type ContentionResult struct {
	// Accepted writes, writes refused with 409 after the retry policy's
	// attempts, and the conditional writes that failed on the way.
	Accepted, Refused, Conflicts int64
	// Versions of the document afterwards (the initial one included).
	Versions int
	// BlobsAdded is how many blobs the run stored (one per distinct document
	// a write attempt made); AfterGC what a sweep (no grace period) found and
	// removed then, and Orphans the unreferenced blobs a second sweep still found.
	BlobsAdded int
	AfterGC    store.GCReport
	Orphans    int
	// Elapsed is how long the writers took, all together.
	Elapsed time.Duration
}

// conflictCounter counts the index writes that failed their condition.
type conflictCounter struct {
	store.Index
	conflicts atomic.Int64
}

func (c *conflictCounter) Write(ctx context.Context, ops ...store.Op) error {
	err := c.Index.Write(ctx, ops...)
	if errors.Is(err, store.ErrConflict) {
		c.conflicts.Add(1)
	}
	return err
}

// Contention runs writers concurrent writers of batches key batches each
// (keys/set of 3 keys) against one 12 KB document on b. With instances == 1
// they share one ConfigDB service, as the requests of one server do; with
// instances == writers each has its own, as concurrent Lambda instances do.
func Contention(t testing.TB, b store.Backend, name string, writers, batches, instances int) ContentionResult {
	t.Helper()
	ctx := context.Background()
	counter := &conflictCounter{Index: b.Index}
	services := make([]*configdb.Service, instances)
	for i := range services {
		services[i] = configdb.NewService(counter, b.Blobs)
	}
	comp, err := services[0].CreateComponent(ctx, configdb.NewComponent{
		Name:                "contention-" + name,
		ResourceDefinitions: []configdb.NewResourceDefinition{{Name: "contention-data-" + name}},
	})
	if err != nil {
		t.Fatal(err)
	}
	env, err := services[0].CreateEnvironment(ctx, configdb.NewEnvironment{Components: []string{comp.Name}})
	if err != nil {
		t.Fatal(err)
	}
	ref := configdb.DocRef{Env: fmt.Sprint(env.ID), Resource: comp.ResourceDefinitions[0].Name}
	var doc strings.Builder
	doc.WriteString(`{"base":"` + strings.Repeat("x", 12<<10) + `"`)
	for w := range writers {
		fmt.Fprintf(&doc, `,"w%d":{}`, w)
	}
	doc.WriteString("}")
	if _, err := services[0].PutDocument(ctx, ref, configdb.Values, []byte(doc.String()), ""); err != nil {
		t.Fatal(err)
	}
	// The epoch of the collector comes before the run (object stores keep whole seconds).
	if _, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	blobsBefore := countBlobs(t, b.Blobs)
	counter.conflicts.Store(0)
	var accepted, refused atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for w := range writers {
		svc := services[w%instances]
		wg.Go(func() {
			for n := range batches {
				ops := make([]configdb.KeyOp, 3)
				for k := range ops {
					ops[k] = configdb.KeyOp{[]byte(fmt.Sprintf(`"w%d"`, w)), []byte(fmt.Sprintf(`"k%d"`, k)), []byte(fmt.Sprint(n))}
				}
				_, err := svc.EditKeys(ctx, ref, configdb.Values, configdb.SetKey, ops, "")
				switch {
				case errs.Is(err, errs.Conflict):
					refused.Add(1) // too many concurrent changes: the client would try again
				case err != nil:
					t.Errorf("writer %d batch %d: %v", w, n, err)
					return
				default:
					accepted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	versions, err := services[0].ListVersions(ctx, ref, configdb.Values)
	if err != nil {
		t.Fatal(err)
	}
	r := ContentionResult{Accepted: accepted.Load(), Refused: refused.Load(), Conflicts: counter.conflicts.Load(), Versions: len(versions), Elapsed: elapsed}
	r.BlobsAdded = countBlobs(t, b.Blobs) - blobsBefore
	if r.AfterGC, err = store.CollectGarbage(ctx, b.Index, b.Blobs, 0); err != nil {
		t.Fatal(err)
	}
	again, err := store.CollectGarbage(ctx, b.Index, b.Blobs, 0)
	if err != nil {
		t.Fatal(err)
	}
	r.Orphans = again.Unreferenced
	for _, v := range versions {
		if _, err := b.Blobs.Get(ctx, v.SHA256); err != nil {
			t.Fatalf("version %d's blob after the sweeps: %v", v.Version, err)
		}
	}
	return r
}

func countBlobs(t testing.TB, blobs store.Blobs) int {
	n := 0
	if err := blobs.List(context.Background(), func(string, time.Time) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}
