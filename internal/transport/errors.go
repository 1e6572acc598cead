package transport

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"strings"
)

// ErrClosed is returned for calls made after, or in flight during, Close.
var ErrClosed = errors.New("respire: client is closed")

// ErrUnavailable is wrapped by errors returned while no connection to the
// server is up and the call could not wait (fail-fast mode), or its context
// ended while waiting for a reconnect.
var ErrUnavailable = errors.New("respire: server unavailable")

// ErrNotSent is matched (errors.Is) by the error of every command that
// certainly never reached the server: its context ended, or the client was
// closed, before it was written; no connection could be had; its connection
// broke before its bytes were handed to the socket; it was refused before
// encoding. Such a command is safe to send again, whatever it does. An
// error that does not match it may come from a command that ran (outcome
// unknown), or from the server's error reply.
var ErrNotSent = errors.New("respire: not sent")

// ErrWrongNode is wrapped by the handshake error of a connection to a
// cluster node whose id is not the one the topology expects at that
// address: another node, or another cluster, now answers there.
var ErrWrongNode = errors.New("respire: wrong cluster node")

// NotSent wraps err so that it matches ErrNotSent.
func NotSent(err error) error {
	if err == nil || errors.Is(err, ErrNotSent) {
		return err
	}
	return &notSentError{err}
}

type notSentError struct{ err error }

func (e *notSentError) Error() string        { return "respire: not sent: " + Trim(e.err) }
func (e *notSentError) Unwrap() error        { return e.err }
func (e *notSentError) Is(target error) bool { return target == ErrNotSent }

// Trim returns err's message without the leading "respire: " that the
// package's own errors carry, for wrapping it inside another message that
// has one.
func Trim(err error) string { return strings.TrimPrefix(err.Error(), "respire: ") }

// Wrap returns an error that reads "respire: what: " and err's message
// without its own leading "respire: ", so that the package is named once,
// and that unwraps to err for errors.Is and errors.As.
func Wrap(what string, err error) error { return &wrapError{what: what, err: err} }

type wrapError struct {
	what string
	err  error
}

func (e *wrapError) Error() string { return "respire: " + e.what + ": " + Trim(e.err) }
func (e *wrapError) Unwrap() error { return e.err }

// ErrStalled is the cause given to in-flight calls when a connection was
// closed because its oldest pending reply made no progress for the
// configured stall timeout.
var ErrStalled = errors.New("respire: connection stalled")

// ConnError reports that a connection broke while a request was in flight
// or being sent. It wraps the cause (an I/O error, a protocol error,
// ErrStalled, ...). The command may or may not have been executed.
type ConnError struct {
	Addr string
	Err  error
}

func (e *ConnError) Error() string {
	return fmt.Sprintf("respire: connection to %s broken: %s", e.Addr, Trim(e.Err))
}

func (e *ConnError) Unwrap() error { return e.Err }

// PublicAs lets errors.As find an error of this package as the API
// package's type of the same meaning (respire declares its own ConnError,
// HandshakeError and Error, which this package cannot import): given one
// of this package's errors and errors.As's target, it fills the target and
// reports true when the target's type is that error's public counterpart.
// The API package sets it once, in an init function; nil leaves errors.As
// to find only this package's types.
var PublicAs func(err error, target any) bool

func publicAs(err error, target any) bool { return PublicAs != nil && PublicAs(err, target) }

// As fills the API package's counterpart (see PublicAs).
func (e *ConnError) As(target any) bool { return publicAs(e, target) }

// ServerError is an error reply from the server (simple or bulk error) to
// a command the transport sends itself: a handshake step, a subscription,
// a topology query. Its Prefix is the first word of the message, such as
// ERR, WRONGTYPE, MOVED, ASK, NOSCRIPT, NOAUTH or WRONGPASS. The respire
// package turns it into its own *respire.Error for callers.
type ServerError struct {
	Prefix  string
	Message string // the whole message, prefix included
	// Command is the command the server refused ("AUTH", "SUBSCRIBE",
	// "CLUSTER SLOTS"), or "" when not known.
	Command string
}

// NewServerError parses an error reply's text.
func NewServerError(msg string) *ServerError {
	prefix := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		prefix = msg[:i]
	}
	return &ServerError{Prefix: prefix, Message: msg}
}

func (e *ServerError) Error() string { return e.Message }

// As fills the API package's counterpart (see PublicAs).
func (e *ServerError) As(target any) bool { return publicAs(e, target) }

