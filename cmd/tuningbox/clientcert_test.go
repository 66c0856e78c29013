package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert/clientcerttest"
)

// TestClientCertificates serves HTTPS with --client-ca and --client-crl of a
// Puppet-like CA and reads with the CLI's --client-cert/--client-key: a node's certificate
// is that node (its own data, 403 on another node's or another environment's,
// no writes), the Puppet
// server's certname reads every node, a certificate of another CA and a
// revoked one are refused in the TLS handshake, an unregistered certname is 401.
func TestClientCertificates(t *testing.T) {
	for _, name := range []string{"TUNINGBOX_URL", "TUNINGBOX_TOKEN", "TUNINGBOX_CLIENT_CERT", "TUNINGBOX_CLIENT_KEY", "TUNINGBOX_API_VERSION"} {
		t.Setenv(name, "")
	}
	ca := clientcerttest.New(t, "puppet.example.com")
	server := ca.Issue("127.0.0.1")
	node1, node2 := ca.Issue("node-1.domain.tld"), ca.Issue("node-2.domain.tld")
	puppetServer := ca.Issue("puppet.example.com")
	stranger := ca.Issue("stranger.domain.tld")
	node1Revoked := ca.Issue("node-1.domain.tld")
	foreign := clientcerttest.New(t, "other.example.com").Issue("node-1.domain.tld")

	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.AdminUser, cfg.AdminPassword = testAdmin, testAdminPassword
	cfg.ServerCertnames = []string{"Puppet.Example.com"}
	verifier, err := clientcert.New(ca.CertPEM, ca.CRLPEM)
	if err != nil {
		t.Fatal(err)
	}
	tlsCfg := newServerTLSConfig()
	verifier.Configure(tlsCfg)
	addr := freeLoopbackAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, addr, server.CertPEM, server.KeyPEM, tlsCfg, 5*time.Second) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := "https://" + addr
	waitForTLS(t, url, ca.CertPEM)
	t.Setenv("TUNINGBOX_CACERT", ca.CertPEM)

	// The administrator seeds with a password over the same listener.
	t.Setenv("TUNINGBOX_USER", testAdmin)
	t.Setenv("TUNINGBOX_PASSWORD", testAdminPassword)
	mustCLI(t, url, "", "comp", "create", "--name", "fuel", "--definition", "astute")
	mustCLI(t, url, "", "env", "create", "--id", "1", "--components", "fuel", "--levels", "nodes")
	mustCLI(t, url, "", "node", "create", "--id", "7", "--fqdn", "node-1.domain.tld", "--env", "1")
	mustCLI(t, url, "", "node", "create", "--id", "8", "--fqdn", "node-2.domain.tld", "--env", "1")
	mustCLI(t, url, "deployment_id: 1\n", "config", "set", "--env", "1", "--resource", "astute", "--format", "yaml")
	mustCLI(t, url, "uid: \"7\"\n", "config", "set", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--format", "yaml")
	mustCLI(t, url, "uid: \"8\"\n", "config", "set", "--env", "1", "--level", "nodes=node-2.domain.tld", "--resource", "astute", "--format", "yaml")
	// Another environment: node-1 is registered in environment 1 only.
	mustCLI(t, url, "", "env", "create", "--id", "2", "--components", "fuel", "--levels", "nodes")
	t.Setenv("TUNINGBOX_USER", "")
	t.Setenv("TUNINGBOX_PASSWORD", "")

	get := func(h clientcerttest.Host, node string) (string, error) {
		return cli(t, url, "", "--client-cert", h.CertPEM, "--client-key", h.KeyPEM,
			"config", "get", "--env", "1", "--level", "nodes="+node, "--resource", "astute")
	}
	wantDoc := func(h clientcerttest.Host, node, want string) {
		t.Helper()
		out, err := get(h, node)
		if err != nil {
			t.Fatalf("%s reading %s: %v\n%s", h.Certname, node, err, out)
		}
		assertJSON(t, out, want)
	}
	wantStatus := func(err error, status int, what string) {
		t.Helper()
		if !isStatus(err, status) {
			t.Errorf("%s: got %v, want HTTP %d", what, err, status)
		}
	}
	// Refused in the handshake: the CLI gets no HTTP answer at all, and a bare
	// TLS connection gets the server's alert.
	wantTLSRefusal := func(h clientcerttest.Host, alert, what string) {
		t.Helper()
		var apiErr *client.Error
		if _, err := get(h, "node-1.domain.tld"); err == nil || errors.As(err, &apiErr) {
			t.Errorf("%s: the CLI got %v, want no HTTP answer", what, err)
		}
		if err := handshakeAlert(t, addr, ca.CertPEM, h); err == nil || !strings.Contains(err.Error(), alert) {
			t.Errorf("%s: TLS connection got %v, want the alert %q", what, err, alert)
		}
	}

	// A node's certificate: its own effective document, by FQDN and id; 403 on another node's; no writes.
	wantDoc(node1, "node-1.domain.tld", `{"deployment_id": 1, "uid": "7"}`)
	wantDoc(node1, "7", `{"deployment_id": 1, "uid": "7"}`)
	_, err = get(node1, "node-2.domain.tld")
	wantStatus(err, http.StatusForbidden, "node-1's certificate on node-2")
	_, err = get(node2, "node-1.domain.tld")
	wantStatus(err, http.StatusForbidden, "node-2's certificate on node-1")
	_, err = cli(t, url, "", "--client-cert", node1.CertPEM, "--client-key", node1.KeyPEM,
		"config", "get", "--env", "2", "--level", "nodes=node-1.domain.tld", "--resource", "astute")
	wantStatus(err, http.StatusForbidden, "node-1's certificate in another environment")
	_, err = cli(t, url, "uid: \"9\"\n", "--client-cert", node1.CertPEM, "--client-key", node1.KeyPEM,
		"config", "set", "--env", "1", "--level", "nodes=node-1.domain.tld", "--resource", "astute", "--format", "yaml")
	wantStatus(err, http.StatusForbidden, "node-1's certificate writing")

	// The Puppet server's certname (configured in another case) reads every node, and writes nothing.
	wantDoc(puppetServer, "node-1.domain.tld", `{"deployment_id": 1, "uid": "7"}`)
	wantDoc(puppetServer, "node-2.domain.tld", `{"deployment_id": 1, "uid": "8"}`)
	_, err = cli(t, url, "deployment_id: 2\n", "--client-cert", puppetServer.CertPEM, "--client-key", puppetServer.KeyPEM,
		"config", "set", "--env", "1", "--resource", "astute", "--format", "yaml")
	wantStatus(err, http.StatusForbidden, "the server certificate writing")

	// A certname of the CA that names no registered node: authenticated by TLS, no identity here.
	_, err = get(stranger, "node-1.domain.tld")
	wantStatus(err, http.StatusUnauthorized, "unregistered certname")

	// Another CA's certificate with a node's certname never gets past the handshake.
	wantTLSRefusal(foreign, "tls: unknown certificate authority", "certificate of an unknown CA")

	// Revocation: the CRL file is re-read when the CA rewrites it.
	wantDoc(node1Revoked, "node-1.domain.tld", `{"deployment_id": 1, "uid": "7"}`)
	ca.Revoke(node1Revoked)
	wantTLSRefusal(node1Revoked, "tls: bad certificate", "revoked certificate")
	wantDoc(node1, "node-1.domain.tld", `{"deployment_id": 1, "uid": "7"}`)

	// The CLI refuses half a key pair.
	if _, err := cli(t, url, "", "--client-cert", node1.CertPEM, "node", "list"); !errors.As(err, new(*usageError)) {
		t.Errorf("--client-cert without --client-key: %v", err)
	}
}

// handshakeAlert connects with h's certificate, completes the client side of
// the handshake and returns the error of the first read: the server's alert
// when it refused the certificate.
func handshakeAlert(t *testing.T, addr, caFile string, h clientcerttest.Host) error {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(h.CertPEM, h.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(caPEM)
	conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12,
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &pair, nil }})
	if err != nil {
		return err
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write([]byte("GET /api/v1/config/ HTTP/1.1\r\nHost: x\r\n\r\n")); err != nil {
		return err
	}
	_, err = conn.Read(make([]byte, 1))
	return err
}
