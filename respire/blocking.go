package respire

import (
	"context"

	"github.com/respire-go/respire/internal/transport"
)

// ErrPoolExhausted is wrapped by the error of a blocking command (BLPOP,
// XREAD BLOCK, WAIT, ...), a transaction, a Watch or a WithConn that found
// the blocking pool at its bound, Options.BlockingPoolSize connections to
// the server all busy. It comes at once, not after a wait, and the error
// names the bound.
var ErrPoolExhausted = transport.ErrPoolExhausted

// cmdDoBlocking describes the commands given to DoBlocking.
var cmdDoBlocking = cmdInfo{name: "", flags: flagBlocking}

// DoBlocking is Do for a command that may block on the server and that the
// typed methods do not cover, such as a module's blocking command: it runs
// on a connection of the blocking pool (Options.BlockingPoolSize), so it
// holds up no other command. Typed methods of blocking commands (BLPop,
// XRead with Block, ...) use the pool by themselves. A null reply, such as
// the server's timeout reply of BLPOP, gives Nil.
//
// The pool opens a connection per caller blocked at once, up to its
// bound; past it DoBlocking fails at once with an error wrapping
// ErrPoolExhausted. When ctx ends while the command blocks, DoBlocking
// returns at once and the connection is closed, not reused.
func (c *Client) DoBlocking(ctx context.Context, args ...any) (Reply, error) {
	return c.do(ctx, &cmdDoBlocking, args)
}

// send runs x, sealed, on the backend: Do's path. Its error is not yet
// wrapped with the command's name.
func (c *Client) send(ctx context.Context, x *cmd) error { return c.be.send(ctx, x) }
