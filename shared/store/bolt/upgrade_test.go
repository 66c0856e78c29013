package bolt_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/store"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

// releaseStores are the stores earlier builds wrote, each in testdata/ with
// what that build read from it (NAME.json), oldest first. testdata/README.md
// says how each was made.
var releaseStores = []string{"store-d1e4ab3"}

var writeReleaseStore = flag.String("write-release-store", "", "write testdata/NAME.db and NAME.json with this build, then check them")

// releaseReads is what a build reads from a release store: every document
// version (stored document and effective one) and version list, as the JSON
// text the API answers, and every audit record.
type releaseReads struct {
	Documents map[string]string   `json:"documents"`
	Versions  map[string][]string `json:"versions"`
	Audit     []audit.Record      `json:"audit"`
}

// releaseAddresses are the documents a release store holds, in environment 7
// (levels role, host) of component "fuel".
var releaseAddresses = []configdb.DocRef{
	{Env: "7", Resource: "astute"},
	{Env: "7", Resource: "astute", Levels: []configdb.LevelValue{{Name: "role", Value: "compute"}}},
	{Env: "7", Resource: "override/plugins", Levels: []configdb.LevelValue{{Name: "role", Value: "compute"}, {Name: "host", Value: "node-1.example.com"}}},
}

// TestReleaseStoresOpen: each store an earlier build wrote passes the
// start-up check, opens read-write with this build, and reads as that build
// read it: every document version, effective document and audit record.
func TestReleaseStoresOpen(t *testing.T) {
	if *writeReleaseStore != "" {
		writeRelease(t, *writeReleaseStore)
	}
	for _, name := range releaseStores {
		t.Run(name, func(t *testing.T) {
			var want releaseReads
			golden, err := os.ReadFile(filepath.Join("testdata", name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			// A copy: opening read-write may add what this build needs to the file.
			dir := t.TempDir()
			db, err := os.ReadFile(filepath.Join("testdata", name+".db"))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, bolt.FileName), db, 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := bolt.Check(dir); err != nil {
				t.Fatal(err)
			}
			b, err := bolt.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			got := readRelease(t, b)
			if len(want.Documents) == 0 || len(want.Audit) == 0 {
				t.Fatalf("%s.json names no documents or no audit records", name)
			}
			for key, doc := range want.Documents {
				if got.Documents[key] != doc {
					t.Errorf("%s: %s, want %s", key, got.Documents[key], doc)
				}
			}
			for key, versions := range want.Versions {
				if g, w := fmt.Sprint(got.Versions[key]), fmt.Sprint(versions); g != w {
					t.Errorf("versions of %s: %s, want %s", key, g, w)
				}
			}
			if g, w := fmt.Sprintf("%+v", got.Audit), fmt.Sprintf("%+v", want.Audit); g != w {
				t.Errorf("audit records:\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// readRelease reads everything releaseReads holds from b.
func readRelease(t *testing.T, b store.Backend) releaseReads {
	t.Helper()
	ctx := context.Background()
	svc := configdb.NewService(b.Index, b.Blobs)
	out := releaseReads{Documents: map[string]string{}, Versions: map[string][]string{}}
	for _, ref := range releaseAddresses {
		for _, kind := range []configdb.Kind{configdb.Values, configdb.Overrides} {
			key := fmt.Sprintf("%s %v %s", ref.Resource, ref.Levels, kind)
			versions, err := svc.ListVersions(ctx, ref, kind)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range versions {
				raw, err := json.Marshal(v)
				if err != nil {
					t.Fatal(err)
				}
				out.Versions[key] = append(out.Versions[key], string(raw))
				doc, err := svc.GetDocument(ctx, ref, kind, v.Version)
				if err != nil {
					t.Fatal(err)
				}
				out.Documents[key+" version "+strconv.Itoa(v.Version)] = string(doc.Body)
			}
		}
		doc, err := svc.Read(ctx, configdb.ReadQuery{DocRef: ref, Kind: configdb.Values, Effective: true, ShowLookup: true})
		if err != nil {
			t.Fatal(err)
		}
		out.Documents[fmt.Sprintf("%s %v effective", ref.Resource, ref.Levels)] = string(doc.Body)
	}
	recs, err := audit.New(b.Index, nil).List(ctx, audit.Query{Limit: audit.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	out.Audit = recs
	return out
}

// writeRelease writes testdata/NAME.db with this build: a component, an
// environment and three versions of values and one of overrides at each of
// releaseAddresses, most of them by audited requests; and NAME.json with
// what this build reads from it.
func writeRelease(t *testing.T, name string) {
	ctx := context.Background()
	dir := t.TempDir()
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time {
		now = now.Add(time.Second)
		return now
	}
	svc := configdb.NewService(b.Index, b.Blobs, configdb.WithClock(clock))
	log := audit.New(b.Index, clock)
	request := 0
	audited := func(method, path string, write func(ctx context.Context) error) {
		request++
		actx, w := log.Begin(ctx, audit.Record{Principal: "ops", Role: "admin", RequestID: fmt.Sprintf("req-%d", request), Method: method, Path: path})
		if err := write(actx); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finish(actx, 201); err != nil {
			t.Fatal(err)
		}
	}
	audited("POST", "/api/v1/config/components", func(ctx context.Context) error {
		_, err := svc.CreateComponent(ctx, configdb.NewComponent{Name: "fuel", ResourceDefinitions: []configdb.NewResourceDefinition{{Name: "astute"}, {Name: "override/plugins"}}})
		return err
	})
	audited("POST", "/api/v1/config/environments", func(ctx context.Context) error {
		_, err := svc.CreateEnvironment(ctx, configdb.NewEnvironment{ID: 7, Components: []string{"fuel"}, Levels: []string{"role", "host"}})
		return err
	})
	for i, ref := range releaseAddresses {
		for v := range 3 {
			body := fmt.Sprintf(`{"address":%d,"version":%d,"ntp":["0.pool.ntp.org"],"debug":%t}`, i, v+1, v%2 == 0)
			put := func(ctx context.Context) error {
				_, err := svc.PutDocument(ctx, ref, configdb.Values, []byte(body), "")
				return err
			}
			if v == 0 {
				if err := put(ctx); err != nil { // written outside a request: no writer
					t.Fatal(err)
				}
				continue
			}
			audited("PUT", "/values", put)
		}
		audited("PUT", "/overrides", func(ctx context.Context) error {
			_, err := svc.PutDocument(ctx, ref, configdb.Overrides, []byte(fmt.Sprintf(`{"debug":false,"address":%d}`, i)), "")
			return err
		})
	}
	reads, err := json.MarshalIndent(readRelease(t, b), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := os.ReadFile(filepath.Join(dir, bolt.FileName))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".db"), db, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", name+".json"), append(reads, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
}
