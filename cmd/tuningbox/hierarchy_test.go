package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// hierarchyOf reads the entries of a Hiera 5 hierarchy of tuningbox::data_hash.
func hierarchyOf(t *testing.T, name string, yaml []byte) []hieraEntry {
	t.Helper()
	doc, err := puppetyaml.Decode(yaml)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	interpolated := regexp.MustCompile(`%\{[^}]+\}`)
	var out []hieraEntry
	for _, e := range doc.(map[string]any)["hierarchy"].([]any) {
		opts := e.(map[string]any)["options"].(map[string]any)
		split, _ := opts["split"].(bool)
		out = append(out, hieraEntry{resource: interpolated.ReplaceAllString(opts["resource"].(string), "*"), split: split})
	}
	return out
}

// The hierarchy config import checks files against is the one the Hiera
// module documents, in its README and in its example.
func TestRecommendedHierarchyIsTheModules(t *testing.T) {
	example, err := os.ReadFile("../../puppet/tuningbox/examples/hiera.yaml")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../puppet/tuningbox/README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, _ := strings.Cut(string(readme), "## hiera.yaml: the Fuel hierarchy")
	_, block, _ = strings.Cut(block, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	for name, yaml := range map[string][]byte{"examples/hiera.yaml": example, "README.md": []byte(block)} {
		if got := hierarchyOf(t, name, yaml); !slices.Equal(got, recommendedHierarchy) {
			t.Errorf("%s:\n got %v\nwant %v", name, got, recommendedHierarchy)
		}
	}
}

func TestHierarchyReads(t *testing.T) {
	for _, c := range []struct {
		resource, key string
		read          bool
	}{
		{"override/node", "", true},
		{"override/node", "node-1.domain.tld", false}, // Fuel's per-FQDN file: read by the split alternative only
		{"override/class", "nova", true},
		{"override/class", "", true},
		{"class", "nova::api", true},
		{"astute", "", true},
		{"override/configuration/node", "", true},
		{"override/configuration", "node-1.domain.tld", false},
		{"custom", "", false},
		{"override/plugins", "x", false},
	} {
		if got := hierarchyReads(c.resource, c.key); got != c.read {
			t.Errorf("hierarchyReads(%q, %q) = %v", c.resource, c.key, got)
		}
	}
}

// config import warns about every file the recommended hierarchy would not
// read, and still imports it.
func TestConfigImportWarnsAboutUnreadFiles(t *testing.T) {
	url := cliServer(t)
	args := []string{"comp", "create", "--name", "fuel"}
	for _, d := range append(fuelDataSources, "custom", "override/class") {
		args = append(args, "--definition", d)
	}
	mustCLI(t, url, "", args...)
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	registerNode(t, url, 7, "node-1.domain.tld", 1)
	dir := t.TempDir()
	writeTreeFile(t, dir, "astute.yaml", "a: 1\n")
	writeTreeFile(t, dir, "override/node.yaml", "debug: true\n")
	writeTreeFile(t, dir, "override/class/nova.yaml", "workers: 2\n")
	writeTreeFile(t, dir, "override/node/node-1.domain.tld.yaml", "ntp: x\n")
	writeTreeFile(t, dir, "custom.yaml", "c: 1\n")
	out := mustCLI(t, url, "", "config", "import", "--env", "1", "--node", "node-1.domain.tld", dir)
	var warnings []string
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "warning: ") {
			warnings = append(warnings, strings.TrimSpace(line))
		}
	}
	want := []string{
		"warning: " + dir + "/custom.yaml: the hierarchy of puppet/tuningbox/README.md does not read data source custom",
		"warning: " + dir + "/override/node/node-1.domain.tld.yaml: the hierarchy of puppet/tuningbox/README.md reads data source override/node whole, not its key node-1.domain.tld (see Fuel's per-FQDN layout there)",
	}
	if !slices.Equal(warnings, want) {
		t.Errorf("warnings:\n%s\nwant\n%s\noutput:\n%s", strings.Join(warnings, "\n"), strings.Join(want, "\n"), out)
	}
	if results := importResults(t, out); results["custom"] == "" || results["override/node"] == "" || results["override/class"] == "" {
		t.Errorf("imported: %v", results)
	}
}
