package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// writeHieraTree writes an /etc/hiera-shaped tree like a deployed Fuel node's
// and returns its directory and the number of leaf keys in astute.yaml.
func writeHieraTree(t *testing.T, fqdn string, uid int) (string, int) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	leaves := 0
	line := func(indent int, format string, args ...any) {
		b.WriteString(strings.Repeat("  ", indent))
		fmt.Fprintf(&b, format, args...)
		b.WriteString("\n")
	}
	leaf := func(indent int, format string, args ...any) {
		leaves++
		line(indent, format, args...)
	}
	leaf(0, "uid: '%d'", uid)
	leaf(0, "fqdn: %s", fqdn)
	leaf(0, "deployment_id: 38")
	leaf(0, "deployment_mode: ha_compact")
	leaf(0, "openstack_version: 2015.1.0-8.0")
	leaf(0, "role: primary-controller")
	leaf(0, "debug: false")
	leaf(0, "auth_key: ''")
	leaf(0, "storage_uuid: 123456789012345678901234567890")
	line(0, "defaults: &service_defaults")
	leaf(1, "workers: 4")
	leaf(1, "log_level: INFO")
	leaf(1, "use_syslog: true")
	services := []string{"nova", "glance", "keystone", "cinder", "neutron", "heat", "ceilometer", "swift", "sahara", "murano", "ironic", "mysql", "rabbit", "horizon", "aodh", "mongo"}
	for i, svc := range services {
		line(0, "%s:", svc)
		line(1, "<<: *service_defaults")
		leaves += 3 // merged from the defaults
		leaf(1, "db_password: %s-%08x", svc, 0x9e3779b9*uint32(i+1))
		leaf(1, "user_password: u%08x", 0x85ebca6b*uint32(i+1))
		leaf(1, "enabled: %t", i%3 != 0)
		leaf(1, "port: %d", 8000+i)
		leaf(1, "ratio: %d.5", i)
		leaf(1, "endpoint: http://10.20.0.2:%d/v2", 8000+i)
		line(1, "tuning:")
		for j := range 8 {
			leaf(2, "option_%d: %d", j, i*j)
		}
		line(1, "hosts:")
		for j := range 3 {
			leaves++
			line(2, "- node-%d.domain.tld", j+1)
		}
	}
	line(0, "network_scheme:")
	line(1, "version: '1.1'")
	leaves++
	line(1, "endpoints:")
	for _, br := range []string{"br-mgmt", "br-storage", "br-ex", "br-fw-admin", "br-mesh"} {
		line(2, "%s:", br)
		line(3, "IP:")
		leaves++
		line(4, "- 10.%d.0.%d/24", len(br), uid)
		leaf(3, "gateway: 10.%d.0.1", len(br))
	}
	line(1, "transformations:")
	for i := range 10 {
		line(2, "- action: add-port")
		line(3, "name: eth%d", i)
		line(3, "bridge: br-%d", i)
		leaves++
	}
	line(0, "vlan_ids:")
	for i := range 10 {
		leaf(1, "'%d': vlan%d", 100+i, 100+i) // quoted: Puppet reads 100: as an Integer key
	}
	line(0, "nodes:")
	for i := range 5 {
		line(1, "- uid: '%d'", i+1)
		line(2, "fqdn: node-%d.domain.tld", i+1)
		line(2, "internal_address: 10.20.0.%d", i+3)
		leaves++
	}
	writeTreeFile(t, dir, "astute.yaml", b.String())

	writeTreeFile(t, dir, "globals.yaml", `
management_network_range: 10.20.0.0/24
database_vip: 10.20.0.2
service_endpoint: 10.20.0.2
use_ceph: false
memcached_addresses: [10.20.0.3, 10.20.0.4, 10.20.0.5]
keystone_hash: {service_token_off: false, admin_token: abc}
`)
	writeTreeFile(t, dir, "override/plugins.yaml", "nova:\n  workers: 16\nplugin_enabled: true\n")
	// Fuel's per-node file: key fqdn of data source override/node.
	writeTreeFile(t, dir, "override/node/"+fqdn+".yaml", "debug: true\nnova: {workers: 2}\n")
	writeTreeFile(t, dir, "override/common.yaml", "")
	writeTreeFile(t, dir, "override/configuration/node.yaml", "configuration:\n  nova_config:\n    DEFAULT/debug: {value: true}\n")
	writeTreeFile(t, dir, "override/configuration/role.yaml", "configuration: {}\n")
	writeTreeFile(t, dir, "override/configuration/cluster.yaml", "configuration:\n  keystone_config:\n    token/expiration: {value: 3600}\n")
	return dir, leaves
}

