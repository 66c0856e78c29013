package schemagen

import (
	"bytes"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite ../schemas.json")

// The schemas routes embeds are what the wire types generate.
func TestSchemasUpToDate(t *testing.T) {
	want, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	const file = "../schemas.json"
	if *update {
		if err := os.WriteFile(file, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not what the wire types generate: run go test ./shared/httpapi/routes/schemagen -update", file)
	}
}

// Generating twice gives the same bytes: the file does not change between runs.
func TestDeterministic(t *testing.T) {
	a, err := JSON()
	if err != nil {
		t.Fatal(err)
	}
	b, err := JSON()
	if err != nil || !bytes.Equal(a, b) {
		t.Fatalf("two generations differ (%v)", err)
	}
}
