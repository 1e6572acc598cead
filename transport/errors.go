package transport

import (
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
	return fmt.Sprintf("respire: connection to %s broken: %v", e.Addr, e.Err)
}

func (e *ConnError) Unwrap() error { return e.Err }

// ServerError is an error reply from the server (simple or bulk error). Its
// Prefix is the first word of the message, such as ERR, WRONGTYPE, MOVED,
// ASK, NOSCRIPT, NOAUTH or WRONGPASS.
type ServerError struct {
	Prefix  string
	Message string // the whole message, prefix included
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

// HandshakeError reports a failure while setting up a connection (HELLO,
// AUTH, SELECT, CLIENT SETNAME). It wraps the server's error where there is
// one, so errors.As(err, **ServerError) finds a WRONGPASS.
type HandshakeError struct {
	Step string // e.g. "HELLO", "AUTH", "SELECT"
	Err  error
}

func (e *HandshakeError) Error() string {
	return fmt.Sprintf("respire: handshake %s: %v", e.Step, e.Err)
}

func (e *HandshakeError) Unwrap() error { return e.Err }
