package integration

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// mtlsServer starts a server of flavor f that requires a client certificate
// signed by the test CA and takes the ACL user from its common name; the
// default user has a password, so that a certificate naming no user
// authenticates nobody, and alice and bob exist.
func mtlsServer(t *testing.T, f harness.Flavor) *harness.Server {
	return startFlavor(t, f, harness.Config{
		TLS: true, ClientAuth: true, Password: "default-pw",
		Args: []string{"tls-auth-clients-user CN"},
		Users: []harness.User{
			{Name: "alice", Password: "alice-pw", Rules: "~* &* +@all"},
			{Name: "bob", Password: "bob-pw", Rules: "~* &* +@all"},
		},
	})
}

// clientTLS returns srv's client configuration with cert as the client
// certificate, or none.
func clientTLS(t *testing.T, srv *harness.Server, certPEM, keyPEM []byte) *tls.Config {
	t.Helper()
	c := srv.TLSConfig.Clone()
	c.Certificates = nil
	if certPEM != nil {
		cert, err := tls.X509KeyPair(certPEM, keyPEM)
		require.NoError(t, err)
		c.Certificates = []tls.Certificate{cert}
	}
	return c
}

// writeCert stores a client certificate for cn and its key in dir, each
// file renamed over the last, as a rotation tool does.
func writeCert(t *testing.T, dir, cn string) (certFile, keyFile string) {
	t.Helper()
	certPEM, keyPEM, err := harness.ClientCert(cn)
	require.NoError(t, err)
	certFile, keyFile = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	for path, data := range map[string][]byte{certFile: certPEM, keyFile: keyPEM} {
		require.NoError(t, os.WriteFile(path+".tmp", data, 0o600))
		require.NoError(t, os.Rename(path+".tmp", path))
	}
	return certFile, keyFile
}

// connectErr connects with opts and returns the error, in a bounded time:
// a refused certificate must not keep the caller waiting for a reconnect.
func connectErr(t *testing.T, opts respire.Options) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, opts)
	if err == nil {
		c.Close()
	}
	require.NoError(t, ctx.Err(), "Connect waited for its context: the error was not permanent")
	return err
}

// TestMutualTLS: on Redis 8.6 and Valkey 9.1 with tls-auth-clients yes and
// tls-auth-clients-user CN, a client without a certificate or with one the
// server does not trust fails at once with a permanent TLS error that says
// so; one with a trusted certificate is the ACL user its common name
// names, with no password given; a certificate naming no user fails with
// NOAUTH and a hint.
func TestMutualTLS(t *testing.T) {
	for _, f := range []harness.Flavor{harness.Redis86, harness.Valkey91} {
		t.Run(string(f), func(t *testing.T) {
			srv := mtlsServer(t, f)
			ctx := ctxT(t)

			err := connectErr(t, respire.Options{Addr: srv.Addr, TLSConfig: clientTLS(t, srv, nil, nil)})
			checkPermanent(t, err, "")
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, "TLS", he.Step)
			assert.Contains(t, err.Error(), "requires a client certificate and none is configured")
			assert.Contains(t, err.Error(), "certificate required")

			untrustedCert, untrustedKey, err := harness.UntrustedClientCert("alice")
			require.NoError(t, err)
			err = connectErr(t, respire.Options{Addr: srv.Addr, TLSConfig: clientTLS(t, srv, untrustedCert, untrustedKey)})
			checkPermanent(t, err, "")
			require.ErrorAs(t, err, &he)
			assert.Equal(t, "TLS", he.Step)
			assert.Contains(t, err.Error(), "the server refused the client certificate")

			aliceCert, aliceKey, err := harness.ClientCert("alice")
			require.NoError(t, err)
			c := connect(t, respire.Options{Addr: srv.Addr, TLSConfig: clientTLS(t, srv, aliceCert, aliceKey)})
			who, err := c.ACLWhoAmI(ctx)
			require.NoError(t, err)
			assert.Equal(t, "alice", who)
			require.NoError(t, c.Set(ctx, "mtls", "v", nil))
			// The blocking pool's connections present it too.
			got, err := c.BLPop(ctx, 50*time.Millisecond, "mtls:empty")
			require.ErrorIs(t, err, respire.Nil, "%v", got)

			// The server falls back to the default user for a common name
			// that names no user: with a password on it, nothing is
			// authenticated and the handshake fails.
			nobodyCert, nobodyKey, err := harness.ClientCert("mallory")
			require.NoError(t, err)
			err = connectErr(t, respire.Options{Addr: srv.Addr, TLSConfig: clientTLS(t, srv, nobodyCert, nobodyKey)})
			checkPermanent(t, err, "NOAUTH")
			assert.Contains(t, err.Error(), "client certificate")
			assert.Contains(t, err.Error(), "tls-auth-clients-user")
		})
	}
}

// TestMutualTLSRotation: a client certificate rotated on disk (another
// common name, so another ACL user) is presented by the client's next new
// connections, without a restart: a connection lent by WithConn at once,
// the multiplexed connection once the server has closed it; connections
// opened before keep the identity they were opened with.
func TestMutualTLSRotation(t *testing.T) {
	srv := mtlsServer(t, harness.Redis86)
	ctx := ctxT(t)
	dir := t.TempDir()
	certFile, keyFile := writeCert(t, dir, "alice")
	getCert, err := respire.ClientCertFromFiles(certFile, keyFile)
	require.NoError(t, err)
	tc := clientTLS(t, srv, nil, nil)
	tc.GetClientCertificate = getCert
	c := connect(t, respire.Options{Addr: srv.Addr, TLSConfig: tc})
	who, err := c.ACLWhoAmI(ctx)
	require.NoError(t, err)
	require.Equal(t, "alice", who)

	writeCert(t, dir, "bob")

	// The multiplexed connection is still alice's; a new one is bob's.
	who, err = c.ACLWhoAmI(ctx)
	require.NoError(t, err)
	assert.Equal(t, "alice", who)
	require.NoError(t, c.WithConn(ctx, func(conn *respire.Conn) error {
		r, err := conn.Do(ctx, "ACL", "WHOAMI")
		if err == nil {
			who, err = r.Text()
		}
		return err
	}))
	assert.Equal(t, "bob", who)

	// The server closes alice's connections; every call that succeeds
	// afterwards ran on a connection opened since, as bob.
	n, err := srv.Do(ctx, "CLIENT", "KILL", "USER", "alice")
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(1))
	for {
		who, err = c.ACLWhoAmI(ctx)
		if err == nil {
			break
		}
		require.NoError(t, ctx.Err(), "no connection after CLIENT KILL: %v", err)
	}
	assert.Equal(t, "bob", who)
}