// HandshakeError reports a failure while setting up a connection (HELLO,
// AUTH, SELECT, CLIENT SETNAME). It wraps the server's error where there is
// one, so errors.As(err, **ServerError) finds a WRONGPASS.
type HandshakeError struct {
	Step string // e.g. "HELLO", "AUTH", "SELECT", StepSetup
	Err  error
	// transient marks a failed Config.Setup hook that trying again may
	// fix (the connection broke, the context ended, the server was
	// loading).
	transient bool
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("respire: handshake %s: %s", e.Step, Trim(e.Err))
}

func (e *HandshakeError) Unwrap() error { return e.Err }

// As fills the API package's counterpart (see PublicAs).
func (e *HandshakeError) As(target any) bool { return publicAs(e, target) }

// Permanent reports a handshake failure that trying again will not fix
// until the configuration or the server changes: a wrong password or user
// (WRONGPASS, NOAUTH, NOPERM, a refused AUTH), a database SELECT refused,
// RESP3 required but refused, tracking refused or impossible, a TLS
// certificate that does not verify, a client certificate the server
// refuses or lacks (a TLS alert that says so), an error returned by the
// Config.Setup hook unless the connection broke, the context ended or the
// server answered LOADING, BUSY, TRYAGAIN, MASTERDOWN or CLUSTERDOWN during
// it. Callers get such an error at once, instead of waiting for a
// reconnect, while the client keeps trying in the background. Transient
// failures (a full server, a server still loading) are not permanent.
func (e *HandshakeError) Permanent() bool {
	if e.Step == StepSetup {
		return !e.transient
	}
	if errors.Is(e.Err, ErrTrackingNeedsRESP3) || errors.Is(e.Err, ErrWrongNode) {
		return true
	}
	var se *ServerError
	if errors.As(e.Err, &se) {
		switch se.Prefix {
		case "WRONGPASS", "NOAUTH", "NOPERM":
			return true
		case "LOADING", "BUSY", "TRYAGAIN", "MASTERDOWN", "CLUSTERDOWN":
			return false
		}
		if strings.Contains(se.Message, "max number of clients") {
			return false
		}
		switch e.Step {
		case "AUTH", "SELECT", "CLIENT TRACKING":
			return true
		case "HELLO":
			// HELLO refused reaches the caller only when RESP3 was required.
			return helloRefused(se)
		}
		return false
	}
	if e.Step == "TLS" {
		var verr *tls.CertificateVerificationError
		var uerr x509.UnknownAuthorityError
		var herr x509.HostnameError
		var cerr x509.CertificateInvalidError
		return errors.As(e.Err, &verr) || errors.As(e.Err, &uerr) || errors.As(e.Err, &herr) || errors.As(e.Err, &cerr) ||
			certRefused(e.Err)
	}
	return false
}

// permanent reports an error that wraps a permanent *HandshakeError.
func permanent(err error) bool {
	var he *HandshakeError
	return errors.As(err, &he) && he.Permanent()
}

// unavailableError is the error of a call that found no connection.
type unavailableError struct {
	addr  string
	cause error // the last dial error, or nil
	ctx   error // the context's error, when it ended the wait, or nil
}

func unavailable(addr string, cause, ctxErr error) error {
	return NotSent(&unavailableError{addr: addr, cause: cause, ctx: ctxErr})
}

// UntilDone returns err, the error of a request that was not sent, as the
// error of a caller that kept trying until its context ended with ctxErr:
// an ErrUnavailable one names the context's error (and matches it), others
// are joined with it.
func UntilDone(err, ctxErr error) error {
	if ctxErr == nil || errors.Is(err, ctxErr) {
		return err
	}
	var ue *unavailableError
	if errors.As(err, &ue) && ue.ctx == nil {
		return unavailable(ue.addr, ue.cause, ctxErr)
	}
	return NotSent(fmt.Errorf("%w (until the context ended: %w)", err, ctxErr))
}

func (e *unavailableError) Error() string {
	msg := ErrUnavailable.Error() + ": " + e.addr
	if e.ctx != nil {
		msg += ": " + e.ctx.Error()
	}
	if e.cause != nil {
		if e.ctx != nil {
			msg += " (last error: " + Trim(e.cause) + ")"
		} else {
			msg += ": " + Trim(e.cause)
		}
	}
	return msg
}

func (e *unavailableError) Unwrap() []error {
	errs := []error{ErrUnavailable}
	if e.ctx != nil {
		errs = append(errs, e.ctx)
	}
	if e.cause != nil {
		errs = append(errs, e.cause)
	}
	return errs
}
