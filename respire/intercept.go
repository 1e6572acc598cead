package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
)

// Interceptor wraps what a Client does: its single commands, its batches
// and transactions, and the opening of its connections. Each field is
// optional. An interceptor can act before and after the call, pass it on
// by calling next, or answer it itself without calling next: with an
// error (a circuit breaker, a rate limit) or, for a command, with a reply
// (Command.Reply: a fake for unit tests, a local answer). Options holds a
// list of them; the first wraps the others.
//
// next may be called at most once: a command or a batch is given back to
// the client's pools when it completes, so a second call fails with
// ErrInterceptorMisuse instead of sending it twice. Read-only commands are
// already retried on a new connection (Options.NoRetryReads).
//
// A client without interceptors and without a tracer pays one nil check
// per call; with them, one indirect call per interceptor.
type Interceptor struct {
	// Command wraps every single command: the typed methods (Get, Set,
	// HGetAll, ...), Do and DoBlocking, on every kind of deployment.
	// Commands queued in a Batch or a Tx go through Batch instead, and
	// reads that Client.Cached serves from memory through neither. The
	// error returned is what the caller gets: nil, Nil for a null reply
	// where a value was asked for, an *Error reply, a connection error.
	Command func(ctx context.Context, cmd Command, next CommandFunc) error
	// Batch wraps Batch.Exec and Tx.Exec. An error returned without
	// calling next is given to every command of the batch; a batch
	// answered without calling next must give each of its commands a
	// reply (BatchCall.Command(i).Reply).
	Batch func(ctx context.Context, b BatchCall, next BatchFunc) error
	// Dial wraps the opening of every connection the client makes (data,
	// pub/sub, blocking pool, client-side cache, cluster nodes, sentinels),
	// around Options.Dialer or the default net.Dialer. TLS and the
	// handshake run on the connection it returns.
	Dial func(ctx context.Context, network, addr string, next DialFunc) (net.Conn, error)
}

// CommandFunc runs a command: the next interceptor, or the client itself.
type CommandFunc func(ctx context.Context, cmd Command) error

// BatchFunc runs a batch: the next interceptor, or the client itself.
type BatchFunc func(ctx context.Context, b BatchCall) error

// DialFunc opens a connection: the next interceptor, Options.Dialer or a
// net.Dialer.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// ErrInterceptorMisuse is wrapped by the error of a command or batch whose
// interceptor called next twice, answered it after calling next, or
// returned nil without calling next or giving every command a reply.
var ErrInterceptorMisuse = errors.New("respire: interceptor misuse")

// Command is a command as an interceptor sees it, during the
// interceptor's call. Its name and flags stay valid; its arguments and
// Reply only until next is called.
type Command struct {
	cl   *call  // a single command's call; nil in a batch
	b    *Batch // the batch of a queued command; nil for a single one
	x    *cmd
	info *cmdInfo
	verb string
	gen  uint32
}

// call is the state of one intercepted single command, pooled: whether
// next was called, and how it ended. Only the caller's goroutine touches
// it, never the connection's, so it can be read after next returned, when
// the command itself may be the transport's.
type call struct {
	x      *cmd
	gen    uint32
	state  uint8
	failed bool
}

// States of a call.
const (
	callFresh    = iota // neither passed on nor answered
	callNexted          // next was called
	callAnswered        // Command.Reply answered it
)

var callPool = sync.Pool{New: func() any { return new(call) }}

// live reports whether cmd's command is still the interceptor's to read or
// answer: next was not called and it was not answered.
func (cmd Command) live() bool {
	switch {
	case cmd.cl != nil:
		return cmd.cl.gen == cmd.gen && cmd.cl.state == callFresh
	case cmd.b != nil:
		return cmd.b.icGen == cmd.gen && !cmd.b.nexted && !cmd.x.answered
	}
	return false
}

// Name is the command's name in upper case, with its subcommand for
// container commands ("GET", "CLIENT KILL"); for a raw command the spec
// does not know, its first word in upper case.
func (cmd Command) Name() string {
	if cmd.info == nil {
		return ""
	}
	if cmd.info.name != "" || cmd.verb == "" {
		return cmd.info.name
	}
	return strings.ToUpper(cmd.verb)
}

