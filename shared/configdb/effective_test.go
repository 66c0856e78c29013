package configdb

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/mem"
)

// newTestService returns a service on a fresh embedded store with one component
// ("fuel": astute, override/plugins) and environment 1 with levels [role, nodes].
func newTestService(t testing.TB) *Service {
	t.Helper()
	b := mem.New()
	s := NewService(b.Index, b.Blobs)
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{
		{Name: "astute"}, {Name: "override/plugins"},
	}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role", "nodes"}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func lv(pairs ...string) []LevelValue {
	var out []LevelValue
	for i := 0; i < len(pairs); i += 2 {
		out = append(out, LevelValue{Name: pairs[i], Value: pairs[i+1]})
	}
	return out
}

// upload is one stored document of a merge test.
type upload struct {
	levels []LevelValue
	kind   Kind
	doc    string
}

func TestEffectiveMerge(t *testing.T) {
	var (
		global     = lv()
		controller = lv("role", "controller")
		compute    = lv("role", "compute")
		node1      = lv("role", "controller", "nodes", "1")
		node2      = lv("role", "controller", "nodes", "2")
	)
	tests := []struct {
		name       string
		uploads    []upload
		at         []LevelValue
		showLookup bool
		key        string
		want       string
		wantErr    errs.Kind
	}{
		{name: "nothing stored", at: node1, want: `{}`},
		{name: "global only", uploads: []upload{{global, Values, `{"a":1}`}}, at: node1, want: `{"a":1}`},
		{
			name:    "deeper values win, merge is shallow",
			uploads: []upload{{global, Values, `{"b":{"x":1,"y":2},"g":true}`}, {node1, Values, `{"b":{"x":10}}`}},
			at:      node1, want: `{"b":{"x":10},"g":true}`,
		},
		{
			name:    "override beats values of its level and above",
			uploads: []upload{{global, Values, `{"a":"g"}`}, {controller, Values, `{"a":"r"}`}, {controller, Overrides, `{"a":"ro"}`}},
			at:      controller, want: `{"a":"ro"}`,
		},
		{
			name:    "deeper plain values beat a shallower override",
			uploads: []upload{{global, Overrides, `{"a":"go"}`}, {node1, Values, `{"a":"n"}`}},
			at:      node1, want: `{"a":"n"}`,
		},
		{
			name:    "override at the node beats everything",
			uploads: []upload{{global, Values, `{"a":1}`}, {controller, Overrides, `{"a":2}`}, {node1, Values, `{"a":3}`}, {node1, Overrides, `{"a":4}`}},
			at:      node1, want: `{"a":4}`,
		},
		{
			name:    "siblings never leak",
			uploads: []upload{{global, Values, `{"a":0}`}, {node2, Values, `{"a":2,"only2":true}`}, {compute, Values, `{"c":1}`}},
			at:      node1, want: `{"a":0}`,
		},
		{
			name:    "reading above the node ignores the node",
			uploads: []upload{{controller, Values, `{"a":"r"}`}, {node1, Values, `{"a":"n"}`}},
			at:      controller, want: `{"a":"r"}`,
		},
		{
			name:    "show_lookup names where each key was last set",
			uploads: []upload{{global, Values, `{"a":1,"b":1}`}, {controller, Overrides, `{"b":2}`}, {node1, Values, `{"c":3}`}},
			at:      node1, showLookup: true,
			want: `{"a":[1,"/"],"b":[2,"/role/controller/"],"c":[3,"/role/controller/nodes/1/"]}`,
		},
		{
			name:    "key with a list index",
			uploads: []upload{{global, Values, `{"ntp":{"servers":["a","b"]}}`}},
			at:      node1, key: "ntp.servers.1", want: `"b"`,
		},
		{
			name:    "key with show_lookup",
			uploads: []upload{{global, Values, `{"a":{"b":1}}`}, {node1, Overrides, `{"a":{"b":7}}`}},
			at:      node1, key: "a.b", showLookup: true, want: `[7,"/role/controller/nodes/1/"]`,
		},
		{
			name:    "missing key",
			uploads: []upload{{global, Values, `{"a":1}`}},
			at:      node1, key: "a.b", wantErr: errs.Conflict,
		},
		{
			name:    "numbers keep their exact text",
			uploads: []upload{{global, Values, `{"f":1.10,"big":123456789012345678901234567890,"e":1E+2}`}},
			at:      node1, want: `{"big":123456789012345678901234567890,"e":1E+2,"f":1.10}`,
		},
	}
	ctx := context.Background()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestService(t)
			for _, u := range tt.uploads {
				if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: u.levels, Resource: "astute"}, u.kind, []byte(u.doc), ""); err != nil {
					t.Fatal(err)
				}
			}
			q := EffectiveQuery{Env: "1", Levels: tt.at, Resource: "astute", ShowLookup: tt.showLookup, Key: tt.key}
			// Twice: the second answer comes from the caches and must be the same.
			for range 2 {
				d, err := s.Effective(ctx, q)
				if tt.want == "" {
					if errs.KindOf(err) != tt.wantErr {
						t.Fatalf("got %v, want kind %d", err, tt.wantErr)
					}
					continue
				}
				if err != nil || string(d.Body) != tt.want {
					t.Fatalf("got %s, %v; want %s", bodyOf(d), err, tt.want)
				}
			}
		})
	}
}

