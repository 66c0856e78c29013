package configdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/nodes"
	"github.com/tuningbox/tuningbox/shared/nodes/nodestest"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// registry adapts the node registry as shared/app does.
type registry struct{ svc *nodes.Service }

func (r registry) Resolve(ctx context.Context, ref string) (Node, error) {
	n, err := r.svc.Resolve(ctx, ref)
	return asNode(n), err
}
func (registry) RecordKey(id int64) store.Key { return nodes.RecordKey(id) }
func (registry) DecodeRecord(v []byte) (Node, error) {
	n, err := nodes.DecodeRecord(v)
	return asNode(n), err
}
func asNode(n nodes.Node) Node {
	return Node{ID: n.ID, UUID: n.UUID, FQDN: n.FQDN, Environment: n.EnvironmentID, Levels: n.Levels}
}

// TestWarmNodeReadIsOneIndexCall: resolving the node (by FQDN, UUID, or the
// short path through its placement) adds no request to a warm read, and a
// change of the node is seen by the very next read.
func TestWarmNodeReadIsOneIndexCall(t *testing.T) {
	b := mem.New()
	idx, blobs := &countingIndex{Index: b.Index}, &countingBlobs{Blobs: b.Blobs}
	reg := nodes.NewService(b.Index, nodestest.Environments{Count: 2})
	s := NewService(idx, blobs, WithNodes(registry{reg}))
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{{Name: "astute"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role", "nodes"}}); err != nil {
		t.Fatal(err)
	}
	n, err := reg.Create(ctx, nodes.NewNode{ID: 3, FQDN: "node-3.example.com", Environment: "1", Levels: map[string]string{"role": "compute"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range []upload{{lv(), Values, `{"a":1}`}, {lv("role", "compute"), Values, `{"b":1}`}, {lv("role", "compute", "nodes", "3"), Values, `{"c":1}`}} {
		if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: u.levels, Resource: "astute"}, u.kind, []byte(u.doc), ""); err != nil {
			t.Fatal(err)
		}
	}
	const want = `{"a":1,"b":1,"c":1}`
	for _, path := range [][]LevelValue{
		lv("role", "compute", "nodes", "node-3.example.com"),
		lv("role", "compute", "nodes", n.UUID),
		lv("nodes", "NODE-3.example.com"),
		lv("node", "3"),
	} {
		q := EffectiveQuery{Env: "1", Levels: path, Resource: "astute"}
		if d, err := s.Effective(ctx, q); err != nil || string(d.Body) != want { // warms the caches
			t.Fatalf("%v: %v %v", path, d, err)
		}
		idx.calls.Store(0)
		blobs.gets.Store(0)
		if d, err := s.Effective(ctx, q); err != nil || string(d.Body) != want {
			t.Fatalf("%v: %v %v", path, d, err)
		}
		if idx.calls.Load() != 1 || blobs.gets.Load() != 0 {
			t.Errorf("warm read at %v: %d index calls and %d blob reads; want 1 and 0", path, idx.calls.Load(), blobs.gets.Load())
		}
	}
	// The registry changes; the cached resolutions are not trusted.
	short := EffectiveQuery{Env: "1", Levels: lv("nodes", "node-3.example.com"), Resource: "astute"}
	role := "controller"
	if _, err := reg.Update(ctx, "3", nodes.Update{Levels: &map[string]string{"role": role}}); err != nil {
		t.Fatal(err)
	}
	if d, err := s.Effective(ctx, short); err != nil || string(d.Body) != `{"a":1}` {
		t.Fatalf("after the placement change: %v %v", d, err)
	}
	fqdn := "node-3b.example.com"
	if _, err := reg.Update(ctx, "3", nodes.Update{FQDN: &fqdn}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Effective(ctx, short); !errs.Is(err, errs.NotFound) {
		t.Fatalf("the old FQDN: %v, want not found", err)
	}
	if _, err := reg.Delete(ctx, "3"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Effective(ctx, EffectiveQuery{Env: "1", Levels: lv("role", "compute", "nodes", "3"), Resource: "astute"}); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a deleted node: %v, want not found", err)
	}
}

// TestNodeLevelNames: one node level per environment, and a level with
// documents keeps whether it is the node level.
func TestNodeLevelNames(t *testing.T) {
	s := newTestService(t) // environment 1: [role, nodes]
	ctx := context.Background()
	if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: 2, Levels: []string{"node", "nodes"}}); !errs.Is(err, errs.Conflict) {
		t.Fatalf("both node level names: %v, want conflict", err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "role", "node"); !errs.Is(err, errs.Conflict) {
		t.Fatalf("a second node level by rename: %v, want conflict", err)
	}
	if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: lv("role", "compute"), Resource: "astute"}, Values, []byte(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "nodes", "node"); err != nil {
		t.Fatalf("nodes -> node (no documents): %v", err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "node", "hosts"); err != nil {
		t.Fatalf("node -> hosts (no documents): %v", err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "hosts", "nodes"); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "role", "rack"); err != nil {
		t.Fatalf("a free level with documents keeps a free name: %v", err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "nodes", "hosts"); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "rack", "node"); !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "has documents") {
		t.Fatalf("a free level with documents becoming the node level: %v, want conflict", err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "hosts", "nodes"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: lv("rack", "compute", "nodes", "7"), Resource: "astute"}, Values, []byte(`{}`), ""); err != nil {
		t.Fatal(err)
	}
	if err := s.RenameHierarchyLevel(ctx, "1", "nodes", "hosts"); !errs.Is(err, errs.Conflict) || !strings.Contains(err.Error(), "has documents") {
		t.Fatalf("the node level with documents becoming free: %v, want conflict", err)
	}
}

// TestReadNodesAsReadOneByOne: a read at many nodes answers, for each node,
// what Read answers at its short path (now and as_of, one document or
// several layers), from one index call once the nodes are resolved; a node
// of another environment fails the read as Read does.
func TestReadNodesAsReadOneByOne(t *testing.T) {
	b := mem.New()
	idx := &countingIndex{Index: b.Index}
	reg := nodes.NewService(b.Index, nodestest.Environments{Count: 2})
	s := NewService(idx, b.Blobs, WithNodes(registry{reg}))
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{{Name: "astute"}}}); err != nil {
		t.Fatal(err)
	}
	for env := range 2 {
		if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: int64(env + 1), Components: []string{"fuel"}, Levels: []string{"nodes"}}); err != nil {
			t.Fatal(err)
		}
	}
	for id := range int64(4) {
		if _, err := reg.Create(ctx, nodes.NewNode{ID: id + 1, FQDN: fmt.Sprintf("node-%d.example.com", id+1), Environment: "1"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := reg.Create(ctx, nodes.NewNode{ID: 9, FQDN: "node-9.example.com", Environment: "2"}); err != nil {
		t.Fatal(err)
	}
	put := func(levels []LevelValue, doc string) {
		t.Helper()
		if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: levels, Resource: "astute"}, Values, []byte(doc), ""); err != nil {
			t.Fatal(err)
		}
	}
	// Node 1 and 2 have one document each, node 3 none, node 4 two versions.
	put(lv("nodes", "1"), `{"uid":"1","z":{"b":[1,2]},"a":"x"}`)
	put(lv("nodes", "2"), `{"uid":"2"}`)
	put(lv("nodes", "4"), `{"uid":"4","v":1}`)
	before := time.Now()
	time.Sleep(2 * time.Millisecond)
	put(lv("nodes", "4"), `{"uid":"4","v":2}`)
	ids := []string{"1", "2", "3", "node-4.example.com"}
	check := func(when string, at time.Time) {
		t.Helper()
		q := ReadQuery{DocRef: DocRef{Env: "1", Resource: "astute"}, Kind: Values, Effective: true, AsOf: at}
		got, err := s.ReadNodes(ctx, q, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			one := q
			one.Levels = lv("nodes", id)
			want, err := s.Read(ctx, one)
			if err != nil {
				t.Fatal(err)
			}
			if d := got[id]; d == nil || string(d.Body) != string(want.Body) || d.ETag != want.ETag {
				t.Errorf("%s: node %s: %v, want %s %s", when, id, d, want.Body, want.ETag)
			}
		}
		idx.calls.Store(0)
		if _, err := s.ReadNodes(ctx, q, ids); err != nil {
			t.Fatal(err)
		}
		if calls := idx.calls.Load(); at.IsZero() && calls != 1 {
			t.Errorf("%s: a warm read of %d nodes made %d index calls; want 1", when, len(ids), calls)
		}
	}
	check("now", time.Time{})
	check("as of the first version", before)
	// Then the global level gets a document: every node's answer is a merge.
	put(lv(), `{"global":true,"uid":"0"}`)
	check("with a global document", time.Time{})

	q := ReadQuery{DocRef: DocRef{Env: "1", Resource: "astute"}, Kind: Values, Effective: true}
	if _, err := s.ReadNodes(ctx, q, []string{"1", "9"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("a node of another environment: %v, want not found", err)
	}
}
