package respire

import (
	"errors"
	"fmt"

	"github.com/respire-go/respire/transport"
	"github.com/respire-go/respire/transport/resp"
)

// Nil is returned when the server replies with a null where a value was
// asked for: GET of a missing key, LPOP of an empty list. Test for it with
// errors.Is(err, respire.Nil).
var Nil = errors.New("respire: nil reply")

// Error is an error reply from the server. Prefix holds its first word
// (ERR, WRONGTYPE, MOVED, ASK, NOSCRIPT, NOAUTH, WRONGPASS, ...):
//
//	var e *respire.Error
//	if errors.As(err, &e) && e.Prefix == "WRONGTYPE" { ... }
type Error = transport.ServerError

// Errors of the transport, re-exported so callers need not import it.
var (
	// ErrClosed: the client was closed.
	ErrClosed = transport.ErrClosed
	// ErrUnavailable: no connection to the server could be used in time.
	ErrUnavailable = transport.ErrUnavailable
	// ErrStalled: a connection was replaced because a reply made no progress.
	ErrStalled = transport.ErrStalled
	// ErrProtocol: the server sent bytes that are not valid RESP, or broke a limit.
	ErrProtocol = resp.ErrProtocol
)

// ConnError reports a connection that broke with the command in flight; the
// command may or may not have run.
type ConnError = transport.ConnError

// HandshakeError reports a failed connection set-up (TLS, HELLO, AUTH,
// SELECT). A wrong password is a HandshakeError wrapping an *Error with
// prefix WRONGPASS.
type HandshakeError = transport.HandshakeError

// ErrNotSent is matched (errors.Is) by the error of every command that
// certainly never reached the server, which is therefore safe to send
// again whatever it does: a bad argument or a refused command (*ArgError),
// a command the server lacks (*UnsupportedError), a context that ended or a
// client closed before the command was written, no connection to be had
// (ErrUnavailable, a permanent *HandshakeError), a connection that broke
// before the command's bytes were written. Any other error means the
// command may have run (outcome unknown: a *ConnError, a context that
// ended while waiting for the reply) or ran and failed (an *Error).
var ErrNotSent = transport.ErrNotSent

// ErrInvalidOption is wrapped by every error about a bad Options value or URL.
var ErrInvalidOption = errors.New("respire: invalid option")

// ArgError reports a bad argument to a command, found before anything was
// sent.
type ArgError struct {
	Command  string // e.g. "SET"
	Argument string // e.g. "expiration"
	Reason   string
	// Err is the sentinel the reason is an instance of (ErrCrossSlot, ...),
	// for errors.Is; nil for most argument errors.
	Err error
}

// Unwrap returns Err.
func (e *ArgError) Unwrap() error { return e.Err }

func (e *ArgError) Error() string {
	return fmt.Sprintf("respire: %s: argument %s: %s", e.Command, e.Argument, e.Reason)
}

// Is makes errors.Is(err, ErrNotSent) hold: nothing was sent.
func (e *ArgError) Is(target error) bool { return target == ErrNotSent }

func newArgError(cmd, arg, msg string) error {
	return &ArgError{Command: cmd, Argument: arg, Reason: msg}
}

// newServerError converts an error node.
func newServerError(n *resp.Node) error {
	return transport.NewServerError(string(n.Data))
}

// UnexpectedReplyError reports a reply whose shape does not fit the command.
type UnexpectedReplyError struct {
	Command string
	Got     string
	Want    string
}

func (e *UnexpectedReplyError) Error() string {
	return fmt.Sprintf("respire: %s: unexpected reply %s, want %s", e.Command, e.Got, e.Want)
}

func errUnexpected(cmd string, n *resp.Node, want string) error {
	got := n.Type.String()
	if n.Null {
		got = "null"
	}
	return &UnexpectedReplyError{Command: cmd, Got: got, Want: want}
}

// CommandError wraps a transport failure with the command's name.
type CommandError struct {
	Command string
	Err     error
}

func (e *CommandError) Error() string {
	return "respire: " + e.Command + ": " + transport.Trim(e.Err)
}

func (e *CommandError) Unwrap() error { return e.Err }

func (c *Client) wrapErr(name string, err error) error {
	return &CommandError{Command: name, Err: err}
}
