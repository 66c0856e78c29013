package audit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestWriteNotes: a write begun by the HTTP layer is recorded once, with what
// the code that made it noted (the environment, the version), by Finish when
// the request succeeded or by the atomic write that took CommitOps; never for
// a failed request, one that wrote nothing or a poll that changed nothing;
// and notes outside an audited write do nothing.
func TestWriteNotes(t *testing.T) {
	b := mem.New()
	log := audit.New(b.Index, nil)
	ctx := context.Background()

	audit.Note(ctx, 7, 1) // no audited write: nothing to note on
	if ops := audit.CommitOps(ctx, 7, 1); ops != nil {
		t.Fatalf("CommitOps outside an audited write = %v", ops)
	}
	if _, ok := audit.Writer(ctx); ok {
		t.Fatal("a writer outside an audited write")
	}

	requests := 0
	begin := func(path string) (context.Context, *audit.Write) {
		requests++
		return log.Begin(ctx, audit.Record{Principal: "ops", Role: "admin", RequestID: fmt.Sprintf("req-%d", requests), Method: "POST", Path: path})
	}
	// Noted, then appended by Finish.
	noted, w := begin("/api/v1/nodes")
	audit.Note(noted, 3, 0)
	if rec, err := w.Finish(noted, 201); err != nil || rec.Environment != "3" || rec.Version != 0 || rec.Status != 201 || rec.RequestID != "req-1" {
		t.Fatalf("Finish = %+v, %v", rec, err)
	}
	// Committed with the write: Finish appends nothing more.
	committed, w := begin("/api/v1/config/environments/3/resources/r/values")
	ops := audit.CommitOps(committed, 3, 2)
	if len(ops) != 2 { // the log of every write and the environment's
		t.Fatalf("CommitOps = %d ops, want 2", len(ops))
	}
	if err := b.Index.Write(ctx, ops...); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(committed, 204); err != nil {
		t.Fatal(err)
	}
	// A dry run (it wrote nothing) and a failed write: no record.
	dry, w := begin("/api/v1/config/environments/3/resources/r/values")
	audit.Note(dry, 3, 0)
	audit.NothingWritten(dry)
	if _, err := w.Finish(dry, 200); err != nil {
		t.Fatal(err)
	}
	// A poll that changed nothing (an idle claim): no record; one that did: recorded.
	idle, w := begin("/api/v1/clusters/3/nodes/1/claim")
	audit.Note(idle, 3, 0)
	audit.Polling(idle)
	if _, err := w.Finish(idle, 200); err != nil {
		t.Fatal(err)
	}
	handedOut, w := begin("/api/v1/clusters/3/nodes/2/claim")
	audit.Note(handedOut, 3, 0)
	audit.Polling(handedOut)
	audit.Changed(handedOut)
	if _, err := w.Finish(handedOut, 200); err != nil {
		t.Fatal(err)
	}
	failed, w := begin("/api/v1/nodes")
	audit.Note(failed, 3, 0)
	if _, err := w.Finish(failed, 409); err != nil {
		t.Fatal(err)
	}

	recs, err := log.List(ctx, audit.Query{Environment: "3"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 3 || recs[0].Path != "/api/v1/clusters/3/nodes/2/claim" {
		t.Fatalf("records of environment 3: %+v, want the changing claim newest", recs)
	}
	recs = recs[1:]
	if recs[0].Version != 2 || recs[0].Status != 204 || recs[1].Path != "/api/v1/nodes" || recs[0].RequestID == recs[1].RequestID {
		t.Fatalf("records of environment 3: %+v", recs)
	}
	writer, _ := audit.Writer(committed)
	if writer.Principal != "ops" || writer.RequestID != recs[0].RequestID {
		t.Fatalf("Writer = %+v, want the committed record's writer and request %s", writer, recs[0].RequestID)
	}
}
