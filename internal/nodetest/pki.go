package nodetest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a CA, a server certificate for 127.0.0.1 and a client
// certificate, written as PEM files.
type PKI struct {
	pool       *x509.CertPool
	clientCert tls.Certificate
	// CertFile and KeyFile are the server's certificate (for 127.0.0.1)
	// and key; CAFile the CA that signed it and the client certificate;
	// OtherCAFile a CA that signed neither.
	CertFile, KeyFile, CAFile, OtherCAFile string
}

// NewPKI writes a fresh PKI into a temporary directory of t.
func NewPKI(t testing.TB) *PKI {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	serial := int64(0)
	issue := func(tmpl, parent *x509.Certificate, pub, signer any) (*x509.Certificate, []byte) {
		serial++
		tmpl.SerialNumber = big.NewInt(serial)
		tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
		if parent == nil {
			parent = tmpl
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, pub, signer)
		if err != nil {
			t.Fatal(err)
		}
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return c, der
	}
	newCA := func(name string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := key()
		c, der := issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign}, nil, &k.PublicKey, k)
		return c, k, der
	}
	ca, caKey, caDER := newCA("hangar test CA")
	_, _, otherDER := newCA("another CA")
	p := &PKI{pool: x509.NewCertPool(), CAFile: write("ca.pem", "CERTIFICATE", caDER), OtherCAFile: write("other.pem", "CERTIFICATE", otherDER)}
	p.pool.AddCert(ca)
	leaf := func(name string, usage x509.ExtKeyUsage, ips ...net.IP) (tls.Certificate, []byte, []byte) {
		k := key()
		_, der := issue(&x509.Certificate{Subject: pkix.Name{CommonName: name}, IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}, ca, &k.PublicKey, caKey)
		kder, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}, der, kder
	}
	var der, kder []byte
	_, der, kder = leaf("hangar", x509.ExtKeyUsageServerAuth, net.ParseIP("127.0.0.1"))
	p.CertFile, p.KeyFile = write("server.pem", "CERTIFICATE", der), write("server.key", "EC PRIVATE KEY", kder)
	p.clientCert, _, _ = leaf("game-backend", x509.ExtKeyUsageClientAuth)
	return p
}

// ClientTLS trusts the CA, and with withCert presents the client
// certificate.
func (p *PKI) ClientTLS(withCert bool) *tls.Config {
	c := &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
	if withCert {
		c.Certificates = []tls.Certificate{p.clientCert}
	}
	return c
}
