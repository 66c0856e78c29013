package clientcert_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tuningbox/tuningbox/shared/auth/clientcert"
	"github.com/tuningbox/tuningbox/shared/auth/clientcert/clientcerttest"
)

// TestNewRefusesBadFiles: the server does not start on a CA file without a
// certificate, or on a CRL that the CA did not sign or that is unreadable.
func TestNewRefusesBadFiles(t *testing.T) {
	ca := clientcerttest.New(t, "puppet.example.com")
	other := clientcerttest.New(t, "other.example.com")
	if _, err := clientcert.New(ca.CertPEM, ca.CRLPEM); err != nil {
		t.Fatalf("good CA and CRL: %v", err)
	}
	if _, err := clientcert.New(ca.CertPEM, ""); err != nil {
		t.Fatalf("CA without CRL: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not pem\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, files := range map[string][2]string{
		"CA file without a certificate": {empty, ""},
		"CRL of another CA":             {ca.CertPEM, other.CRLPEM},
		"CRL file without a CRL":        {ca.CertPEM, ca.CertPEM},
		"missing CRL":                   {ca.CertPEM, filepath.Join(t.TempDir(), "crl.pem")},
	} {
		if _, err := clientcert.New(files[0], files[1]); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	_, err := clientcert.New(ca.CertPEM, other.CRLPEM)
	if err == nil || !strings.Contains(err.Error(), "not signed by the client CA") {
		t.Errorf("CRL of another CA: %v", err)
	}
}
