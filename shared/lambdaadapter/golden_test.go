package lambdaadapter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tuningbox/tuningbox/events"
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/app/server"
	"github.com/tuningbox/tuningbox/shared/lambdaadapter"
	"github.com/tuningbox/tuningbox/shared/store/bolt"
)

var update = flag.Bool("update", false, "rewrite the golden files in events/testdata")

// eventsDir is the events/ directory seen from this package.
const eventsDir = "../../events"

// TestGoldenEvents pushes every API Gateway fixture in events/ through the
// adapter, over the handler of the fixture's endpoint group on its own copy of
// the seeded embedded store, and compares the response with its golden file.
func TestGoldenEvents(t *testing.T) {
	fixtures, err := events.Load()
	if err != nil {
		t.Fatal(err)
	}
	seeded := t.TempDir()
	if err := events.SeedStore(seeded); err != nil {
		t.Fatal(err)
	}
	cfg, err := app.LoadConfig(func(name string) string { return events.Settings[name] })
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fixtures {
		t.Run(f.Name, func(t *testing.T) {
			dir := t.TempDir()
			if err := events.CopyStore(seeded, dir); err != nil {
				t.Fatal(err)
			}
			b, err := bolt.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			h, err := server.NewHandler(b, cfg, slog.New(slog.DiscardHandler), f.Group)
			if err != nil {
				t.Fatal(err)
			}

			out, err := lambdaadapter.New(h, slog.New(slog.DiscardHandler)).Invoke(context.Background(), f.Payload)
			if err != nil {
				t.Fatalf("Invoke returned an error instead of an HTTP response: %v", err)
			}
			raw, err := json.Marshal(out)
			if err != nil {
				t.Fatal(err)
			}
			got, err := events.NormalizeResponse(raw)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join(eventsDir, f.GoldenFile()), got.Marshal())
		})
	}
}

func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./shared/lambdaadapter -run TestGoldenEvents -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("response differs from %s\n got: %s\nwant: %s", path, got, want)
	}
}

// Every golden file belongs to a fixture, so a removed fixture leaves nothing behind.
func TestGoldenFilesHaveFixtures(t *testing.T) {
	fixtures, err := events.Load()
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range fixtures {
		want = append(want, filepath.Join(eventsDir, f.GoldenFile()))
	}
	got, err := filepath.Glob(filepath.Join(eventsDir, "testdata", "*", "*.golden.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			t.Errorf("%s has no fixture", g)
		}
	}
}
