package respire

import (
	"crypto/tls"
	"fmt"
	"io"
	"os"
	"sync"
)

// ClientCertFromFiles returns a function for tls.Config's
// GetClientCertificate that presents the certificate chain in certFile and
// the private key in keyFile (PEM files, as tls.LoadX509KeyPair reads them),
// and that reads them again when either file changes: a certificate
// rotated on disk is used by the next connection the client opens (a
// reconnect, a new blocking-pool or batch connection) without restarting
// it. Connections already open keep the certificate they were opened with.
//
//	getCert, err := respire.ClientCertFromFiles("/etc/redis/client.crt", "/etc/redis/client.key")
//	if err != nil { ... }
//	opts.TLSConfig = &tls.Config{RootCAs: pool, GetClientCertificate: getCert}
//
// It loads the files at once and returns their error, if any. On each TLS
// handshake it compares the files' identity, size and modification time
// with those it loaded (two stat calls) and reads them again only when one
// differs; replacing a file, or a symbolic link to it (as Kubernetes does
// with mounted secrets), counts as a change. When the new files cannot be
// read or do not hold a matching certificate and key (a rotation half
// done: the new certificate beside the old key), it keeps presenting the
// certificate it loaded last and tries again at the next handshake. The
// function is safe for concurrent use.
//
// TLS session resumption (tls.Config.ClientSessionCache) lets a server
// resume a session without asking for a certificate: a resumed connection
// keeps the identity of the certificate its session began with. Leave
// ClientSessionCache nil (the default) for each connection to present the
// current certificate.
func ClientCertFromFiles(certFile, keyFile string) (func(*tls.CertificateRequestInfo) (*tls.Certificate, error), error) {
	r := &certFiles{certFile: certFile, keyFile: keyFile}
	if err := r.reload(); err != nil {
		return nil, err
	}
	return r.get, nil
}

// maxPEMFile bounds what ClientCertFromFiles reads from one file: a
// certificate chain or a key takes a few kilobytes.
const maxPEMFile = 1 << 20

// certFiles is the state of one ClientCertFromFiles function.
type certFiles struct {
	certFile, keyFile string

	mu   sync.Mutex
	cert *tls.Certificate
	// certStat and keyStat describe the files cert was read from.
	certStat, keyStat os.FileInfo
}

// get is the GetClientCertificate function.
func (r *certFiles) get(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed() {
		// On failure the last good certificate stays; the next handshake
		// tries again.
		_ = r.reload()
	}
	return r.cert, nil
}

// changed reports whether a file differs from the one cert was read from,
// or cannot be looked at.
func (r *certFiles) changed() bool {
	cs, err := os.Stat(r.certFile)
	if err != nil {
		return true
	}
	ks, err := os.Stat(r.keyFile)
	if err != nil {
		return true
	}
	return !sameFile(cs, r.certStat) || !sameFile(ks, r.keyStat)
}

// sameFile reports whether a and b describe the same file, unchanged.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// reload reads both files and, when they hold a matching pair, makes it the
// certificate presented. The files are looked at before they are read, so
// that a change during the read is seen at the next handshake.
func (r *certFiles) reload() error {
	certPEM, cs, err := readPEMFile(r.certFile)
	if err != nil {
		return fmt.Errorf("respire: client certificate: %w", err)
	}
	keyPEM, ks, err := readPEMFile(r.keyFile)
	if err != nil {
		return fmt.Errorf("respire: client certificate key: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("respire: client certificate %s with key %s: %w", r.certFile, r.keyFile, err)
	}
	r.cert, r.certStat, r.keyStat = &cert, cs, ks
	return nil
}

// readPEMFile reads a regular file of at most maxPEMFile bytes and returns
// it with what stat said of it before the read.
func readPEMFile(path string) ([]byte, os.FileInfo, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxPEMFile+1))
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", path, err)
	}
	if len(data) > maxPEMFile {
		return nil, nil, fmt.Errorf("%s is larger than %d bytes: not a PEM certificate or key", path, maxPEMFile)
	}
	return data, fi, nil
}
