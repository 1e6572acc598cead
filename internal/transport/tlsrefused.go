package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"time"
)

// certAlerts are the TLS alerts by which a server refuses the client's
// certificate, or its lack of one: bad certificate (42), unsupported
// certificate (43), revoked (44), expired (45), unknown certificate (46),
// unknown certificate authority (48), access denied (49) and certificate
// required (116).
var certAlerts = [...]tls.AlertError{42, 43, 44, 45, 46, 48, 49, 116}

// certRefused reports whether err carries a TLS alert from the server that
// refuses the client's certificate. With TLS 1.3 the server checks the
// client's certificate after the client's side of the handshake is done,
// so the alert comes as the answer to the first command (HELLO), not from
// the TLS handshake.
func certRefused(err error) bool {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || oe.Err == nil {
		return false
	}
	// crypto/tls reports a received alert with a type of its own, whose
	// text is that of the AlertError of the same number.
	msg := oe.Err.Error()
	for _, a := range certAlerts {
		if errors.Is(oe.Err, a) || msg == a.Error() {
			return true
		}
	}
	return false
}

// hasClientCert reports whether c offers a client certificate.
func hasClientCert(c *tls.Config) bool {
	return len(c.Certificates) > 0 || c.GetClientCertificate != nil
}

// explainTLS makes the handshake failures that come from the client's
// certificate say so: a certificate the server refused becomes a failure of
// the TLS step, which is permanent, whichever step read the alert; a
// connection with a client certificate and no password that the server
// did not authenticate (NOAUTH) names the certificate as the likely cause.
// nc is the connection the handshake ran on, or nil. Other errors are
// returned as they are.
func explainTLS(cfg *Config, nc net.Conn, err error) error {
	he, ok := err.(*HandshakeError)
	if !ok || cfg.TLS == nil {
		return err
	}
	var se *ServerError
	cause := he.Err
	if tc, ok := nc.(*tls.Conn); ok && broken(cause) && !certRefused(cause) {
		if alert := pendingAlert(tc); alert != nil {
			cause = alert
		}
	}
	switch {
	case certRefused(cause):
		what := "the server refused the client certificate"
		if !hasClientCert(cfg.TLS) {
			what = "the server requires a client certificate and none is configured (tls.Config Certificates or GetClientCertificate)"
		}
		return &HandshakeError{Step: "TLS", Err: fmt.Errorf("%s: %w", what, cause)}
	case hasClientCert(cfg.TLS) && cfg.Password == "" && errors.As(cause, &se) && se.Prefix == "NOAUTH":
		e := *he
		e.Err = fmt.Errorf("%w (the server did not authenticate this connection by its client certificate: "+
			"with tls-auth-clients-user, the certificate's common name must name an enabled ACL user)", cause)
		return &e
	}
	return err
}

// broken reports an error of the connection itself (not a timeout): a
// reset, a broken pipe, an end of stream.
func broken(err error) bool {
	var oe *net.OpError
	return (errors.As(err, &oe) && !oe.Timeout()) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// alertWait bounds the read of pendingAlert. The connection is known to be
// broken, so the read ends at once unless the peer is still sending.
const alertWait = 250 * time.Millisecond

// pendingAlert reads what tc has received after a step of the handshake
// failed with an I/O error: a server that refuses the client's certificate
// sends its alert and closes the connection, and the client may see the
// close (a reset on its write of HELLO) before it reads the alert, which
// then still waits in the socket. It returns the read's error when it is
// such an alert, else nil.
func pendingAlert(tc *tls.Conn) error {
	_ = tc.SetReadDeadline(time.Now().Add(alertWait))
	var b [64]byte
	_, err := tc.Read(b[:])
	if certRefused(err) {
		return err
	}
	return nil
}
