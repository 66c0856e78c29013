package bolt_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/tuningbox/tuningbox/shared/store/bolt"
	"github.com/tuningbox/tuningbox/shared/store/releasestore"
)

// releaseStores are the stores earlier builds wrote, each in testdata/ with
// what that build read from it (NAME.json), oldest first. testdata/README.md
// says how each was made.
var releaseStores = []string{"store-d1e4ab3"}

var writeReleaseStore = flag.String("write-release-store", "", "write testdata/NAME.db and NAME.json with this build, then check them")

// TestReleaseStoresOpen: each store an earlier build wrote passes the
// start-up check, opens read-write with this build, and reads as that build
// read it: every document version, effective document and audit record.
func TestReleaseStoresOpen(t *testing.T) {
	if *writeReleaseStore != "" {
		writeRelease(t, *writeReleaseStore)
	}
	for _, name := range releaseStores {
		t.Run(name, func(t *testing.T) {
			var want releasestore.Reads
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
			releasestore.Compare(t, releasestore.Read(t, b), want)
		})
	}
}

// writeRelease writes testdata/NAME.db with this build (releasestore.Write)
// and NAME.json with what this build reads from it.
func writeRelease(t *testing.T, name string) {
	dir := t.TempDir()
	b, err := bolt.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	releasestore.Write(t, b)
	reads, err := json.MarshalIndent(releasestore.Read(t, b), "", "  ")
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
