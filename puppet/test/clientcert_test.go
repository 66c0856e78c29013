package puppettest

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth/clientcert/clientcerttest"
)

// hieraCertYAML is hieraYAML with the Puppet host certificate in place of a password.
var hieraCertYAML = strings.Replace(hieraYAML, "      user: %s\n      password: %s\n",
	"      ssl_cert: %s\n      ssl_key: %s\n      ca_file: %s\n", 1)

// TestPuppetLookupWithClientCertificate serves HTTPS with the client CA of a
// Puppet-like CA, and runs real lookups whose hiera.yaml holds no password:
// the Puppet server's certificate reads every node, node-1's certificate reads
// node-1 and fails on node-2's 403.
func TestPuppetLookupWithClientCertificate(t *testing.T) {
	if os.Getenv("TUNINGBOX_HIERA_TEST") != "1" {
		t.Skip("set TUNINGBOX_HIERA_TEST=1 (make hiera) to run real puppet lookups")
	}
	if _, err := exec.LookPath("puppet"); err != nil {
		t.Fatal("puppet is not on the PATH: run puppet/test/run.sh, which installs puppet-agent")
	}
	root := repoRoot(t)
	ca := clientcerttest.New(t, "puppet.example.com")
	tlsCert := ca.Issue("127.0.0.1")
	srv := startServer(t, "--tls-cert", tlsCert.CertPEM, "--tls-key", tlsCert.KeyPEM,
		"--client-ca", ca.CertPEM, "--client-crl", ca.CRLPEM, "--server-certname", "puppet.example.com")
	srv.caFile = ca.CertPEM
	seed(t, srv)

	hiera := func(h clientcerttest.Host) *puppet {
		return newPuppet(t, root, fmt.Sprintf(hieraCertYAML, srv.url, h.CertPEM, h.KeyPEM, ca.CertPEM))
	}
	server := hiera(ca.Issue("puppet.example.com"))
	node1 := hiera(ca.Issue("node-1.domain.tld"))
	node1Facts, node2Facts := server.facts(t, "node-1.domain.tld", "controller"), server.facts(t, "node-2.domain.tld", "compute")

	for _, c := range []struct {
		who         *puppet
		node, facts string
		want        string
	}{
		{server, "node-1.domain.tld", node1Facts, "42"},
		{server, "node-2.domain.tld", node2Facts, "6"},
		{node1, "node-1.domain.tld", node1Facts, "42"},
	} {
		got, found, wall := c.who.lookup(t, c.node, c.facts, "deployment_id")
		if !found || got != c.want {
			t.Errorf("deployment_id of %s: %q (found %v), want %s", c.node, got, found, c.want)
		}
		t.Logf("certificate lookup of %s: deployment_id = %s in %d ms", c.node, got, wall.Milliseconds())
	}
	stdout, stderr, _, err := node1.run("node-2.domain.tld", node2Facts, "deployment_id")
	if err == nil || !strings.Contains(stderr, "403") {
		t.Errorf("node-1's certificate for node-2's data: err %v, stdout %q, stderr %q; want a failed lookup naming the 403", err, stdout, stderr)
	}
	t.Logf("node-1's certificate for node-2: %s", firstLine(stderr, "403"))
}