var importLine = regexp.MustCompile(`(?m)^(\S+)\s+(updated \(version \d+\)|unchanged|failed: .*)$`)

// importResults maps each data source to what the import did with it.
func importResults(t *testing.T, out string) map[string]string {
	t.Helper()
	results := map[string]string{}
	for _, m := range importLine.FindAllStringSubmatch(out, -1) {
		results[m[1]] = m[2]
	}
	return results
}

func TestConfigImport(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	dir, leaves := writeHieraTree(t, "node-1.domain.tld", 7)
	if leaves < 300 {
		t.Fatalf("sample astute.yaml has %d leaf keys, want a few hundred", leaves)
	}
	importArgs := []string{"config", "import", "--env", "1", "--node", "node-1.domain.tld", dir}

	out := mustCLI(t, url, "", importArgs...)
	results := importResults(t, out)
	want := []string{"astute", "globals", "override/common", "override/configuration/cluster", "override/configuration/node",
		"override/configuration/role", "override/node", "override/plugins"}
	if len(results) != len(want) {
		t.Fatalf("import reported %d data sources, want %d:\n%s", len(results), len(want), out)
	}
	for _, r := range want {
		// The empty override/common.yaml equals "no document": nothing to write.
		wantResult := "updated (version 1)"
		if r == "override/common" {
			wantResult = "unchanged"
		}
		if results[r] != wantResult {
			t.Errorf("first import of %s: %q, want %q", r, results[r], wantResult)
		}
	}
	if !strings.HasSuffix(out, "environment 1 at nodes=node-1.domain.tld: 7 updated, 1 unchanged, 0 failed\n") {
		t.Errorf("summary:\n%s", out)
	}

	// The stored document is astute.yaml read as JSON: merge keys expanded,
	// integer keys as strings, the 30-digit integer exact.
	data, err := os.ReadFile(filepath.Join(dir, "astute.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	fromFile, err := puppetyaml.Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	stored := jsonOut(t, mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=7", "--resource", "astute"))
	if !sameJSON(stored, fromFile) {
		t.Error("stored astute differs from astute.yaml")
	}
	for key, want := range map[string]string{"storage_uuid": "123456789012345678901234567890", "nova.workers": "4", "vlan_ids.105": "vlan105", "nova.ratio": "0.5"} {
		if got := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=7", "--resource", "astute", "--key", key, "--format", "plain"); got != want+"\n" {
			t.Errorf("%s = %q, want %s", key, got, want)
		}
	}

	// override/node/<fqdn>.yaml is key <fqdn> of override/node, where the Hiera backend's split reads it.
	assertJSON(t, mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=7", "--resource", "override/node"),
		`{"node-1.domain.tld": {"debug": true, "nova": {"workers": 2}}}`)

	// A second run with nothing changed writes nothing.
	out = mustCLI(t, url, "", importArgs...)
	if !strings.HasSuffix(out, ": 0 updated, 8 unchanged, 0 failed\n") {
		t.Errorf("re-import of an unchanged tree:\n%s", out)
	}

	// Only the changed file becomes a new version.
	writeTreeFile(t, dir, "override/plugins.yaml", "nova:\n  workers: 32\nplugin_enabled: true\n")
	dry := mustCLI(t, url, "", append([]string{"config", "import", "--dry-run"}, importArgs[2:]...)...)
	if !strings.Contains(dry, "override/plugins") || !strings.HasSuffix(dry, ": 1 would update, 7 unchanged, 0 failed\n") {
		t.Errorf("dry run:\n%s", dry)
	}
	out = mustCLI(t, url, "", importArgs...)
	if results := importResults(t, out); results["override/plugins"] != "updated (version 2)" || results["astute"] != "unchanged" {
		t.Errorf("import after one change:\n%s", out)
	}
	diff := mustCLI(t, url, "", "config", "diff", "--env", "1", "--level", "nodes=7", "--resource", "override/plugins", "--from", "1", "--to", "2")
	if !strings.Contains(diff, "~ nova.workers: 16 -> 32\n") {
		t.Errorf("diff of the re-imported file:\n%s", diff)
	}

	// The other node's tree goes to its own level; node 1's documents stay.
	dir2, _ := writeHieraTree(t, "node-2.domain.tld", 8)
	mustCLI(t, url, "", "config", "import", "--env", "1", "--node", "node-2.domain.tld", dir2)
	if got := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=node-2.domain.tld", "--resource", "astute", "--key", "uid", "--format", "plain"); got != "8\n" {
		t.Errorf("node-2 uid = %q", got)
	}
	if got := mustCLI(t, url, "", "config", "get", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--key", "uid", "--format", "plain"); got != "7\n" {
		t.Errorf("node-1 uid = %q", got)
	}
}

