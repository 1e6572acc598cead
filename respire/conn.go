package respire

import (
	"context"
	"errors"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Conn is a connection of the caller's own, lent by WithConn for the
// duration of a callback. Unlike the client's shared connections it may
// carry any state: SELECT, CLIENT REPLY, MONITOR, HELLO, AUTH, SUBSCRIBE,
// MULTI ... are all allowed on it, because no other caller's replies can be
// confused with its own. It is closed when the callback returns, never
// reused. A Conn is not safe for concurrent use.
type Conn struct {
	c *Client
	h *transport.Held
}

// WithConn dials a connection (with the client's address, credentials,
// protocol and database), calls fn with it, and closes it when fn returns;
// it returns fn's error, or the error that kept it from calling fn. The
// connection counts against Options.BlockingPoolSize while it is held;
// past that bound WithConn fails at once with an error wrapping
// ErrPoolExhausted. On a cluster it is a
// connection to one of the primaries, chosen at random.
//
//	err := c.WithConn(ctx, func(conn *respire.Conn) error {
//		if _, err := conn.Do(ctx, "SELECT", 2); err != nil {
//			return err
//		}
//		_, err := conn.Do(ctx, "FLUSHDB")
//		return err
//	})
func (c *Client) WithConn(ctx context.Context, fn func(conn *Conn) error) error {
	h, err := c.be.hold(ctx, 0, false, nil)
	if err != nil {
		return c.wrapErr(ctx, "WithConn", err)
	}
	// Whatever fn did, the connection's state is its own: never pooled.
	h.Discard()
	defer h.Release()
	conn := &Conn{c: c, h: h}
	defer func() { conn.h = nil }()
	return fn(conn)
}

var errConnDone = errors.New("respire: Conn used after its WithConn returned")

// Do sends a command, given as its words as for Client.Do, and returns the
// next frame the server sends: its reply, unless earlier commands left
// replies unread or the connection receives pushes (after SUBSCRIBE or
// CLIENT TRACKING on RESP3), which Do then returns in order. A null gives
// Nil and an error reply an *Error. After CLIENT REPLY OFF or SKIP use Send,
// since the server sends no reply for Do to read.
func (conn *Conn) Do(ctx context.Context, args ...any) (Reply, error) {
	if err := conn.Send(ctx, args...); err != nil {
		return Reply{}, err
	}
	r, err := conn.Receive(ctx)
	return r, hideInError(err, args)
}

// Send writes a command, given as for Do, and reads nothing.
func (conn *Conn) Send(ctx context.Context, args ...any) error {
	if conn.h == nil {
		return errConnDone
	}
	x, name := conn.c.encodeDo(&cmdDo, args, false)
	defer x.Recycle()
	if x.argErr != nil {
		return x.argErr
	}
	if err := conn.h.Write(ctx, x.sealed()); err != nil {
		return conn.c.wrapErr(ctx, name, err)
	}
	return nil
}

// Receive reads the next frame the server sends on the connection: the
// reply to a command written with Send, a pub/sub message, a MONITOR line,
// an invalidation. It waits until ctx ends; then the connection is broken
// and every later call fails.
func (conn *Conn) Receive(ctx context.Context) (Reply, error) {
	if conn.h == nil {
		return Reply{}, errConnDone
	}
	var r Reply
	if err := conn.h.Read(ctx, func(m resp.Msg) { r = Reply{m.Tree()} }); err != nil {
		return Reply{}, conn.c.wrapErr(ctx, "receive", err)
	}
	if err := r.Err(); err != nil {
		return r, err
	}
	return r, nil
}
