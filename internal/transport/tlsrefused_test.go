package transport

import (
	"crypto/tls"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// remoteAlert is the error crypto/tls returns for an alert the peer sent,
// with the exported type of the same number.
func remoteAlert(n uint8) error {
	return &net.OpError{Op: "remote error", Err: tls.AlertError(n)}
}

func TestCertRefused(t *testing.T) {
	for _, n := range []uint8{42, 43, 44, 45, 46, 48, 49, 116} {
		assert.True(t, certRefused(remoteAlert(n)), "alert %d", n)
	}
	assert.False(t, certRefused(remoteAlert(40)), "handshake failure")
	assert.False(t, certRefused(&net.OpError{Op: "local error", Err: tls.AlertError(42)}))
	assert.False(t, certRefused(errors.New("tls: certificate required")))
	assert.False(t, certRefused(nil))
}

// TestExplainTLS: a refused certificate read by any step is a permanent
// failure of the TLS step, whose text says whether a certificate was
// configured; NOAUTH with a certificate and no password points at the
// certificate; the rest is left alone.
func TestExplainTLS(t *testing.T) {
	withCert := &Config{TLS: &tls.Config{Certificates: []tls.Certificate{{}}}}
	none := &Config{TLS: &tls.Config{}}

	err := explainTLS(none, nil, &HandshakeError{Step: "HELLO", Err: remoteAlert(116)})
	var he *HandshakeError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "TLS", he.Step)
	assert.True(t, he.Permanent())
	assert.Contains(t, err.Error(), "none is configured")
	var oe *net.OpError
	assert.ErrorAs(t, err, &oe)

	err = explainTLS(withCert, nil, &HandshakeError{Step: "TLS", Err: remoteAlert(48)})
	require.ErrorAs(t, err, &he)
	assert.True(t, he.Permanent())
	assert.Contains(t, err.Error(), "the server refused the client certificate: remote error: tls: unknown certificate authority")

	noauth := NewServerError("NOAUTH HELLO must be called with the client already authenticated")
	err = explainTLS(withCert, nil, &HandshakeError{Step: "HELLO", Err: noauth})
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "HELLO", he.Step)
	assert.True(t, he.Permanent())
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "NOAUTH", se.Prefix)
	assert.Contains(t, err.Error(), "tls-auth-clients-user")

	// Not for a password that is given, nor without a certificate, nor
	// without TLS.
	pw := &Config{TLS: withCert.TLS, Password: "pw"}
	for _, cfg := range []*Config{pw, none, {}} {
		in := &HandshakeError{Step: "HELLO", Err: noauth}
		assert.Same(t, in, explainTLS(cfg, nil, in))
	}
	in := &HandshakeError{Step: "HELLO", Err: remoteAlert(116)}
	assert.Same(t, in, explainTLS(&Config{}, nil, in))
}
