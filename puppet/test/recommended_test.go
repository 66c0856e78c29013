package puppettest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/puppetyaml"
)

// seedTree is a seed-000-shaped /etc/hiera tree, its files in the order of the
// module's recommended hierarchy (most specific first); several keys are in
// more than one file, so precedence is checked too.
var seedTree = []struct{ path, yaml string }{
	{"override/node.yaml", "ntp_server: 10.0.0.1\nnode_only: from override/node\n"},
	{"override/plugins.yaml", "plugin_flag: true\nntp_server: from override/plugins\n"},
	{"override/common.yaml", "common_key: from override/common\n"},
	{"override/configuration/node.yaml", "configuration:\n  nova_config:\n    DEFAULT/debug: {value: true}\n"},
	{"override/configuration/role.yaml", "role_conf: from role\n"},
	{"override/configuration/cluster.yaml", "role_conf: from cluster\ncluster_conf: from cluster\n"},
	{"nodes.yaml", "nodes:\n  - {fqdn: node-1.domain.tld, uid: '7'}\n"},
	{"globals.yaml", "ntp_server: pool.ntp.org\nglobals_only: from globals\n"},
	{"astute.yaml", "deployment_id: 1\nnode_only: from astute\n"},
}

// The module's recommended hierarchy (examples/hiera.yaml, as it is) reads
// everything `tuningbox config import` stores from a seed-shaped tree, the
// node's own override/node included: every top-level key of every file is
// looked up with real Puppet and must be the value of the most specific file
// holding it.
func TestRecommendedHierarchyReadsAnImportedTree(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to run real puppet lookups")
	}
	root := repoRoot(t)
	tree := t.TempDir()
	want := map[string]any{} // key -> the value of the most specific file
	args := []string{"comp", "create", "--name", "fuel"}
	for _, f := range seedTree {
		writeFile(t, filepath.Join(tree, f.path), f.yaml)
		args = append(args, "--definition", strings.TrimSuffix(f.path, ".yaml"))
		doc, err := puppetyaml.Decode([]byte(f.yaml))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range doc.(map[string]any) {
			if _, seen := want[k]; !seen {
				want[k] = v
			}
		}
	}

	srv := startServer(t)
	srv.createUser(t, client.NewUser{Name: hieraUser, Password: hieraPassword, Role: "observer"})
	srv.cli(t, "", args...)
	srv.cli(t, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	srv.createNode(t, client.NewNode{ID: "7", FQDN: "node-1.domain.tld", EnvironmentID: "1", Roles: []string{"controller"}})
	srv.cli(t, "", "config", "import", "--env", "1", "--node", "node-1.domain.tld", tree)

	example, err := os.ReadFile(filepath.Join(root, "puppet", "tuningbox", "examples", "hiera.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	config := strings.NewReplacer(`"https://tuningbox.example.com:8443"`, `"`+srv.url+`"`,
		"user: hiera\n", "user: "+hieraUser+"\n", "password: secret\n", "password: "+hieraPassword+"\n",
		"      ca_file: /etc/puppetlabs/puppet/tuningbox-ca.pem\n", "").Replace(string(example))
	if strings.Contains(config, "example.com") || !strings.Contains(config, hieraPassword) {
		t.Fatalf("examples/hiera.yaml changed shape; the test's replacements no longer apply:\n%s", config)
	}
	p := newPuppet(t, root, config)
	facts := p.facts(t, "node-1.domain.tld", "controller")
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, key := range keys {
		got, found, _ := p.lookup(t, "node-1.domain.tld", facts, key)
		expected, _ := json.Marshal(want[key])
		if !found || canonical(t, got) != canonical(t, string(expected)) {
			t.Errorf("%s: Puppet reads %q (found %v), want %s", key, got, found, expected)
			continue
		}
		t.Logf("%-14s %s", key, got)
	}
	t.Logf("%d keys of %d files looked up through the recommended hierarchy", len(keys), len(seedTree))
}
