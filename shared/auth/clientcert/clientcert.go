// Package clientcert lets the local server accept TLS client certificates
// signed by one CA — in practice the Puppet CA, whose certificates every
// Puppet node and server already holds — and refuses revoked ones by the
// CA's certificate revocation list. Both checks happen in the TLS handshake:
// a certificate of another CA, or a revoked one, never reaches a handler.
// What a verified certificate may do is decided by shared/httpapi/authapi
// from its certname (Name).
package clientcert

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"os"
	"strings"
	"sync"
	"time"
)

// Verifier holds the trusted CA and, when given, the CA's revocation list.
// The CRL file is read again whenever it changes (Puppet rewrites it on
// `puppetserver ca revoke`), so a revocation takes effect on the next handshake.
type Verifier struct {
	roots   *x509.CertPool
	cas     []*x509.Certificate
	crlFile string

	mu      sync.Mutex
	crlStat fileStamp
	revoked map[revokedKey]bool
}

// revokedKey names one certificate: its issuer (DER subject) and serial number.
type revokedKey struct {
	issuer string
	serial string
}

type fileStamp struct {
	mod  time.Time
	size int64
}

// New reads the CA certificates (PEM, one or more: Puppet's ca.pem may carry
// an intermediate and its root) and, if crlFile is not empty, the CRLs
// (PEM, one per CA) signed by them.
func New(caFile, crlFile string) (*Verifier, error) {
	raw, err := os.ReadFile(caFile)
	if err != nil {
		return nil, err
	}
	v := &Verifier{roots: x509.NewCertPool(), crlFile: crlFile}
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "CERTIFICATE" {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", caFile, err)
		}
		v.roots.AddCert(cert)
		v.cas = append(v.cas, cert)
	}
	if len(v.cas) == 0 {
		return nil, fmt.Errorf("%s holds no PEM certificate", caFile)
	}
	if crlFile != "" {
		v.mu.Lock()
		err := v.reloadCRL()
		v.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}

// Configure makes cfg ask for a client certificate and verify one that is
// given against the CA and the CRL. Clients without a certificate are let
// through to the other authentication methods (Basic, tokens, Keystone).
func (v *Verifier) Configure(cfg *tls.Config) {
	cfg.ClientCAs = v.roots
	cfg.ClientAuth = tls.VerifyClientCertIfGiven
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.VerifiedChains) == 0 {
			return nil
		}
		return v.checkRevoked(cs.VerifiedChains)
	}
}

// checkRevoked fails when any certificate below the root of every verified chain is revoked.
func (v *Verifier) checkRevoked(chains [][]*x509.Certificate) error {
	if v.crlFile == "" {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// Fail closed: an unreadable or unverifiable CRL refuses every certificate
	// rather than letting revoked ones in.
	if err := v.reloadCRL(); err != nil {
		return err
	}
	for _, chain := range chains {
		for _, cert := range chain[:max(len(chain)-1, 1)] {
			if v.revoked[keyOf(cert.RawIssuer, cert.SerialNumber)] {
				return fmt.Errorf("client certificate %q (serial %s) is revoked", Name(cert), cert.SerialNumber)
			}
		}
	}
	return nil
}

// reloadCRL reads the CRL file when it changed since the last read. v.mu is held.
func (v *Verifier) reloadCRL() error {
	info, err := os.Stat(v.crlFile)
	if err != nil {
		return fmt.Errorf("CRL: %w", err)
	}
	stamp := fileStamp{mod: info.ModTime(), size: info.Size()}
	if v.revoked != nil && stamp == v.crlStat {
		return nil
	}
	raw, err := os.ReadFile(v.crlFile)
	if err != nil {
		return fmt.Errorf("CRL: %w", err)
	}
	revoked, err := v.parseCRLs(raw)
	if err != nil {
		return fmt.Errorf("CRL %s: %w", v.crlFile, err)
	}
	v.revoked, v.crlStat = revoked, stamp
	return nil
}

// parseCRLs reads every PEM CRL of raw; each must be signed by one of the CAs.
func (v *Verifier) parseCRLs(raw []byte) (map[revokedKey]bool, error) {
	revoked := map[revokedKey]bool{}
	n := 0
	for block, rest := pem.Decode(raw); block != nil; block, rest = pem.Decode(rest) {
		if block.Type != "X509 CRL" {
			continue
		}
		crl, err := x509.ParseRevocationList(block.Bytes)
		if err != nil {
			return nil, err
		}
		issuer, err := v.issuerOf(crl)
		if err != nil {
			return nil, err
		}
		for _, e := range crl.RevokedCertificateEntries {
			revoked[keyOf(issuer.RawSubject, e.SerialNumber)] = true
		}
		n++
	}
	if n == 0 {
		return nil, errors.New("no PEM CRL in the file")
	}
	return revoked, nil
}

func (v *Verifier) issuerOf(crl *x509.RevocationList) (*x509.Certificate, error) {
	for _, ca := range v.cas {
		if bytes.Equal(ca.RawSubject, crl.RawIssuer) && crl.CheckSignatureFrom(ca) == nil {
			return ca, nil
		}
	}
	return nil, fmt.Errorf("a CRL of %q is not signed by the client CA", crl.Issuer)
}

func keyOf(issuer []byte, serial *big.Int) revokedKey {
	return revokedKey{issuer: string(issuer), serial: serial.String()}
}

// Name is a certificate's certname: its subject's common name, in lower case
// as Puppet keeps certnames.
func Name(cert *x509.Certificate) string {
	return strings.ToLower(cert.Subject.CommonName)
}

// ParsePEM reads the first certificate of a PEM text (the form API Gateway
// passes a verified client certificate to the authorizer in).
func ParsePEM(text string) (*x509.Certificate, error) {
	block, _ := pem.Decode([]byte(text))
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, errors.New("no PEM certificate")
	}
	return x509.ParseCertificate(block.Bytes)
}