// ReadOnly reports the spec's readonly flag (false for a command the spec
// does not know).
func (cmd Command) ReadOnly() bool { return cmd.info != nil && cmd.info.flags&flagReadonly != 0 }

// Blocking reports the spec's blocking flag.
func (cmd Command) Blocking() bool { return cmd.info != nil && cmd.info.flags&flagBlocking != 0 }

// Args returns the command's words, its name included, as they will be
// sent. They are valid until next is called, and empty after; they hold
// user data, and Strings gives credentials as sent (String and Redacted
// hide them).
func (cmd Command) Args() CommandArgs {
	if !cmd.live() || cmd.x.argErr != nil {
		return CommandArgs{}
	}
	x := cmd.x
	x.flatten() // Args reads the arguments from the buffer
	return CommandArgs{enc: x.buf[hdrRoom:], n: x.nargs}
}

// Reply answers the command with r, decoded as the server's reply would
// be, instead of sending it: the interceptor then returns nil without
// calling next, and the caller gets r (an error reply as its *Error, a
// null as Nil where a value was asked for). It fails, wrapping
// ErrInterceptorMisuse, when next was called already or the command was
// answered before; and when r was built with a bad argument.
func (cmd Command) Reply(r Canned) error {
	if !cmd.live() {
		return misuse("Reply for %s after next was called, or twice", cmd.Name())
	}
	if r.err != nil {
		return r.err
	}
	if err := r.deliver(cmd.x); err != nil {
		return err
	}
	cmd.x.answered = true
	if cmd.cl != nil {
		cmd.cl.state = callAnswered
	}
	return nil
}

// misuse returns an error wrapping ErrInterceptorMisuse.
func misuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInterceptorMisuse}, args...)...)
}

// BatchCall is a Batch or a Tx as an interceptor sees it: its commands,
// valid until next is called.
type BatchCall struct {
	b   *Batch
	t   *Tx // nil for a Batch
	gen uint32
}

func (bc BatchCall) live() bool { return bc.b != nil && bc.b.icGen == bc.gen && !bc.b.nexted }

// Len is the number of commands queued; 0 once next was called.
func (bc BatchCall) Len() int {
	if !bc.live() {
		return 0
	}
	return len(bc.b.cmds)
}

// Tx reports a transaction (MULTI/EXEC).
func (bc BatchCall) Tx() bool { return bc.t != nil }

// Command returns the i-th command queued, to read or to answer, until
// next is called; a zero Command (no name, no arguments) after, or when i
// is out of range.
func (bc BatchCall) Command(i int) Command {
	if !bc.live() || i < 0 || i >= len(bc.b.cmds) {
		return Command{}
	}
	x := bc.b.cmds[i]
	return Command{b: bc.b, x: x, info: x.info, verb: x.verb, gen: bc.gen}
}

// composeCommands wraps base in the Command functions of list, the first
// outermost; nil when none is set.
func composeCommands(list []Interceptor, base CommandFunc) CommandFunc {
	run, wrapped := base, false
	for i := len(list) - 1; i >= 0; i-- {
		if f := list[i].Command; f != nil {
			inner := run
			run = func(ctx context.Context, cmd Command) error { return f(ctx, cmd, inner) }
			wrapped = true
		}
	}
	if !wrapped {
		return nil
	}
	return run
}

// composeBatches is composeCommands for Batch.
func composeBatches(list []Interceptor, base BatchFunc) BatchFunc {
	run, wrapped := base, false
	for i := len(list) - 1; i >= 0; i-- {
		if f := list[i].Batch; f != nil {
			inner := run
			run = func(ctx context.Context, b BatchCall) error { return f(ctx, b, inner) }
			wrapped = true
		}
	}
	if !wrapped {
		return nil
	}
	return run
}

// composeDials wraps base (never nil) in the Dial functions of list.
func composeDials(list []Interceptor, base DialFunc) DialFunc {
	d := base
	for i := len(list) - 1; i >= 0; i-- {
		if f := list[i].Dial; f != nil {
			inner := d
			d = func(ctx context.Context, network, addr string) (net.Conn, error) {
				return f(ctx, network, addr, inner)
			}
		}
	}
	return d
}
