package envexport_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/envexport"
	"github.com/tuningbox/tuningbox/shared/errs"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

var start = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

// tick is a clock that moves a minute at every reading.
func tick() func() time.Time {
	now := start
	return func() time.Time {
		now = now.Add(time.Minute)
		return now
	}
}

func openBolt(t testing.TB) store.Backend {
	t.Helper()
	b, err := bolt.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// fuelComponent is the component of the source environment.
var fuelComponent = configdb.NewComponent{Name: "fuel", ResourceDefinitions: []configdb.NewResourceDefinition{
	{Name: "astute"}, {Name: "override/plugins", Content: []byte(`{"merge":"deep"}`)},
}}

// address is one document address the comparison reads.
type address struct {
	levels   []configdb.LevelValue
	resource string
}

var addresses = []address{
	{nil, "astute"},
	{[]configdb.LevelValue{{Name: "role", Value: "compute"}}, "astute"},
	{[]configdb.LevelValue{{Name: "role", Value: "compute"}, {Name: "host", Value: "node 1/a"}}, "astute"},
	{[]configdb.LevelValue{{Name: "role", Value: "compute"}, {Name: "host", Value: "node 1/a"}}, "override/plugins"},
}

// seed fills environment 3 of svc: documents at three depths, several
// versions each, some written by an audited request, with values that JSON
// escaping would change (<, &, non-ASCII).
func seed(t testing.TB, b store.Backend, svc *configdb.Service) {
	t.Helper()
	ctx := context.Background()
	if _, err := svc.CreateComponent(ctx, fuelComponent); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{ID: 3, Components: []string{"fuel"}, Levels: []string{"role", "host"}}); err != nil {
		t.Fatal(err)
	}
	log := audit.New(b.Index, nil)
	for i, a := range addresses {
		ref := configdb.DocRef{Env: "3", Levels: a.levels, Resource: a.resource}
		for v := range 3 {
			wctx := ctx
			if v == 1 {
				wctx, _ = log.Begin(ctx, audit.Record{Principal: "ops", Role: "admin", RequestID: fmt.Sprintf("req-%d-%d", i, v), Method: "PUT"})
			}
			body := fmt.Sprintf(`{"depth":%d,"v%d":"<b>&é</b>","shared":{"k%d":%d}}`, len(a.levels), v, i, v)
			if _, err := svc.PutDocument(wctx, ref, configdb.Values, []byte(body), ""); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := svc.PutDocument(ctx, ref, configdb.Overrides, []byte(fmt.Sprintf(`{"over":%d}`, i)), ""); err != nil {
			t.Fatal(err)
		}
	}
}

func export(t testing.TB, svc *configdb.Service, env string) []byte {
	t.Helper()
	h, docs, err := envexport.Source(context.Background(), envexport.Services{Config: svc}, env, start)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := envexport.Write(&buf, h, docs); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func importFile(svc *configdb.Service, file []byte) (configdb.Environment, configdb.ImportCounts, error) {
	return envexport.Import(context.Background(), bytes.NewReader(file), envexport.Services{Config: svc})
}

// reads is every answer of env the round trip must keep: per address, the
// stored and effective documents (plain, show_lookup, explain), as of
// instants between writes, and both histories.
func reads(t *testing.T, svc *configdb.Service, env string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, a := range addresses {
		ref := configdb.DocRef{Env: env, Levels: a.levels, Resource: a.resource}
		queries := []configdb.ReadQuery{
			{DocRef: ref, Kind: configdb.Values},
			{DocRef: ref, Kind: configdb.Values, Version: 2},
			{DocRef: ref, Kind: configdb.Values, Effective: true},
			{DocRef: ref, Kind: configdb.Values, Effective: true, ShowLookup: true},
			{DocRef: ref, Kind: configdb.Values, Effective: true, Explain: true},
		}
		for minute := range 20 {
			queries = append(queries, configdb.ReadQuery{DocRef: ref, Kind: configdb.Values, Effective: true, AsOf: start.Add(time.Duration(minute) * time.Minute)})
		}
		for _, q := range queries {
			doc, err := svc.Read(ctx, q)
			if err != nil {
				t.Fatalf("read %+v: %v", q, err)
			}
			out = append(out, doc.ETag+" "+string(doc.Body))
		}
		for _, kind := range []configdb.Kind{configdb.Values, configdb.Overrides} {
			versions, err := svc.ListVersions(ctx, ref, kind)
			if err != nil {
				t.Fatal(err)
			}
			js, err := json.Marshal(versions)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, string(js))
		}
	}
	return out
}

// TestRoundTrip: an environment exported from one bbolt store and imported
// into another reads back the same: documents, effective documents (with
// show_lookup and explain), as_of reads and histories with their writers and
// times; its id and UUID are kept where free. Into a store where they are
// taken, the import gets a new id and still reads the same documents.
func TestRoundTrip(t *testing.T) {
	source := openBolt(t)
	svc := configdb.NewService(source.Index, source.Blobs, configdb.WithClock(tick()))
	seed(t, source, svc)
	file := export(t, svc, "3")
	want := reads(t, svc, "3")
	if !strings.Contains(strings.Join(want, "\n"), `"written_by":{"principal":"ops"`) {
		t.Fatal("no version of the source names its writer: the round trip would not check writers")
	}

	targetBackend := openBolt(t)
	target := configdb.NewService(targetBackend.Index, targetBackend.Blobs)
	env, counts, err := importFile(target, file)
	if err != nil {
		t.Fatal(err)
	}
	orig, err := svc.GetEnvironment(context.Background(), "3")
	if err != nil {
		t.Fatal(err)
	}
	if env.ID != 3 || env.UUID != orig.UUID || counts != (configdb.ImportCounts{Documents: 8, Versions: 16}) {
		t.Fatalf("imported %+v (%+v), want id 3, UUID %s, 8 documents of 16 versions", env, counts, orig.UUID)
	}
	if got := reads(t, target, "3"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the imported environment reads otherwise:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if again := export(t, target, "3"); !bytes.Equal(again, file) {
		t.Fatalf("the imported environment exports otherwise:\n%s\nwant\n%s", again, file)
	}

	// Into the source store itself: id 3 and its UUID are taken.
	copied, _, err := importFile(svc, file)
	if err != nil {
		t.Fatal(err)
	}
	if copied.ID == 3 || copied.UUID == orig.UUID {
		t.Fatalf("the copy took the original's identity: %+v", copied)
	}
	got := reads(t, svc, strconv.FormatInt(copied.ID, 10))
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the copy reads otherwise:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestRefusedFiles: a file that is not an export, one of a newer format,
// one cut short anywhere and one whose content was changed are refused with
// a 400, and the target store then holds no environment and no version.
func TestRefusedFiles(t *testing.T) {
	source := openBolt(t)
	svc := configdb.NewService(source.Index, source.Blobs, configdb.WithClock(tick()))
	seed(t, source, svc)
	file := export(t, svc, "3")
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	zw.Write(file)
	zw.Close()
	lines := bytes.SplitAfter(file, []byte("\n"))

	cases := map[string]struct {
		file []byte
		want error
		// message is part of the error's text, for the refusals without a sentinel.
		message string
	}{
		"foreign":            {[]byte(`{"apiVersion":"v1","kind":"ConfigMap"}` + "\n"), envexport.ErrForeign, ""},
		"empty":              {nil, envexport.ErrForeign, ""},
		"newer":              {bytes.Replace(file, fmt.Appendf(nil, `"version":%d,`, envexport.Version), fmt.Appendf(nil, `"version":%d,`, envexport.Version+1), 1), envexport.ErrNewer, ""},
		"no end":             {bytes.Join(lines[:len(lines)-2], nil), envexport.ErrTruncated, ""},
		"cut in a line":      {file[:len(file)/2], envexport.ErrTruncated, ""},
		"a document dropped": {append(bytes.Join(lines[:2], nil), bytes.Join(lines[3:], nil)...), envexport.ErrTruncated, ""},
		"gzip cut short":     {zipped.Bytes()[:zipped.Len()-10], envexport.ErrTruncated, ""},
		"content changed":    {bytes.Replace(file, []byte(`"over":3`), []byte(`"over":4`), 1), nil, "does not match its size and sha256"},
		"a document twice":   {twice(lines), nil, "twice"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			b := openBolt(t)
			target := configdb.NewService(b.Index, b.Blobs)
			_, _, err := importFile(target, c.file)
			if err == nil || !errs.Is(err, errs.Invalid) || (c.want != nil && !errors.Is(err, c.want)) || !strings.Contains(err.Error(), c.message) {
				t.Fatalf("import = %v, want a 400 (%v)", err, c.want)
			}
			envs, err := target.ListEnvironments(context.Background())
			if err != nil || len(envs) != 0 {
				t.Fatalf("environments after a refused import: %+v, %v", envs, err)
			}
			// Every version the import wrote is gone with its blob's reference.
			if rep, err := store.CollectGarbage(context.Background(), b.Index, b.Blobs, time.Hour); err != nil || rep.Referenced != 0 {
				t.Fatalf("blobs still referenced after a refused import: %+v, %v", rep, err)
			}
		})
	}
	b := openBolt(t)
	if _, _, err := importFile(configdb.NewService(b.Index, b.Blobs), zipped.Bytes()); err != nil {
		t.Fatalf("import of the gzip-compressed file: %v", err)
	}
}

// twice is the export of lines with its first document repeated (and the
// last line counting it twice): a file whose counts hold, and that is still wrong.
func twice(lines [][]byte) []byte {
	lines = lines[:len(lines)-1] // what follows the last newline: nothing
	var end struct{ End envexport.End }
	if err := json.Unmarshal(lines[len(lines)-1], &end); err != nil {
		panic(err)
	}
	var doc struct{ Document configdb.DocumentHistory }
	if err := json.Unmarshal(lines[1], &doc); err != nil {
		panic(err)
	}
	end.End.Documents++
	end.End.Versions += len(doc.Document.Versions)
	last, _ := json.Marshal(map[string]any{"end": end.End})
	out := bytes.Join(lines[:len(lines)-1], nil)
	out = append(out, lines[1]...)
	return append(append(out, last...), '\n')
}

// TestImportBatchesAnyNumberOfNodes: however many writes the nodes add
// (around and past one batch of store.MaxWriteBatch), the import commits.
func TestImportBatchesAnyNumberOfNodes(t *testing.T) {
	source := openBolt(t)
	svc := configdb.NewService(source.Index, source.Blobs, configdb.WithClock(tick()))
	seed(t, source, svc)
	file := export(t, svc, "3")
	for _, n := range []int{95, 96, 97, 100, 250} {
		b := openBolt(t)
		target := configdb.NewService(b.Index, b.Blobs)
		h, docs, err := envexport.Read(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		// In groups of a whole batch each, as Import stages nodes.
		stageNodes := func(context.Context, configdb.Environment) ([][]store.Op, map[string]string, error) {
			ops := make([]store.Op, n)
			for i := range ops {
				ops[i] = store.Create(store.Key{Partition: "test#nodes", Sort: strconv.Itoa(i)}, []byte("{}"))
			}
			return slices.Collect(slices.Chunk(ops, store.MaxWriteBatch)), nil, nil
		}
		if _, _, err := target.ImportEnvironment(context.Background(), h.Environment, docs, stageNodes); err != nil {
			t.Fatalf("import with %d node writes: %v", n, err)
		}
		if items, err := b.Index.Query(context.Background(), store.Query{Partition: "test#nodes"}); err != nil || len(items) != n {
			t.Fatalf("%d of %d node writes committed: %v", len(items), n, err)
		}
	}
}

// TestFailedImportKeepsWhatItReused: an import that fails after a batch of
// it rewrote an item it reuses (the guard of a release registered here) takes
// back what it created and leaves that item in place.
func TestFailedImportKeepsWhatItReused(t *testing.T) {
	source := openBolt(t)
	svc := configdb.NewService(source.Index, source.Blobs, configdb.WithClock(tick()))
	seed(t, source, svc)
	file := export(t, svc, "3")
	b := openBolt(t)
	ctx := context.Background()
	reused, taken := store.Key{Partition: "test#reused", Sort: "release"}, store.Key{Partition: "test#taken", Sort: "99"}
	if err := b.Index.Write(ctx, store.Create(reused, []byte("{}")), store.Create(taken, []byte("{}"))); err != nil {
		t.Fatal(err)
	}
	target := configdb.NewService(b.Index, b.Blobs)
	h, docs, err := envexport.Read(bytes.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	stage := func(context.Context, configdb.Environment) ([][]store.Op, map[string]string, error) {
		// A whole batch after the guard, so that the two go in separate batches; its last write fails.
		creates := make([]store.Op, store.MaxWriteBatch)
		for i := range creates {
			creates[i] = store.Create(store.Key{Partition: "test#taken", Sort: strconv.Itoa(i)}, []byte("{}"))
		}
		return [][]store.Op{{store.Update(reused, []byte("{}"), 1)}, creates}, nil, nil
	}
	if _, _, err := target.ImportEnvironment(ctx, h.Environment, docs, stage); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("import over a taken key = %v, want a conflict", err)
	}
	if _, err := b.Index.Get(ctx, reused); err != nil {
		t.Fatalf("the reused item after the failed import: %v", err)
	}
	if items, err := b.Index.Query(ctx, store.Query{Partition: "test#taken"}); err != nil || len(items) != 1 {
		t.Fatalf("test#taken after the failed import: %d items, %v", len(items), err)
	}
	if envs, err := target.ListEnvironments(ctx); err != nil || len(envs) != 0 {
		t.Fatalf("environments after the failed import: %+v, %v", envs, err)
	}
}

// TestReadsVersion1: a file of the format before (version 1: no cluster and
// no deploy templates in its header) still imports.
func TestReadsVersion1(t *testing.T) {
	source := openBolt(t)
	svc := configdb.NewService(source.Index, source.Blobs, configdb.WithClock(tick()))
	seed(t, source, svc)
	file := bytes.Replace(export(t, svc, "3"), fmt.Appendf(nil, `"version":%d,`, envexport.Version), []byte(`"version":1,`), 1)
	b := openBolt(t)
	if _, counts, err := importFile(configdb.NewService(b.Index, b.Blobs), file); err != nil || counts.Versions != 16 {
		t.Fatalf("import of a version 1 file: %+v, %v", counts, err)
	}
}