func bodyOf(d *Document) string {
	if d == nil {
		return "<nil>"
	}
	return string(d.Body)
}

func TestEffectiveFollowsChanges(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	ref := DocRef{Env: "1", Levels: lv("role", "controller"), Resource: "astute"}
	q := EffectiveQuery{Env: "1", Levels: lv("role", "controller"), Resource: "astute", ShowLookup: true}
	if _, err := s.PutDocument(ctx, ref, Values, []byte(`{"a":1}`), ""); err != nil {
		t.Fatal(err)
	}
	first, err := s.Effective(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	// A new version changes the answer and its ETag.
	if _, err := s.PutDocument(ctx, ref, Values, []byte(`{"a":2}`), ""); err != nil {
		t.Fatal(err)
	}
	second, err := s.Effective(ctx, q)
	if err != nil || string(second.Body) != `{"a":[2,"/role/controller/"]}` || second.ETag == first.ETag {
		t.Fatalf("after a new version: %s %v (etag %s, before %s)", bodyOf(second), err, second.ETag, first.ETag)
	}
	// Renaming the level changes show_lookup paths: the cached answer must not be reused.
	if err := s.RenameHierarchyLevel(ctx, "1", "role", "group"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Effective(ctx, q); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("old level name after rename: %v, want NotFound", err)
	}
	q.Levels = lv("group", "controller")
	third, err := s.Effective(ctx, q)
	if err != nil || string(third.Body) != `{"a":[2,"/group/controller/"]}` {
		t.Fatalf("after rename: %s %v", bodyOf(third), err)
	}
	// Renaming the definition: the old name stops resolving, the new one works.
	newName := "astute2"
	if err := s.UpdateResourceDefinition(ctx, "astute", ResourceDefinitionUpdate{Name: &newName}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Effective(ctx, q); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("old resource name after rename: %v, want NotFound", err)
	}
	q.Resource = newName
	if d, err := s.Effective(ctx, q); err != nil || string(d.Body) != string(third.Body) {
		t.Fatalf("new resource name: %s %v", bodyOf(d), err)
	}
	// Detaching the component hides the resource.
	none := []string{}
	if err := s.UpdateEnvironment(ctx, "1", EnvironmentUpdate{Components: &none}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Effective(ctx, q); errs.KindOf(err) != errs.NotFound {
		t.Fatalf("detached component: %v, want NotFound", err)
	}
}

func TestValidatorHook(t *testing.T) {
	ctx := context.Background()
	s := newTestService(t)
	if _, err := s.CreateResourceDefinition(ctx, NewResourceDefinition{Name: "checked", Component: "fuel", Content: []byte(`{"validator":"no-such"}`)}); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("unknown validator: %v, want Invalid", err)
	}
	s.RegisterValidator("has-a", func(doc []byte) error {
		if string(doc) != `{"a":1}` {
			return errs.Invalidf("configuration: a must be 1")
		}
		return nil
	})
	if _, err := s.CreateResourceDefinition(ctx, NewResourceDefinition{Name: "checked", Component: "fuel", Content: []byte(`{"validator":"has-a"}`)}); err != nil {
		t.Fatal(err)
	}
	ref := DocRef{Env: "1", Resource: "checked"}
	if _, err := s.PutDocument(ctx, ref, Overrides, []byte(`{"a":2}`), ""); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("invalid document: %v, want Invalid", err)
	}
	if _, err := s.PutDocument(ctx, ref, Overrides, []byte(`{"a":1}`), ""); err != nil {
		t.Fatal(err)
	}
	if _, err := s.EditKeys(ctx, ref, Overrides, SetKey, []KeyOp{{[]byte(`"a"`), []byte(`3`)}}, ""); errs.KindOf(err) != errs.Invalid {
		t.Fatalf("invalid keys/set: %v, want Invalid", err)
	}
	versions, err := s.ListVersions(ctx, ref, Overrides)
	if err != nil || len(versions) != 1 {
		t.Fatalf("versions after rejected writes: %v %v, want exactly 1", versions, err)
	}
}

