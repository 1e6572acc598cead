package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/transport/resp"
)

// Holding a dedicated connection.
//
// A transaction with WATCH needs one connection for several round trips
// (WATCH, then the caller's reads, then MULTI ... EXEC), during which no
// other caller may use it: the connection carries state (the watched keys).
// Hold lends a connection of the blocking pool for that; it counts against
// the pool's size like a blocking command does.

// Held is a connection of a BlockingPool lent to one caller until Release.
// It is not safe for concurrent use.
type Held struct {
	p *BlockingPool
	d *Dedicated
}

// Hold takes a connection of the pool for the caller's exclusive use, for
// any number of round trips, until Release. It waits for a free connection
// until ctx ends (the error then wraps ErrPoolExhausted and the context's
// error), and fails with ErrClosed after Close.
func (p *BlockingPool) Hold(ctx context.Context) (*Held, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("not sent: %w", err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(p.ctx, func() { cancel(ErrClosed) })
	defer stop()

	if err := p.acquire(ctx, cctx); err != nil {
		return nil, err
	}
	d, err := p.get(cctx)
	if err != nil {
		<-p.tokens
		if context.Cause(cctx) == ErrClosed {
			return nil, ErrClosed
		}
		return nil, err
	}
	return &Held{p: p, d: d}, nil
}

// Do writes payload, which holds n encoded commands, and passes their n
// replies in order to handle (i counts from 0; push frames go to
// Config.OnPush). m is valid only during handle. When ctx ends first, or
// the pool is closed, Do returns at once and the connection is broken:
// Release then closes it. Errors are those of BlockingPool.Do.
func (h *Held) Do(ctx context.Context, payload []byte, n int, handle func(i int, m resp.Msg)) error {
	if h.d == nil {
		return errors.New("respire: held connection already released")
	}
	if h.p.ctx.Err() != nil {
		h.d.broken = true
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("not sent: %w", err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(h.p.ctx, func() { cancel(ErrClosed) })
	defer stop()
	err := h.d.DoN(cctx, payload, n, handle)
	if err != nil && context.Cause(cctx) == ErrClosed {
		return ErrClosed
	}
	return err
}

// Broken reports whether the connection failed and can no longer be used.
func (h *Held) Broken() bool { return h.d == nil || h.d.broken }

// Discard marks the connection as unusable, so that Release closes it
// instead of returning it to the pool: for a caller that cannot restore
// the connection's state.
func (h *Held) Discard() {
	if h.d != nil {
		h.d.broken = true
	}
}

// Release gives the connection back to the pool, or closes it if it is
// broken. Calls after the first do nothing.
func (h *Held) Release() {
	if h.d == nil {
		return
	}
	h.p.put(h.d)
	h.d = nil
	<-h.p.tokens
}

// DoN writes payload (n encoded commands) and passes their n replies, in
// order, to handle, skipping push frames, which go to Config.OnPush. m is
// valid only during handle. When ctx ends first, DoN returns an error
// wrapping ctx.Err() as soon as the socket gives up, and the connection is
// broken: the replies it still owes would be read by the next command.
func (d *Dedicated) DoN(ctx context.Context, payload []byte, n int, handle func(i int, m resp.Msg)) error {
	if d.broken {
		return &ConnError{Addr: d.cfg.Addr, Err: errors.New("connection already broken")}
	}
	stop := context.AfterFunc(ctx, func() { _ = d.nc.SetDeadline(time.Unix(1, 0)) })
	err := d.roundTripN(payload, n, handle)
	if !stop() {
		d.broken = true
		if err != nil {
			return fmt.Errorf("waiting for reply: %w", ctx.Err())
		}
		return nil
	}
	if err != nil {
		d.broken = true
		return &ConnError{Addr: d.cfg.Addr, Err: err}
	}
	return nil
}

func (d *Dedicated) roundTripN(payload []byte, n int, handle func(i int, m resp.Msg)) error {
	if _, err := d.nc.Write(payload); err != nil {
		return err
	}
	for i := 0; i < n; {
		m, err := d.rd.Next()
		if err != nil {
			return err
		}
		if m.Top().Type == resp.TypePush {
			if d.cfg.OnPush != nil {
				d.cfg.OnPush(m)
			}
			continue
		}
		handle(i, m)
		i++
	}
	return nil
}
