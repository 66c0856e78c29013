package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tuningbox/tuningbox/client"
	"github.com/tuningbox/tuningbox/shared/app"
)

// writeSelfSignedCert writes a fresh self-signed certificate for 127.0.0.1 and its key.
func writeSelfSignedCert(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "tuningbox test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// freeLoopbackAddr picks a free port on 127.0.0.1.
func freeLoopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// runCLI runs one command in-process with stdin and returns stdout and stderr.
func runCLI(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errOut bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errOut.String(), err
}

// TestUsersAndTokensOverTLS bootstraps the first admin offline, serves HTTPS
// with a self-signed certificate that the CLI trusts through --cacert, and
// manages users and tokens with the CLI.
func TestUsersAndTokensOverTLS(t *testing.T) {
	for _, name := range []string{"TUNINGBOX_URL", "TUNINGBOX_USER", "TUNINGBOX_PASSWORD", "TUNINGBOX_TOKEN", "TUNINGBOX_CACERT", "TUNINGBOX_API_VERSION", "TUNINGBOX_NEW_PASSWORD"} {
		t.Setenv(name, "")
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	certFile, keyFile := writeSelfSignedCert(t, dir)

	// The first administrator, written straight into the store: no server, no credentials.
	out, _, err := runCLI(t, "first-admin-pw\n", "user", "create", "root", "--role", "admin", "--password-stdin", "--data", dataDir)
	if err != nil || !strings.Contains(out, "root") {
		t.Fatalf("offline user create: %v\n%s", err, out)
	}

	cfg, err := app.LoadConfig(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = dataDir
	addr := freeLoopbackAddr(t)
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- serve(ctx, cfg, addr, certFile, keyFile, newServerTLSConfig(), 5*time.Second) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	base := "https://" + addr
	waitForTLS(t, base, certFile)

	// A client that does not trust the certificate gets nowhere.
	if _, _, err := runCLI(t, "", "--url", base, "user", "list"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("without --cacert: %v", err)
	}
	overTLS := []string{"--url", base, "--cacert", certFile}
	t.Setenv("TUNINGBOX_USER", "root")
	t.Setenv("TUNINGBOX_PASSWORD", "wrong")
	if _, _, err := runCLI(t, "", append(overTLS, "user", "list")...); !isStatus(err, http.StatusUnauthorized) {
		t.Fatalf("wrong password: %v", err)
	}
	t.Setenv("TUNINGBOX_PASSWORD", "first-admin-pw")
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "watch-password")
	if _, _, err := runCLI(t, "", append(overTLS, "user", "create", "watcher", "--role", "observer")...); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TUNINGBOX_NEW_PASSWORD", "")
	if _, _, err := runCLI(t, "node-password\n", append(overTLS, "user", "create", "node-7", "--role", "node", "--node", "7", "--password-stdin")...); err != nil {
		t.Fatal(err)
	}
	out, _, err = runCLI(t, "", append(overTLS, "user", "list")...)
	if err != nil || !strings.Contains(out, "watcher") || !strings.Contains(out, "observer") || !strings.Contains(out, "node-7") {
		t.Fatalf("user list: %v\n%s", err, out)
	}

	secret, info, err := runCLI(t, "", append(overTLS, "token", "create", "--user", "watcher", "--description", "dashboards")...)
	secret = strings.TrimSpace(secret)
	if err != nil || !strings.HasPrefix(secret, "tbx_") || !strings.Contains(info, "watcher") {
		t.Fatalf("token create: %v\n%s\n%s", err, secret, info)
	}
	tokenID := strings.Fields(info)[1]
	out, _, err = runCLI(t, "", append(overTLS, "token", "list", "--format", "json")...)
	if err != nil || !strings.Contains(out, tokenID) || strings.Contains(out, secret) {
		t.Fatalf("token list: %v\n%s", err, out)
	}

	// The observer's token reads but may not manage users.
	t.Setenv("TUNINGBOX_TOKEN", secret)
	if _, _, err := runCLI(t, "", append(overTLS, "user", "list")...); !isStatus(err, http.StatusForbidden) {
		t.Fatalf("observer token on user list: %v", err)
	}
	t.Setenv("TUNINGBOX_TOKEN", "")
	if _, _, err := runCLI(t, "", append(overTLS, "token", "revoke", tokenID)...); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TUNINGBOX_TOKEN", secret)
	if _, _, err := runCLI(t, "", append(overTLS, "user", "list")...); !isStatus(err, http.StatusUnauthorized) {
		t.Fatalf("revoked token: %v", err)
	}
	t.Setenv("TUNINGBOX_TOKEN", "")
	if _, _, err := runCLI(t, "", append(overTLS, "user", "delete", "watcher")...); err != nil {
		t.Fatal(err)
	}
	if _, _, err := runCLI(t, "", append(overTLS, "user", "create", "x", "--role", "admin")...); !errors.As(err, new(*usageError)) {
		t.Fatalf("user create without a password: %v", err)
	}
}

func isStatus(err error, status int) bool {
	var apiErr *client.Error
	return errors.As(err, &apiErr) && apiErr.Status == status
}

// waitForTLS waits until the server answers the public version document over HTTPS.
func waitForTLS(t *testing.T, base, certFile string) {
	t.Helper()
	pemBytes, err := os.ReadFile(certFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pemBytes)
	client := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := client.Get(base + "/api/v1/config/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("server at %s not ready: %v", base, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
