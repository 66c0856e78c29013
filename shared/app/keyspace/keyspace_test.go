package keyspace

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/httpapi/routes"
)

// The prefixes are the ones the store's key design documents, no more, no less.
func TestPrefixesAreTheKeyDesign(t *testing.T) {
	doc, err := os.ReadFile("../../store/awsstore/doc.go")
	if err != nil {
		t.Fatal(err)
	}
	// The sentence "Every domain owns a partition-key prefix (configdb "cfg#", ...)".
	text := strings.ReplaceAll(string(doc), "\n// ", " ")
	_, sentence, ok := strings.Cut(text, "Every domain owns a partition-key prefix (")
	sentence, _, _ = strings.Cut(sentence, ")")
	if !ok {
		t.Fatal("doc.go no longer lists the partition-key prefixes")
	}
	var documented []string
	for _, m := range regexp.MustCompile(`"([a-z]+#)"`).FindAllStringSubmatch(sentence, -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(documented)
	if got := slices.Sorted(slices.Values(Prefixes)); !slices.Equal(got, documented) {
		t.Errorf("keyspace prefixes %v, doc.go documents %v", got, documented)
	}
	if !strings.Contains(text, "Blobs are immutable objects at "+BlobKeys+"<hex sha256>") {
		t.Errorf("doc.go no longer puts blobs under %s", BlobKeys)
	}
}

// Every function of the stack has an access, on known prefixes only, and
// only the authorizer and the watchers' reads are read-only.
func TestEveryFunctionHasItsAccess(t *testing.T) {
	names := append(routes.Groups(), Authorizer, GC)
	for _, name := range names {
		a, ok := Functions[name]
		if !ok {
			t.Errorf("function %s has no access", name)
			continue
		}
		for _, p := range slices.Concat(a.Read, a.Write) {
			if !slices.Contains(Prefixes, p) {
				t.Errorf("%s: unknown prefix %q", name, p)
			}
		}
		if readOnly := name == Authorizer || name == routes.GroupWatch; (len(a.Write) == 0) != readOnly {
			t.Errorf("%s: writes %v", name, a.Write)
		}
	}
	if len(Functions) != len(names) {
		t.Errorf("accesses for %d functions, the stack has %d (%v)", len(Functions), len(names), names)
	}
}
