package puppettest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tuningbox/tuningbox/client"
)

// The differential test: one /etc/hiera-shaped tree full of values YAML 1.1
// and YAML 1.2 read differently, looked up key by key through Puppet's own
// yaml_data backend on the files and through tuningbox's backend after
// `tuningbox config import`. Every key must read the same.

// trickyTree is the tree, by path. The hierarchy reads override/node/<fqdn>,
// override/plugins, globals, astute (Fuel's order); shared_key is in three
// files so precedence is compared too.
var trickyTree = map[string]string{
	"astute.yaml": `# Top-level scalars
bool_yes: yes
sexagesimal: 1:30
octal: 0755
float_e: 1.5e3
null_tilde: ~
:symbol_key: from a symbol key
# YAML 1.1 booleans as Psych reads them: any case; y/n are strings
booleans: [yes, Yes, NO, on, Off, True, fAlSe, y, N, yesterday]
nulls: {tilde: ~, word: NULL, empty: }
# base 60: Psych weighs two parts as hours and minutes
base60: [1:30, 1:30:15, -1:30, 1:30.5, 12:30:45, 1000:2000]
integers: [0755, 0_755, 08, 0o755, 0x1F, 0X1F, 0b1010, 1_000_000, 1,000, +12, 123456789012345678901234567890]
# floats: a dot and a signed exponent
floats: [1.5e3, 1.5e+3, 1.5E-3, 1e3, 1., .5, 0.25, 1.0, 1_000.5, 1.2.3, 10.0.0.1]
# quoted, block and tagged scalars
quoted: ['yes', "1:30", '0755', '2016-04-01', "~", '']
blocks:
  literal: |
    on
    1:30
  folded: >-
    yes
    no
tagged: [!!str 0755, !!int '12', !!float 1]
strings:
  - http://example.com:8080/x?y=1
  - "a: b"
  - ünïcödé ✓
empty: {list: [], map: {}}
# anchors, aliases, merge keys
base: &base {a: 1, b: [x, on], c: {d: off}}
alias_copy: *base
merges:
  then_override:
    <<: *base
    b: overridden
  override_then_merge:
    a: 2
    <<: *base
  list:
    <<: [{k: first, only1: 1}, {k: second, only2: 2}]
nested:
  level1:
    level2: [yes, no, ~, 1:30, 0755, 1.5e3, 1.5e+3, {deep: off, ":sym": 1}]
list_of_maps:
  - {name: a, enabled: on}
  - {name: b, enabled: n}
repeated:
  k: 1
  k: 2
shared_key: from astute
`,
	"globals.yaml": `shared_key: from globals
globals_flag: Off
ntp_servers: [0.pool.ntp.org, 1:30, 2016-04-01 is a string here]
`,
	"override/plugins.yaml": `plugin_defaults: &pd {enabled: yes, timeout: 0:30}
plugin_x:
  <<: *pd
  timeout: 1:00:00
plugin_y: *pd
`,
	"override/node/node-1.domain.tld.yaml": `shared_key: from the node
node_debug: True
node_workers: 0x10
`,
}

// refusedValues are values Puppet's yaml_data refuses: `config import`
// refuses the file, naming file and line, and stores nothing.
var refusedValues = []struct{ name, yaml, want string }{
	{"bare date", "ok: 1\nk: 2016-04-01\n", "astute.yaml:2: key k: \"2016-04-01\" reads as a Ruby Date"},
	{"timestamp", "ok: 1\nk: 2016-04-01 10:00:00\n", "astute.yaml:2: key k: \"2016-04-01 10:00:00\" reads as a Ruby Time"},
	{"symbol value", "ok: 1\nk:\n  - :sym\n", "astute.yaml:3: key k.0: :sym reads as the Ruby Symbol :sym"},
	{"boolean key", "ok: 1\nk:\n  on: 1\n", "astute.yaml:3: key k: key on reads as the Boolean true"},
	{"null key", "ok: 1\nk:\n  ~: 1\n", "astute.yaml:3: key k: key ~ reads as nil"},
}

// fileHieraYAML reads the tree with Puppet's own backend.
const fileHieraYAML = `version: 5
defaults:
  datadir: %s
  data_hash: yaml_data
hierarchy:
  - name: "override/node"
    path: "override/node/%%{trusted.certname}.yaml"
  - name: "override/plugins"
    path: "override/plugins.yaml"
  - name: "globals"
    path: "globals.yaml"
  - name: "astute"
    path: "astute.yaml"
`

