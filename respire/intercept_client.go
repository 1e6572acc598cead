package respire

import (
	"context"
	"net"

	"github.com/respire-go/respire/internal/transport"
)

// How a Client runs its interceptors (intercept.go). The tracer
// (Options.Tracer) sits inside them, next to the wire: a command an
// interceptor answers itself is not traced as sent.

// intercept composes Options.Interceptors around the client's own command,
// batch and dial functions, and sets cfg.Dialer to the composed dialer.
func (c *Client) intercept(cfg *transport.Config) {
	list := c.opts.Interceptors
	if len(list) == 0 {
		return
	}
	c.icmd = composeCommands(list, c.runCommand)
	c.ibatch = composeBatches(list, c.runBatch)
	dials := false
	for _, ic := range list {
		dials = dials || ic.Dial != nil
	}
	if !dials {
		return
	}
	base := DialFunc(cfg.Dialer)
	if base == nil {
		base = func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, network, addr)
		}
	}
	cfg.Dialer = composeDials(list, base)
}

// interceptCommand runs x (its decoder set) through the command
// interceptors. Its contract is exec's: on error x has been given back (or
// is the transport's); on success the caller reads x.res and releases x.
func (c *Client) interceptCommand(ctx context.Context, x *cmd) error {
	cl := callPool.Get().(*call)
	cl.x, cl.state, cl.failed = x, callFresh, false
	name := x.name()
	err := c.icmd(ctx, Command{cl: cl, x: x, info: x.info, verb: x.verb, gen: cl.gen})
	state, failed := cl.state, cl.failed
	cl.gen++
	cl.x = nil
	callPool.Put(cl)
	switch state {
	case callFresh:
		// Answered by the interceptor with an error, or with nothing.
		if err == nil {
			err = misuse("%s: the interceptor returned nil without calling next or Command.Reply", name)
		}
		x.Recycle()
		return err
	case callAnswered:
		if err == nil {
			err = x.replyErr
		}
		if err != nil {
			x.Recycle()
		}
		return err
	}
	if failed {
		// x is given back, or the transport's: never touched again.
		if err == nil {
			err = misuse("%s: the interceptor returned nil after next failed", name)
		}
		return err
	}
	if err != nil {
		x.Recycle()
	}
	return err
}

// runCommand is the innermost CommandFunc: the client itself.
func (c *Client) runCommand(ctx context.Context, cmd Command) error {
	cl := cmd.cl
	if cl == nil || cl.gen != cmd.gen || cl.state != callFresh {
		return misuse("%s: next called twice, after Command.Reply, or after the interceptor returned", cmd.Name())
	}
	cl.state = callNexted
	x := cl.x
	var err error
	switch {
	case x.raw:
		err = c.runRaw(ctx, x)
	case c.trace != nil && c.trace.cmd != nil:
		err = c.execTraced(ctx, x, x.dec)
	default:
		err = c.execPlain(ctx, x, x.dec)
	}
	cl.failed = err != nil
	return err
}

// runRaw runs a command of Do under the tracer: exec's contract, with a
// null reply a success (doResult makes it Nil).
func (c *Client) runRaw(ctx context.Context, x *cmd) error {
	if c.trace == nil || c.trace.cmd == nil {
		return c.doSend(ctx, x)
	}
	t := c.trace.cmd
	ctx = t.CommandStart(ctx, c, commandStart(x, x.name()))
	err := c.doSend(ctx, x)
	terr := err
	if err == nil && x.replyErr != nil {
		terr = x.replyErr
	}
	t.CommandEnd(ctx, c, TraceCommandEndData{Err: terr})
	return err
}

// interceptBatch runs b (or tx, when not nil, whose Batch b is) through the
// batch interceptors.
func (c *Client) interceptBatch(ctx context.Context, b *Batch, tx *Tx) error {
	b.icGen++
	b.nexted = false
	err := c.ibatch(ctx, BatchCall{b: b, t: tx, gen: b.icGen})
	if b.nexted {
		b.icGen++
		return err
	}
	b.icGen++
	// Answered by the interceptor: with an error for every command, or a
	// reply for each.
	b.done = true
	cmds, futs := b.cmds, b.futs
	b.cmds, b.futs = nil, nil
	if err == nil {
		for _, x := range cmds {
			if !x.answered {
				err = misuse("batch: the interceptor returned nil without calling next or answering every command")
				break
			}
		}
	}
	for i, x := range cmds {
		if err != nil {
			futs[i].settle(nil, err)
		} else {
			futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
		}
		x.Recycle()
	}
	b.recycleLists(cmds, futs)
	if tx != nil {
		tx.err = err
	}
	return err
}

// runBatch is the innermost BatchFunc: the client itself.
func (c *Client) runBatch(ctx context.Context, bc BatchCall) error {
	if !bc.live() {
		return misuse("batch: next called twice, or after the interceptor returned")
	}
	b := bc.b
	b.nexted = true
	if bc.t != nil {
		return bc.t.execNow(ctx)
	}
	if c.trace != nil && c.trace.batch != nil {
		return b.execTraced(ctx)
	}
	return b.execNow(ctx)
}