func TestConfigImportFailures(t *testing.T) {
	url := cliServer(t)
	seedFuel(t, url)
	dir := t.TempDir()
	writeTreeFile(t, dir, "astute.yaml", "a: 1\n")
	writeTreeFile(t, dir, "undefined_source.yaml", "a: 1\n")
	writeTreeFile(t, dir, "globals.yaml", "a: [1\n")
	writeTreeFile(t, dir, "override/plugins.yaml", "- 1\n")
	writeTreeFile(t, dir, "override/node.yaml", "node-1.domain.tld: {a: 1}\n")
	writeTreeFile(t, dir, "override/node/node-1.domain.tld.yaml", "a: 2\n")
	// Puppet's yaml_data refuses a bare date: so does the import, naming file and line.
	writeTreeFile(t, dir, "override/common.yaml", "ok: 1\nrelease: 2016-04-01\n")

	out, err := cli(t, url, "", "config", "import", "--env", "1", "--node", "node-1.domain.tld", dir)
	if err == nil || exitCode(err) != 1 || !strings.Contains(err.Error(), "5 of 6 data sources failed") {
		t.Fatalf("err = %v, want 5 of 6 failed\n%s", err, out)
	}
	results := importResults(t, out)
	if results["astute"] != "updated (version 1)" ||
		!strings.Contains(results["undefined_source"], "not defined in environment 1") ||
		!strings.Contains(results["globals"], "invalid YAML") ||
		!strings.Contains(results["override/plugins"], "must hold a mapping") ||
		!strings.Contains(results["override/node"], `key "node-1.domain.tld" is both in`) ||
		!strings.Contains(results["override/common"], filepath.Join(dir, "override", "common.yaml")+":2: key release: \"2016-04-01\" reads as a Ruby Date") {
		t.Errorf("per-file results:\n%s", out)
	}

	for _, tt := range []struct {
		args     []string
		wantExit int
	}{
		{[]string{"config", "import", "--env", "1", "--node", "node-9.domain.tld", dir}, 3},
		{[]string{"config", "import", "--env", "42", "--node", "node-1.domain.tld", dir}, 3},
		{[]string{"config", "import", "--env", "1", dir}, 2},
		{[]string{"config", "import", "--env", "1", "--node", "node-1.domain.tld"}, 2},
		{[]string{"config", "import", "--env", "1", "--node", "node-1.domain.tld", t.TempDir()}, 2},
	} {
		if _, err := cli(t, url, "", tt.args...); exitCode(err) != tt.wantExit {
			t.Errorf("%v: %v (exit %d), want exit %d", tt.args, err, exitCode(err), tt.wantExit)
		}
	}
}
