package respire

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Nil is returned when the server replies with a null where a value was
// asked for: GET of a missing key, LPOP of an empty list. Test for it with
// errors.Is(err, respire.Nil).
var Nil = errors.New("respire: nil reply")

// Error is an error reply from the server. Command names the command the
// server refused, Prefix holds the reply's first word (ERR, WRONGTYPE,
// MOVED, ASK, NOSCRIPT, NOAUTH, WRONGPASS, ...) and Message the server's
// text as it sent it:
//
//	var e *respire.Error
//	if errors.As(err, &e) && e.Prefix == "WRONGTYPE" { ... }
//
// Its Error method reads "respire: SET: WRONGTYPE Operation against a key
// holding the wrong kind of value": the package, the command, the server's
// message. An error reply refused by a handshake step (a wrong password)
// or a subscription is found by errors.As the same way, with Command the
// step ("AUTH", "HELLO") or "SUBSCRIBE". Command is "" only where the
// command is not known: an error nested in a generic Reply, and a frame
// Conn.Receive (or Conn.Do) reads, which may answer any command sent
// before it.
type Error struct {
	Command string // "SET", "CLIENT KILL", "VADD"; upper case
	Prefix  string // the first word of Message
	Message string // the whole message, prefix included
}

// Error returns "respire: COMMAND: message", or "respire: message" when
// Command is "".
func (e *Error) Error() string {
	if e.Command == "" {
		return "respire: " + e.Message
	}
	return "respire: " + e.Command + ": " + e.Message
}

// newError parses the text of command's error reply.
func newError(command, msg string) *Error {
	prefix := msg
	if i := strings.IndexByte(msg, ' '); i >= 0 {
		prefix = msg[:i]
	}
	return &Error{Command: command, Prefix: prefix, Message: msg}
}

// serverError finds the server's error reply in err: an *Error, or one of
// the transport's own (handshake, subscription, topology) as an *Error.
func serverError(err error) (*Error, bool) {
	var e *Error
	if errors.As(err, &e) {
		return e, true
	}
	var se *transport.ServerError
	if !errors.As(err, &se) {
		return nil, false
	}
	return &Error{Command: se.Command, Prefix: se.Prefix, Message: se.Message}, true
}

// Errors of the connections, for errors.Is.
var (
	// ErrClosed is the error of a call made after Client.Close, or in
	// flight when it closed the client.
	ErrClosed = transport.ErrClosed
	// ErrUnavailable is wrapped by the error of a command that found no
	// connection to the server it needed before its context ended (or at
	// once, with Options.FailFast): the command was never sent.
	ErrUnavailable = transport.ErrUnavailable
	// ErrStalled is the cause, inside a *ConnError, given to the commands
	// in flight on a connection that was replaced because its oldest
	// reply made no progress for Options.StallTimeout.
	ErrStalled = transport.ErrStalled
	// ErrProtocol is wrapped by the error of a connection whose server
	// sent bytes that are not valid RESP, or that broke Options.Limits;
	// such a connection is closed.
	ErrProtocol = resp.ErrProtocol
)

// ConnError reports a connection that broke with the command in flight or
// being sent: the command may or may not have run. Err is the cause (an
// I/O error, ErrProtocol, ErrStalled, ErrPrimarySwitched, ...):
//
//	var ce *respire.ConnError
//	if errors.As(err, &ce) { log.Printf("lost %s: %v", ce.Addr, ce.Err) }
//
// errors.As finds it behind the error of every command, batch,
// transaction and blocking command that lost its connection, on every
// topology. (A Subscription does not fail: it reconnects, and a Gap
// reports the interruption.)
type ConnError struct {
	Addr string // the server's host:port; on Sentinel, "sentinel master NAME"
	Err  error  // the cause
}

// Error returns "respire: connection to ADDR broken: cause".
func (e *ConnError) Error() string {
	return "respire: connection to " + e.Addr + " broken: " + transport.Trim(e.Err)
}

// Unwrap returns the cause.
func (e *ConnError) Unwrap() error { return e.Err }

// HandshakeError reports a failed connection set-up: Step names what
// failed ("TLS", "HELLO", "AUTH", "SELECT", "CLIENT SETNAME", "CLIENT
// TRACKING", "ROLE", "credentials" for Options.Credentials, "OnConnect"
// for the Options.OnConnect hook). A wrong password is a HandshakeError
// wrapping an *Error with prefix WRONGPASS:
//
//	var he *respire.HandshakeError
//	if errors.As(err, &he) && he.Permanent() { ... fix the configuration ... }
type HandshakeError struct {
	Step string // the step that failed
	Err  error  // the cause: the server's *Error, a TLS error, ...
	// permanent is Permanent's answer, taken from the transport's error.
	permanent bool
}

