// Package releasestore writes and reads back the content of the stores that
// earlier builds leave in testdata (the upgrade tests: shared/store/bolt's
// embedded files, localstack's dumps of the emulators' table and bucket):
// Write fills a store with this build, Read reads what a build finds in
// one, and Compare says where two readings differ.
package releasestore

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/shared/auth/audit"
	"github.com/tuningbox/tuningbox/shared/configdb"
	"github.com/tuningbox/tuningbox/shared/store"
)

// Reads is what a build reads from a release store: every document version
// (stored document and effective one) and version list, as the JSON text the
// API answers, and every audit record.
type Reads struct {
	Documents map[string]string   `json:"documents"`
	Versions  map[string][]string `json:"versions"`
	Audit     []audit.Record      `json:"audit"`
}

// Addresses are the documents a release store holds, in environment 7
// (levels role, host) of component "fuel".
var Addresses = []configdb.DocRef{
	{Env: "7", Resource: "astute"},
	{Env: "7", Resource: "astute", Levels: []configdb.LevelValue{{Name: "role", Value: "compute"}}},
	{Env: "7", Resource: "override/plugins", Levels: []configdb.LevelValue{{Name: "role", Value: "compute"}, {Name: "host", Value: "node-1.example.com"}}},
}

// Read reads everything Reads holds from b.
func Read(t testing.TB, b store.Backend) Reads {
	t.Helper()
	ctx := context.Background()
	svc := configdb.NewService(b.Index, b.Blobs)
	out := Reads{Documents: map[string]string{}, Versions: map[string][]string{}}
	for _, ref := range Addresses {
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

// Compare fails t where got, read with this build, differs from want, read
// by the build that wrote the store.
func Compare(t testing.TB, got, want Reads) {
	t.Helper()
	if len(want.Documents) == 0 || len(want.Audit) == 0 {
		t.Fatal("the release store's reads name no documents or no audit records")
	}
	for _, key := range slices.Sorted(maps.Keys(want.Documents)) {
		if got.Documents[key] != want.Documents[key] {
			t.Errorf("%s: %s, want %s", key, got.Documents[key], want.Documents[key])
		}
	}
	for _, key := range slices.Sorted(maps.Keys(want.Versions)) {
		if g, w := fmt.Sprint(got.Versions[key]), fmt.Sprint(want.Versions[key]); g != w {
			t.Errorf("versions of %s: %s, want %s", key, g, w)
		}
	}
	if g, w := fmt.Sprintf("%+v", got.Audit), fmt.Sprintf("%+v", want.Audit); g != w {
		t.Errorf("audit records:\n%s\nwant\n%s", g, w)
	}
}

// Write fills b with this build: a component, an environment and three
// versions of values and one of overrides at each of Addresses, most of them
// by audited requests, at fixed instants.
func Write(t testing.TB, b store.Backend) {
	t.Helper()
	ctx := context.Background()
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
	for i, ref := range Addresses {
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
}
