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

// testCA is a throwaway certificate authority.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  []byte
}

// newCA generates a CA with an ECDSA P-256 key, valid for two days.
func newCA(name string) (*testCA, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(48 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &testCA{cert: cert, key: key, pem: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}, nil
}

// issue signs a certificate for a new ECDSA P-256 key, with tmpl's subject,
// names and usages, valid for two days, and returns both PEM encoded.
func (ca *testCA) issue(tmpl *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 63))
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore, tmpl.NotAfter = now.Add(-time.Hour), now.Add(48*time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), nil
}

// issueClient signs a client certificate whose subject's common name is cn.
func (ca *testCA) issueClient(cn string) (certPEM, keyPEM []byte, err error) {
	return ca.issue(&x509.Certificate{
		Subject:     pkix.Name{CommonName: cn},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	})
}

// testPKI is the CA every TLS server trusts, one server certificate it
// signed, valid for 127.0.0.1, ::1 and "localhost", and the client
// certificate the harness presents to servers that require one.
type testPKI struct {
	ca              *testCA
	certPEM, keyPEM []byte
	client          tls.Certificate
	pool            *x509.CertPool
}

// pki is generated once per test binary: every TLS server shares it.
var pki = sync.OnceValues(newTestPKI)

// newTestPKI generates the CA and the certificates it signs.
func newTestPKI() (*testPKI, error) {
	ca, err := newCA("respire test CA")
	if err != nil {
		return nil, err
	}
	certPEM, keyPEM, err := ca.issue(&x509.Certificate{
		Subject: pkix.Name{CommonName: "localhost"},
		// Client auth too: a server presents the same certificate when it
		// connects to a primary or to cluster peers.
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	})
	if err != nil {
		return nil, err
	}
	// "default": where the server takes the user from the certificate
	// (tls-auth-clients-user CN), the harness is the default user, as on
	// any other server.
	ccPEM, ckPEM, err := ca.issueClient("default")
	if err != nil {
		return nil, err
	}
	client, err := tls.X509KeyPair(ccPEM, ckPEM)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.cert)
	return &testPKI{ca: ca, certPEM: certPEM, keyPEM: keyPEM, client: client, pool: pool}, nil
}

// ClientCert returns a client certificate whose subject's common name is
// cn, signed by the CA that the test servers trust, and its private key,
// both PEM encoded. A server started with Config.ClientAuth accepts it; one
// that also takes the user from the certificate (the directive
// "tls-auth-clients-user CN" in Config.Args) authenticates it as the ACL
// user cn.
func ClientCert(cn string) (certPEM, keyPEM []byte, err error) {
	p, err := pki()
	if err != nil {
		return nil, nil, err
	}
	return p.ca.issueClient(cn)
}

// UntrustedClientCert returns a client certificate and its key, PEM
// encoded, as ClientCert does, but signed by a CA of its own that no test
// server trusts.
func UntrustedClientCert(cn string) (certPEM, keyPEM []byte, err error) {
	ca, err := newCA("untrusted test CA")
	if err != nil {
		return nil, nil, err
	}
	return ca.issueClient(cn)
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
	for path, data := range map[string][]byte{f.ca: p.ca.pem, f.cert: p.certPEM, f.key: p.keyPEM} {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return tlsFiles{}, err
		}
	}
	return f, nil
}

// clientConfig returns a client configuration that trusts only the test CA
// and expects the server name "localhost"; with withCert it presents the
// harness's client certificate (common name "default").
func (p *testPKI) clientConfig(withCert bool) *tls.Config {
	c := &tls.Config{
		RootCAs:    p.pool,
		ServerName: "localhost",
		MinVersion: tls.VersionTLS12,
	}
	if withCert {
		c.Certificates = []tls.Certificate{p.client}
	}
	return c
}
