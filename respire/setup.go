package respire

import (
	"context"
	"strconv"
	"strings"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// LibName is the library name the handshake sends with CLIENT SETINFO
// LIB-NAME, beside LIB-VER Version without its "v" (see
// Options.NoClientInfo).
const LibName = "respire"

// ErrCredentials is wrapped by the error of a dial, or of
// Client.Reauthenticate, whose Options.Credentials provider failed; the
// provider's error is wrapped too.
var ErrCredentials = transport.ErrCredentials

// SetupConn is a new connection during its handshake, lent to
// Options.OnConnect. It is valid only during the call and not safe for
// concurrent use.
type SetupConn struct {
	sc *transport.SetupConn
}

// Addr is the address the connection was dialed to.
func (conn *SetupConn) Addr() string { return conn.sc.Info().Addr }

// Protocol is the RESP version the handshake negotiated, 2 or 3.
func (conn *SetupConn) Protocol() int { return conn.sc.Info().Protocol }

// Do sends a command, given as its words as for Client.Do, and returns its
// reply: a null gives Nil, an error reply an *Error. A command that would
// change the state of the connection (the SUBSCRIBE family, SELECT, MULTI,
// CLIENT REPLY, HELLO, AUTH, RESET, ...; the list is
// respire/zz_excluded.md) is refused with an *ArgError before anything is
// sent, as by Client.Do: the connection is about to be shared by the
// client's callers, whose replies are matched to their commands in order.
// Options.DB, ClientName and Credentials do what SELECT, CLIENT SETNAME
// and AUTH would. Unlike Client.Do, it takes the commands that set an
// attribute every connection of the client then carries alike: CLIENT
// SETNAME, CLIENT SETINFO, CLIENT NO-EVICT and CLIENT NO-TOUCH (marked
// setup in respire/zz_excluded.md).
func (conn *SetupConn) Do(ctx context.Context, args ...any) (Reply, error) {
	if len(args) == 0 {
		return Reply{}, newArgError("SetupConn.Do", "args", "no command given")
	}
	if err := refuseConnState(args, false, true); err != nil {
		return Reply{}, err
	}
	x := newCmd(&cmdDo)
	defer x.Recycle()
	name := strings.ToUpper(word(args[0]))
	for i, a := range args {
		x.argAny(name, strconv.Itoa(i), a)
	}
	if x.argErr != nil {
		return Reply{}, x.argErr
	}
	var r Reply
	if err := conn.sc.Do(ctx, x.sealed(), func(m resp.Msg) { r = Reply{m.Tree()} }); err != nil {
		return Reply{}, &CommandError{Command: name, Err: err}
	}
	if err := r.Err(); err != nil {
		if e, ok := err.(*Error); ok {
			e.Command = name
		}
		return r, hideInError(err, args)
	}
	return r, nil
}

// Reauthenticate asks Options.Credentials for credentials once and sends
// AUTH with them on every live connection of the client to its data nodes
// (multiplexed and batch connections, pub/sub in RESP3, cluster nodes, a
// Sentinel-followed master and its replicas), one after the other, each
// as an ordinary command queued behind those in flight, which it does not
// affect. Blocking-pool connections are sent AUTH before their next
// command. Call it after the provider began returning new credentials
// (new connections ask the provider themselves) and before the old ones
// stop being accepted.
//
// A connection that breaks meanwhile is dialed again with the provider's
// credentials. A pub/sub connection in RESP2, where the server takes no
// AUTH while subscribed, keeps its credentials until it is dialed again.
// An empty password sends nothing, as a handshake sends no AUTH then.
// Credentials the server refuses leave each connection authenticated as
// before; the error then joins one *HandshakeError (step AUTH, wrapping the
// server's *Error: WRONGPASS, ...) per connection. Without
// Options.Credentials the error wraps ErrInvalidOption.
func (c *Client) Reauthenticate(ctx context.Context) error {
	cr := c.opts.creds
	if cr == nil {
		return optErr("Credentials", "not set: Reauthenticate needs a credentials provider")
	}
	if c.closed.Load() {
		return &CommandError{Command: "Reauthenticate", Err: ErrClosed}
	}
	if err := cr.Rotate(ctx); err != nil {
		return &CommandError{Command: "Reauthenticate", Err: err}
	}
	return nil
}
