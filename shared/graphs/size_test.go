package graphs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/planner"
	"github.com/tuningbox/tuningbox/shared/store"
)

// TestEntryOverTheItemLimitIs413: release or plugin metadata that would make
// the entry's item larger than the store keeps is a 413 naming the field,
// before anything is written; metadata up to the limit is stored.
func TestEntryOverTheItemLimitIs413(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	withDescription := func(n int) graphs.EntryInput {
		role := fmt.Sprintf(`{"tags":["controller"],"description":%q}`, strings.Repeat("d", n))
		return graphs.EntryInput{Name: "mitaka", Version: "9.0", EntryMetadata: planner.EntryMetadata{
			RolesMetadata: map[string]json.RawMessage{"controller": json.RawMessage(role), "compute": json.RawMessage(`{"tags":["compute"]}`)},
		}}
	}
	// The largest description that fits: the entry with the longest id (19
	// digits, 18 more than release 1's) is exactly store.MaxValueSize bytes.
	small := must[graphs.Entry](t)(s.CreateEntry(ctx, graphs.Release, withDescription(0)))
	fits := store.MaxValueSize - 18 - len(must[[]byte](t)(json.Marshal(small)))
	rel := must[graphs.Entry](t)(s.UpdateEntry(ctx, graphs.Release, small.ID, withDescription(fits)))
	if got := len(must[[]byte](t)(json.Marshal(rel))); got != store.MaxValueSize-18 {
		t.Fatalf("stored entry of %d bytes, want %d", got, store.MaxValueSize-18)
	}
	_, err := s.UpdateEntry(ctx, graphs.Release, rel.ID, withDescription(fits+1))
	wantKind(t, err, errs.TooLarge, "roles_metadata: ")
	wantKind(t, err, errs.TooLarge, "(2 entries; the largest, roles_metadata.controller, ")
	wantKind(t, err, errs.TooLarge, fmt.Sprintf("a release is stored as one item of at most %d bytes", store.MaxValueSize))
	_, err = s.CreateEntry(ctx, graphs.Release, graphs.EntryInput{Name: "liberty", Version: "8.0", EntryMetadata: withDescription(400 << 10).EntryMetadata})
	wantKind(t, err, errs.TooLarge, "roles_metadata.controller")
	if got := must[[]graphs.Entry](t)(s.Entries(ctx, graphs.Release)); len(got) != 1 {
		t.Fatalf("releases after refused writes: %d, want 1", len(got))
	}

	// 20,000 tags of a plugin's tags_metadata (the attack had 100,000).
	tags := map[string]json.RawMessage{}
	for i := range 20_000 {
		tags[fmt.Sprintf("tag-%d", i)] = json.RawMessage(`{"has_primary":false}`)
	}
	_, err = s.CreateEntry(ctx, graphs.Plugin, graphs.EntryInput{Name: "ldap", Version: "1.0", EntryMetadata: planner.EntryMetadata{TagsMetadata: tags}})
	wantKind(t, err, errs.TooLarge, "tags_metadata: ")
	wantKind(t, err, errs.TooLarge, "(20000 entries; ")
	wantKind(t, err, errs.TooLarge, "a plugin is stored as one item")
}

// TestReportMessagesAreCut: a result keeps a long message's head and tail
// (graphs.MaxReportMessage bytes of a failed task's, 256 of another's), so
// a huge message neither fails the report nor the node's later reports.
func TestReportMessagesAreCut(t *testing.T) {
	ctx := context.Background()
	s := newService(t)
	setupExecution(t, s)
	tx := must[graphs.Transaction](t)(s.Execute(ctx, graphs.ExecuteRequest{Cluster: cluster1(), Graphs: []graphs.GraphRun{{Type: "default", Nodes: []graphs.NodeID{"n1"}}}}))
	huge := func(n int) string { return "HEAD" + strings.Repeat("é", n/2) + "TAIL" }
	wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "a", Status: graphs.StatusReady, Message: huge(300 << 10)}))
	wantAction(t, s, tx.UUID, "n1", graphs.ActionTask)
	p := must[graphs.NodeProgress](t)(s.Report(ctx, tx.UUID, "n1", graphs.TaskReport{Task: "b", Status: graphs.StatusError, Message: huge(1 << 20)}))
	for i, limit := range []int{256, graphs.MaxReportMessage} {
		msg := p.Results[i].Message
		if len(msg) > limit || !strings.HasPrefix(msg, "HEAD") || !strings.HasSuffix(msg, "TAIL") || !strings.Contains(msg, "bytes cut") || !json.Valid(must[[]byte](t)(json.Marshal(msg))) {
			t.Errorf("result %d keeps a message of %d bytes (at most %d): %.60q...", i, len(msg), limit, msg)
		}
	}
	view := must[graphs.Transaction](t)(s.Transaction(ctx, tx.UUID))
	if view.Status != graphs.StatusError || len(view.Message) > graphs.MaxReportMessage+200 || !strings.Contains(view.Message, "TAIL (node n1 is in no fault-tolerance group") {
		t.Fatalf("transaction %s, message of %d bytes: ...%s", view.Status, len(view.Message), view.Message[max(0, len(view.Message)-120):])
	}
}