func TestYAMLAsPuppetReadsIt(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to run real puppet lookups")
	}
	root := repoRoot(t)
	tree := t.TempDir()
	for path, content := range trickyTree {
		writeFile(t, filepath.Join(tree, path), content)
	}

	srv := startServer(t)
	srv.createUser(t, client.NewUser{Name: hieraUser, Password: hieraPassword, Role: "observer"})
	srv.cli(t, "", "comp", "create", "--name", "fuel",
		"--definition", "astute", "--definition", "globals", "--definition", "override/plugins", "--definition", "override/node")
	srv.cli(t, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "role,nodes")
	srv.createNode(t, client.NewNode{ID: "7", FQDN: "node-1.domain.tld", EnvironmentID: "1", Roles: []string{"controller"}, Levels: map[string]string{"role": "controller"}})
	srv.cli(t, "", "config", "import", "--env", "1", "--node", "node-1.domain.tld", "--level", "role=controller", tree)

	// Two lookups run at a time, each slot with Puppets of its own: runs that
	// share a vardir race to create its directories ("File exists @ dir_s_mkdir").
	const parallel = 2
	var bySlot [parallel][2]*puppet // [slot][files, through]
	for slot := range bySlot {
		bySlot[slot] = [2]*puppet{
			newPuppet(t, root, fmt.Sprintf(fileHieraYAML, tree)),
			newPuppet(t, root, fmt.Sprintf(hieraYAML, srv.url, hieraUser, hieraPassword)),
		}
	}
	files := bySlot[0][0]
	facts := files.facts(t, "node-1.domain.tld", "controller")

	keys := psychKeys(t, tree)
	type result struct {
		out, errOut string
		failed      bool
	}
	results := make([][2]result, len(keys))
	var wg sync.WaitGroup
	free := make(chan int, parallel)
	for slot := range parallel {
		free <- slot
	}
	for i, key := range keys {
		for side := range 2 {
			wg.Go(func() {
				slot := <-free
				defer func() { free <- slot }()
				out, errOut, _, err := bySlot[slot][side].run("node-1.domain.tld", facts, key)
				results[i][side] = result{out, errOut, err != nil}
			})
		}
	}
	wg.Wait()

	leaves, differ := 0, 0
	for i, key := range keys {
		file, tb := results[i][0], results[i][1]
		if file.failed || tb.failed {
			differ++
			t.Errorf("%s: lookup failed (files: %v, tuningbox: %v)\nfiles stderr: %s\ntuningbox stderr: %s", key, file.failed, tb.failed, file.errOut, tb.errOut)
			continue
		}
		a, b := exactJSON(t, file.out), exactJSON(t, tb.out)
		if a != b {
			differ++
			t.Errorf("%s: Puppet reads %s from the file, %s through tuningbox", key, a, b)
		}
		leaves += countLeaves(t, file.out)
		t.Logf("%-22s %s", key, a)
	}
	if leaves < 28 {
		t.Errorf("the tree has %d leaf values, want at least the 28 kinds of tricky values of the issue", leaves)
	}
	t.Logf("%d keys (%d leaf values) looked up through Puppet's yaml_data on the files and through tuningbox after config import: %d differ",
		len(keys), leaves, differ)

	checkRefused(t, root, srv, facts)
}

// psychKeys lists the top-level keys of every file of the tree as Puppet's
// yaml_data sees them (Psych loads them; Puppet turns symbol keys into strings).
func psychKeys(t *testing.T, tree string) []string {
	t.Helper()
	script := `require 'yaml'
keys = ARGV.flat_map { |f| YAML.safe_load(File.read(f), permitted_classes: [Symbol], aliases: true).keys.map(&:to_s) }
puts keys.uniq.sort`
	var paths []string
	for path := range trickyTree {
		paths = append(paths, filepath.Join(tree, path))
	}
	out, err := exec.Command("ruby", append([]string{"-e", script}, paths...)...).Output()
	if err != nil {
		t.Fatalf("ruby listing the keys: %v", err)
	}
	return strings.Fields(string(out))
}

// exactJSON renders a lookup's JSON output with sorted keys and numbers as
// Ruby wrote them, so 1 and 1.0, "1" and 1 stay different.
func exactJSON(t *testing.T, s string) string {
	t.Helper()
	v := decodeExact(t, s)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(buf.String())
}

func decodeExact(t *testing.T, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("lookup output is not JSON: %q", s)
	}
	return v
}

func countLeaves(t *testing.T, s string) int {
	var count func(any) int
	count = func(v any) int {
		switch x := v.(type) {
		case map[string]any:
			n := 0
			for _, item := range x {
				n += count(item)
			}
			return max(n, 1)
		case []any:
			n := 0
			for _, item := range x {
				n += count(item)
			}
			return max(n, 1)
		}
		return 1
	}
	return count(decodeExact(t, s))
}

// checkRefused: for each value Puppet refuses, Puppet's lookup from the file
// fails, and `config import` of the same file fails naming the file and line
// and stores nothing.
func checkRefused(t *testing.T, root string, srv *server, facts string) {
	for _, tt := range refusedValues {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "astute.yaml"), tt.yaml)
		p := newPuppet(t, root, fmt.Sprintf(fileHieraYAML, dir))
		_, puppetErr, _, err := p.run("node-1.domain.tld", facts, "k")
		if err == nil || !strings.Contains(puppetErr, "Error") {
			t.Errorf("%s: Puppet's yaml_data read it (err %v, stderr %q); the test expects Puppet to refuse it", tt.name, err, puppetErr)
		}
		out, err := srv.cliResult("", "config", "import", "--env", "1", "--node", "node-1.domain.tld", "--level", "role=controller", dir)
		if err == nil || !strings.Contains(out, filepath.Join(dir, tt.want)) {
			t.Errorf("%s: config import: err %v, output:\n%s\nwant a failure naming %s", tt.name, err, out, tt.want)
		}
		t.Logf("%-13s Puppet: %s", tt.name, firstLine(puppetErr, "Error"))
		t.Logf("%-13s tuningbox: %s", "", firstLine(out, "failed"))
	}
	// Nothing was stored: astute still holds the tree's document (version 1).
	out, err := srv.cliResult("", "config", "history", "--env", "1", "--level", "role=controller,nodes=node-1.domain.tld", "--resource", "astute", "--format", "json")
	if err != nil {
		t.Fatalf("config history: %v\n%s", err, out)
	}
	if n := len(decodeExact(t, out).([]any)); n != 1 {
		t.Errorf("astute has %d versions after the refused imports, want 1:\n%s", n, out)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cliResult runs the tuningbox client and returns its combined output and error.
func (s *server) cliResult(stdin string, args ...string) (string, error) {
	cmd := exec.Command(s.bin, append([]string{"--url", s.url, "--user", adminUser}, args...)...)
	cmd.Env = append(os.Environ(), "TUNINGBOX_PASSWORD="+adminPassword)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	return string(out), err
}
