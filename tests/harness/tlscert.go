package harness

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
	"sync"
	"time"
)

// testPKI is a throwaway certificate authority and one server certificate it
// signed, valid for 127.0.0.1, ::1 and "localhost".
type testPKI struct {
	caPEM, certPEM, keyPEM []byte
	pool                   *x509.CertPool
}

// pki is generated once per test binary: every TLS server shares it.
var pki = sync.OnceValues(newTestPKI)

// newTestPKI generates a CA and a server certificate with ECDSA P-256 keys.
func newTestPKI() (*testPKI, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "respire test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}

	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(48 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		// Client auth too: a server presents the same certificate when it
		// connects to a primary or to cluster peers.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return &testPKI{
		caPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
		pool:    pool,
	}, nil
}

// tlsFiles are the paths of the PEM files a TLS server is started with.
type tlsFiles struct{ ca, cert, key string }

// write stores the PKI in dir. The key is world-readable on purpose: it is a
// throwaway, and a server in a container may run as another user.
func (p *testPKI) write(dir string) (tlsFiles, error) {
	f := tlsFiles{
		ca:   filepath.Join(dir, "ca.crt"),
		cert: filepath.Join(dir, "server.crt"),
		key:  filepath.Join(dir, "server.key"),
	}
	for path, data := range map[string][]byte{f.ca: p.caPEM, f.cert: p.certPEM, f.key: p.keyPEM} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return tlsFiles{}, err
		}
	}
	return f, nil
}

// clientConfig returns a client configuration that trusts only the test CA
// and expects the server name "localhost".
func (p *testPKI) clientConfig() *tls.Config {
	return &tls.Config{
		RootCAs:    p.pool,
		ServerName: "localhost",
		MinVersion: tls.VersionTLS12,
	}
}
