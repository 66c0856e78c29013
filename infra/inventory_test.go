package main

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// inventoryDoc is where the stack's inventory is written down for operators.
const inventoryDoc = "../docs/aws.md"

// checkInventoryDoc holds docs/aws.md's inventory of the API type to the
// synthesized template: the block between "<!-- inventory TYPE -->" and
// "<!-- /inventory TYPE -->" must be what renderInventory makes of it. With
// TUNINGBOX_WRITE_INVENTORY=1 the test writes the block instead.
func checkInventoryDoc(t *testing.T, apiType APIType, s *synthesized) {
	t.Helper()
	doc, err := os.ReadFile(inventoryDoc)
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile(fmt.Sprintf(`(?s)(<!-- inventory %s -->\n).*?(<!-- /inventory %s -->)`, apiType, apiType))
	loc := block.FindSubmatchIndex(doc)
	if loc == nil {
		t.Fatalf("%s has no <!-- inventory %s --> block", inventoryDoc, apiType)
	}
	want := renderInventory(apiType, s.countByType())
	got := string(doc[loc[3]:loc[4]])
	if got == want {
		return
	}
	if os.Getenv("TUNINGBOX_WRITE_INVENTORY") == "1" {
		updated := slices.Concat(doc[:loc[3]], []byte(want), doc[loc[4]:])
		if err := os.WriteFile(inventoryDoc, updated, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote the %s inventory to %s", apiType, inventoryDoc)
		return
	}
	t.Errorf("%s's %s inventory differs from the template (TUNINGBOX_WRITE_INVENTORY=1 rewrites it):\n got:\n%s\nwant:\n%s", inventoryDoc, apiType, got, want)
}

// renderInventory is the Markdown of an inventory: the total, then each resource type's count.
func renderInventory(apiType APIType, counts map[string]int) string {
	total := 0
	for _, n := range counts {
		total += n
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s API: **%d resources**.\n\n| resource type | count |\n|---|---|\n", strings.ToUpper(string(apiType)), total)
	for _, typ := range slices.Sorted(maps.Keys(counts)) {
		fmt.Fprintf(&b, "| `%s` | %d |\n", typ, counts[typ])
	}
	return b.String()
}
