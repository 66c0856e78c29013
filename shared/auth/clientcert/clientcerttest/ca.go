// Package clientcerttest makes a certificate authority shaped like Puppet's
// (a self-signed "Puppet CA: <server>" root, host certificates whose CN is the
// certname with serverAuth and clientAuth usage, a CRL signed by the CA) in a
// temporary directory, for tests of client-certificate authentication.
package clientcerttest

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// CA is a test certificate authority writing its files under Dir.
type CA struct {
	t       testing.TB
	Dir     string
	CertPEM string // file of the CA certificate (Puppet's ca.pem)
	CRLPEM  string // file of the CA's CRL (Puppet's crl.pem), written by New and Revoke
	cert    *x509.Certificate
	key     crypto.Signer
	serial  int64
	revoked []x509.RevocationListEntry
	crlNum  int64
}

// Host is an issued host certificate.
type Host struct {
	Certname string
	CertPEM  string // certificate file
	KeyPEM   string // private key file
	Serial   *big.Int
}

// New makes a CA named "Puppet CA: <server>" and an empty CRL under a temporary directory.
func New(t testing.TB, server string) *CA {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "Puppet CA: " + server},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ca := &CA{t: t, Dir: dir, CertPEM: filepath.Join(dir, "ca.pem"), CRLPEM: filepath.Join(dir, "crl.pem"), cert: cert, key: key, serial: 1}
	writePEM(t, ca.CertPEM, "CERTIFICATE", der)
	ca.writeCRL()
	return ca
}

// Issue signs a host certificate for certname (CN and DNS name, or IP address
// for a certname that is one), as `puppet ssl` and the CA would.
func (ca *CA) Issue(certname string) Host {
	ca.t.Helper()
	key := newKey(ca.t)
	ca.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(ca.serial),
		Subject:      pkix.Name{CommonName: certname},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	if ip := net.ParseIP(certname); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{certname}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, key.Public(), ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		ca.t.Fatal(err)
	}
	base := filepath.Join(ca.Dir, fmt.Sprintf("%s-%d", certname, ca.serial)) // a certname may be issued twice
	h := Host{Certname: certname, CertPEM: base + ".pem", KeyPEM: base + ".key.pem", Serial: tmpl.SerialNumber}
	writePEM(ca.t, h.CertPEM, "CERTIFICATE", der)
	writePEM(ca.t, h.KeyPEM, "PRIVATE KEY", keyDER)
	return h
}

// Revoke adds h to the CRL and rewrites the CRL file.
func (ca *CA) Revoke(h Host) {
	ca.t.Helper()
	ca.revoked = append(ca.revoked, x509.RevocationListEntry{SerialNumber: h.Serial, RevocationTime: time.Now()})
	ca.writeCRL()
}

func (ca *CA) writeCRL() {
	ca.t.Helper()
	ca.crlNum++
	der, err := x509.CreateRevocationList(rand.Reader, &x509.RevocationList{
		Number:                    big.NewInt(ca.crlNum),
		ThisUpdate:                time.Now().Add(-time.Minute),
		NextUpdate:                time.Now().Add(24 * time.Hour),
		RevokedCertificateEntries: ca.revoked,
	}, ca.cert, ca.key)
	if err != nil {
		ca.t.Fatal(err)
	}
	// Written to a new file and renamed, as Puppet replaces its CRL.
	tmp := ca.CRLPEM + ".tmp"
	writePEM(ca.t, tmp, "X509 CRL", der)
	if err := os.Rename(tmp, ca.CRLPEM); err != nil {
		ca.t.Fatal(err)
	}
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func writePEM(t testing.TB, file, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(file, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
