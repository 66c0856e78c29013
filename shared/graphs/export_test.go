package graphs_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/tuningbox/tuningbox/shared/graphs"
	"github.com/tuningbox/tuningbox/shared/graphs/graphstest"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// TestImportKeepsEachIDOnce: a file whose graphs name the same id and UUID
// twice (a hand-edited one) still imports: the first keeps them, the second
// gets new ones, and every graph reads back with its tasks.
func TestImportKeepsEachIDOnce(t *testing.T) {
	ctx := context.Background()
	b := mem.New()
	svc := graphs.NewService(b.Index, b.Blobs, graphstest.Clusters{"1": graphstest.Nodes("1")})
	const u = "6f1c2a52-3c35-4d0f-9f7e-2f4f4c7d9a10"
	in := graphs.ClusterExport{Graphs: []graphs.ExportedGraph{
		{ID: 7, UUID: u, Type: "default", Tasks: json.RawMessage(`[{"id":"a","type":"shell"}]`)},
		{ID: 7, UUID: u, Type: "provision", Tasks: json.RawMessage(`[{"id":"b","type":"shell"}]`)},
	}}
	writes, err := svc.ImportOps(ctx, in, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, ops := range writes {
		if err := b.Index.Write(ctx, ops...); err != nil {
			t.Fatal(err)
		}
	}
	first, err := svc.GraphOf(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "default")
	if err != nil || first.ID != 7 || first.UUID != u || len(first.Tasks) != 1 || first.Tasks[0].ID != "a" {
		t.Fatalf("the first graph: %+v, %v; want id 7 and its UUID kept", first, err)
	}
	second, err := svc.GraphOf(ctx, graphs.Owner{Kind: graphs.Cluster, ID: 1}, "provision")
	if err != nil || second.ID == 7 || second.UUID == u || len(second.Tasks) != 1 || second.Tasks[0].ID != "b" {
		t.Fatalf("the second graph: %+v, %v; want a new id and UUID", second, err)
	}
}