// Error returns "respire: handshake STEP: cause".
func (e *HandshakeError) Error() string {
	return "respire: handshake " + e.Step + ": " + transport.Trim(e.Err)
}

// Unwrap returns the cause.
func (e *HandshakeError) Unwrap() error { return e.Err }

// Permanent reports a failure that trying again will not fix until the
// configuration or the server changes: a wrong password or user, a
// refused SELECT, RESP3 required but refused, a TLS certificate that does
// not verify, a client certificate the server refuses or requires and
// does not get, an error of the OnConnect hook (unless the connection broke,
// the context ended, or the server was loading or busy). Commands get such
// an error at once instead of waiting for a reconnect, while the client
// keeps trying in the background.
func (e *HandshakeError) Permanent() bool { return e.permanent }

func init() { transport.PublicAs = publicAs }

// publicAs lets errors.As find the transport's errors as respire's: each
// call makes a new value, on the error path only.
func publicAs(err error, target any) bool {
	switch t := target.(type) {
	case **ConnError:
		if e, ok := err.(*transport.ConnError); ok {
			*t = &ConnError{Addr: e.Addr, Err: e.Err}
			return true
		}
	case **HandshakeError:
		if e, ok := err.(*transport.HandshakeError); ok {
			*t = &HandshakeError{Step: e.Step, Err: e.Err, permanent: e.Permanent()}
			return true
		}
	case **Error:
		if e, ok := err.(*transport.ServerError); ok {
			*t = &Error{Command: e.Command, Prefix: e.Prefix, Message: e.Message}
			return true
		}
	}
	return false
}

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

// newServerError converts command's error node.
func newServerError(command string, n *resp.Node) error {
	return newError(command, string(n.Data))
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

// Error returns "respire: COMMAND: cause", naming the package and the
// command once even when the cause already names them (an *ArgError).
func (e *CommandError) Error() string {
	msg := transport.Trim(e.Err)
	if e.Command != "" {
		msg = strings.TrimPrefix(msg, e.Command+": ")
	}
	return "respire: " + e.Command + ": " + msg
}

func (e *CommandError) Unwrap() error { return e.Err }

// As lets errors.As find the server's error reply behind a transport
// failure (a wrong password refused at the handshake, a subscription
// refused) as an *Error, the one type callers test for.
func (e *CommandError) As(target any) bool {
	t, ok := target.(**Error)
	if !ok {
		return false
	}
	se, ok := serverError(e.Err)
	if ok {
		*t = se
	}
	return ok
}

func (c *Client) wrapErr(ctx context.Context, name string, err error) error {
	return &CommandError{Command: name, Err: withCtx(ctx, err)}
}

// ctxEnded returns the error of a context that ended: its Err, or
// context.DeadlineExceeded once its deadline passed, which a socket's
// deadline (a dial's, a read's) can report a moment before the context's
// own timer does.
func ctxEnded(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// withCtx returns err, the failure of a call under ctx, so that it says
// the context ended when it did: errors.Is(err, ctx.Err()) then holds,
// whatever the client was doing when it ended (dialing, waiting for a
// connection or a failover, writing, reading), and err keeps saying what
// it said (ErrNotSent, the connection's failure). A reply (an *Error) or
// a refused argument (an *ArgError) is returned as it is: the context did
// not cause it.
func withCtx(ctx context.Context, err error) error {
	if err == nil || ctx == nil {
		return err
	}
	cerr := ctxEnded(ctx)
	if cerr == nil || errors.Is(err, cerr) {
		return err
	}
	var re *Error
	var ae *ArgError
	if errors.As(err, &re) || errors.As(err, &ae) {
		return err
	}
	if ce, ok := err.(*CommandError); ok {
		return &CommandError{Command: ce.Command, Err: withCtx(ctx, ce.Err)}
	}
	return &ctxError{err: err, ctx: cerr}
}

// ctxError is a failure that came as its call's context ended: it reads as
// the failure, and matches both it and the context's error.
type ctxError struct {
	err, ctx error
}

func (e *ctxError) Error() string {
	return e.err.Error() + " (" + e.ctx.Error() + ")"
}

func (e *ctxError) Unwrap() []error { return []error{e.err, e.ctx} }