// countingIndex counts the index calls and blob reads a read makes.
type countingIndex struct {
	store.Index
	calls atomic.Int64
}

func (c *countingIndex) Get(ctx context.Context, k store.Key) (store.Item, error) {
	c.calls.Add(1)
	return c.Index.Get(ctx, k)
}

func (c *countingIndex) BatchGet(ctx context.Context, keys []store.Key) (map[store.Key]store.Item, error) {
	c.calls.Add(1)
	return c.Index.BatchGet(ctx, keys)
}

func (c *countingIndex) Query(ctx context.Context, q store.Query) ([]store.Item, error) {
	c.calls.Add(1)
	return c.Index.Query(ctx, q)
}

type countingBlobs struct {
	store.Blobs
	gets atomic.Int64
}

func (c *countingBlobs) Get(ctx context.Context, hash string) ([]byte, error) {
	c.gets.Add(1)
	return c.Blobs.Get(ctx, hash)
}

// warmReadService returns a service over idx and blobs with documents of
// override/plugins at three depths of node 1's level path.
func warmReadService(t *testing.T, idx store.Index, blobs store.Blobs) (*Service, []LevelValue) {
	t.Helper()
	s := NewService(idx, blobs)
	ctx := context.Background()
	if _, err := s.CreateComponent(ctx, NewComponent{Name: "fuel", ResourceDefinitions: []NewResourceDefinition{{Name: "override/plugins"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateEnvironment(ctx, NewEnvironment{ID: 1, Components: []string{"fuel"}, Levels: []string{"role", "nodes"}}); err != nil {
		t.Fatal(err)
	}
	node := lv("role", "controller", "nodes", "1")
	for _, u := range []upload{{lv(), Values, `{"a":1}`}, {node[:1], Overrides, `{"b":1}`}, {node, Values, `{"c":1}`}} {
		if _, err := s.PutDocument(ctx, DocRef{Env: "1", Levels: u.levels, Resource: "override/plugins"}, u.kind, []byte(u.doc), ""); err != nil {
			t.Fatal(err)
		}
	}
	return s, node
}

func TestWarmReadIsOneIndexCall(t *testing.T) {
	b := mem.New()
	// The counting wrapper hides the index's generation: this is a read over
	// an index others write too (DynamoDB).
	idx, blobs := &countingIndex{Index: b.Index}, &countingBlobs{Blobs: b.Blobs}
	s, node := warmReadService(t, idx, blobs)
	ctx := context.Background()
	for _, q := range []ReadQuery{
		{DocRef: DocRef{Env: "1", Levels: node, Resource: "override/plugins"}, Kind: Values, Effective: true},
		{DocRef: DocRef{Env: "1", Levels: node, Resource: "override/plugins"}, Kind: Values, Effective: true, ShowLookup: true, Key: "b"},
		{DocRef: DocRef{Env: "1", Levels: node, Resource: "override/plugins"}, Kind: Values},
	} {
		if _, err := s.Read(ctx, q); err != nil { // warms the caches
			t.Fatal(err)
		}
		idx.calls.Store(0)
		blobs.gets.Store(0)
		if _, err := s.Read(ctx, q); err != nil {
			t.Fatal(err)
		}
		if idx.calls.Load() != 1 || blobs.gets.Load() != 0 {
			t.Errorf("warm read %+v: %d index calls and %d blob reads; want 1 and 0", q, idx.calls.Load(), blobs.gets.Load())
		}
	}
}

// onlyWriterIndex is a countingIndex that says, as the embedded store does,
// that nothing but its own writes changes it (store.Generational).
type onlyWriterIndex struct {
	*countingIndex
	store.Generational
}

// TestWarmReadOverOnlyWriter: over an index that is its items' only writer, a
// warm read makes no index call until something is written; what it then
// reads is the new state, and a read as of an earlier time leaves the kept
// snapshot as it was.
func TestWarmReadOverOnlyWriter(t *testing.T) {
	b := mem.New()
	counting := &countingIndex{Index: b.Index}
	idx, blobs := onlyWriterIndex{counting, b.Index.(store.Generational)}, &countingBlobs{Blobs: b.Blobs}
	s, node := warmReadService(t, idx, blobs)
	ctx := context.Background()
	ref := DocRef{Env: "1", Levels: node, Resource: "override/plugins"}
	q := ReadQuery{DocRef: ref, Kind: Values, Effective: true}
	read := func(q ReadQuery) (string, int64) {
		t.Helper()
		counting.calls.Store(0)
		d, err := s.Read(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		return string(d.Body), counting.calls.Load()
	}
	read(q) // warms the caches
	if body, calls := read(q); calls != 0 || body != `{"a":1,"b":1,"c":1}` {
		t.Fatalf("warm read: %s with %d index calls; want {\"a\":1,\"b\":1,\"c\":1} with 0", body, calls)
	}
	before := time.Now()
	time.Sleep(2 * time.Millisecond)
	if _, err := s.PutDocument(ctx, ref, Values, []byte(`{"c":2}`), ""); err != nil {
		t.Fatal(err)
	}
	if body, calls := read(q); calls == 0 || body != `{"a":1,"b":1,"c":2}` {
		t.Fatalf("read after a write: %s with %d index calls; want the new document, read afresh", body, calls)
	}
	asOf := q
	asOf.AsOf = before
	if body, _ := read(asOf); body != `{"a":1,"b":1,"c":1}` {
		t.Fatalf("read as of before the write: %s", body)
	}
	if body, calls := read(q); calls != 0 || body != `{"a":1,"b":1,"c":2}` {
		t.Fatalf("read after the read as of: %s with %d index calls; want the new document with 0", body, calls)
	}
}

// TestSnapshotKeyIsUnambiguous: references that differ name different snapshots.
func TestSnapshotKeyIsUnambiguous(t *testing.T) {
	keys := map[string]string{}
	for _, c := range []struct {
		ref     DocRef
		version int
	}{
		{DocRef{Env: "1", Resource: "a", Levels: lv(strings.Repeat("r", 24), "x")}, 1},
		{DocRef{Env: "1", Resource: "a", Levels: lv("role", "x")}, 12},
		{DocRef{Env: "1", Resource: "a", Levels: lv("role", "x")}, 0},
		{DocRef{Env: "1", Resource: "a:b", Levels: lv("role", "x")}, 0},
		{DocRef{Env: "1", Resource: "a", Levels: lv("role", "x:b")}, 0},
		{DocRef{Env: "1a", Resource: "", Levels: lv("role", "x")}, 0},
		{DocRef{Env: "1", Resource: "a", Levels: lv("rolex", "")}, 0},
	} {
		k := snapshotKey(c.ref, c.version, Values)
		desc := fmt.Sprintf("%+v version %d", c.ref, c.version)
		if other, dup := keys[k]; dup {
			t.Fatalf("%s and %s have the key %q", desc, other, k)
		}
		keys[k] = desc
	}
}
