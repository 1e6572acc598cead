package respire

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io/fs"
	"math/big"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// selfSigned returns a PEM certificate with common name cn and its key.
func selfSigned(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	require.NoError(t, err)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})
}

// replaceFile writes data to path by renaming a new file over it, as
// rotation tools do.
func replaceFile(t *testing.T, path string, data []byte) {
	t.Helper()
	tmp := path + ".new"
	require.NoError(t, os.WriteFile(tmp, data, 0o600))
	require.NoError(t, os.Rename(tmp, path))
}

// presented returns the common name of the certificate get presents.
func presented(t *testing.T, get func(*tls.CertificateRequestInfo) (*tls.Certificate, error)) string {
	t.Helper()
	c, err := get(&tls.CertificateRequestInfo{})
	require.NoError(t, err)
	require.NotNil(t, c)
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	require.NoError(t, err)
	return leaf.Subject.CommonName
}

func TestClientCertFromFilesRotation(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	c1, k1 := selfSigned(t, "alice")
	replaceFile(t, certFile, c1)
	replaceFile(t, keyFile, k1)
	get, err := ClientCertFromFiles(certFile, keyFile)
	require.NoError(t, err)
	require.Equal(t, "alice", presented(t, get))

	// Half a rotation: the new certificate beside the old key. The last
	// good pair stays until the key follows.
	c2, k2 := selfSigned(t, "bob")
	replaceFile(t, certFile, c2)
	assert.Equal(t, "alice", presented(t, get))
	replaceFile(t, keyFile, k2)
	assert.Equal(t, "bob", presented(t, get))

	// Files removed: the last good pair stays too.
	require.NoError(t, os.Remove(certFile))
	assert.Equal(t, "bob", presented(t, get))

	// Rewritten in place (same inode), with another size.
	c3, k3 := selfSigned(t, "carol-with-a-longer-name")
	require.NoError(t, os.WriteFile(certFile, c3, 0o600))
	require.NoError(t, os.WriteFile(keyFile, k3, 0o600))
	assert.Equal(t, "carol-with-a-longer-name", presented(t, get))
}

// TestClientCertFromFilesSymlink: a symbolic link moved to new files, as
// Kubernetes swaps a mounted secret, is a change.
func TestClientCertFromFilesSymlink(t *testing.T) {
	dir := t.TempDir()
	for _, cn := range []string{"v1", "v2"} {
		c, k := selfSigned(t, cn)
		sub := filepath.Join(dir, cn)
		require.NoError(t, os.Mkdir(sub, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "tls.crt"), c, 0o600))
		require.NoError(t, os.WriteFile(filepath.Join(sub, "tls.key"), k, 0o600))
	}
	link := filepath.Join(dir, "current")
	require.NoError(t, os.Symlink("v1", link))
	get, err := ClientCertFromFiles(filepath.Join(link, "tls.crt"), filepath.Join(link, "tls.key"))
	require.NoError(t, err)
	require.Equal(t, "v1", presented(t, get))

	require.NoError(t, os.Symlink("v2", link+".new"))
	require.NoError(t, os.Rename(link+".new", link))
	assert.Equal(t, "v2", presented(t, get))
}

func TestClientCertFromFilesErrors(t *testing.T) {
	dir := t.TempDir()
	c, k := selfSigned(t, "alice")
	certFile, keyFile := filepath.Join(dir, "c.pem"), filepath.Join(dir, "k.pem")
	require.NoError(t, os.WriteFile(certFile, c, 0o600))
	require.NoError(t, os.WriteFile(keyFile, k, 0o600))

	_, err := ClientCertFromFiles(filepath.Join(dir, "missing.pem"), keyFile)
	require.ErrorIs(t, err, fs.ErrNotExist)
	assert.Contains(t, err.Error(), "missing.pem")

	_, err = ClientCertFromFiles(certFile, dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "not a regular file")

	big := filepath.Join(dir, "big.pem")
	require.NoError(t, os.WriteFile(big, make([]byte, maxPEMFile+1), 0o600))
	_, err = ClientCertFromFiles(big, keyFile)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "larger than")

	_, other := selfSigned(t, "bob")
	otherKey := filepath.Join(dir, "other.pem")
	require.NoError(t, os.WriteFile(otherKey, other, 0o600))
	_, err = ClientCertFromFiles(certFile, otherKey)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "c.pem")
	assert.Contains(t, err.Error(), "other.pem")
}

// TestClientCertFromFilesConcurrent: handshakes call the function from
// many goroutines while the files change (run with -race).
func TestClientCertFromFilesConcurrent(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	pairs := make([][2][]byte, 4)
	for i := range pairs {
		pairs[i][0], pairs[i][1] = selfSigned(t, "cn")
	}
	replaceFile(t, certFile, pairs[0][0])
	replaceFile(t, keyFile, pairs[0][1])
	get, err := ClientCertFromFiles(certFile, keyFile)
	require.NoError(t, err)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				c, err := get(nil)
				if err != nil || c == nil || c.PrivateKey == nil {
					t.Errorf("got %v, %v", c, err)
					return
				}
			}
		}()
	}
	for i := range 40 {
		p := pairs[i%len(pairs)]
		replaceFile(t, certFile, p[0])
		replaceFile(t, keyFile, p[1])
	}
	close(stop)
	wg.Wait()
}
