package transport

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Holding a dedicated connection.
//
// A transaction with WATCH needs one connection for several round trips
// (WATCH, then the caller's reads, then MULTI ... EXEC), during which no
// other caller may use it: the connection carries state (the watched keys).
// Hold lends a connection of the blocking pool for that; it counts against
// the pool's bound like a blocking command does.

// Held is a connection of a BlockingPool lent to one caller until Release.
// It is not safe for concurrent use.
type Held struct {
	p       *BlockingPool
	d       *Dedicated
	discard bool // close at Release, whatever its state
}

// Hold takes a connection of the pool for the caller's exclusive use, for
// any number of round trips, until Release. It fails at once with an error
// wrapping ErrPoolExhausted when Size connections are taken, waits for a
// dial as BlockingPool.Do does (its errors then match the context's once
// it ends), and fails with ErrClosed after Close.
func (p *BlockingPool) Hold(ctx context.Context) (*Held, error) {
	if err := ctx.Err(); err != nil {
		return nil, NotSent(err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(p.ctx, func() { cancel(ErrClosed) })
	defer stop()

	d, err := p.get(ctx, cctx)
	if err != nil {
		return nil, NotSent(err)
	}
	return &Held{p: p, d: d}, nil
}

// Do writes payload, which holds n encoded commands, and passes their n
// replies in order to handle (i counts from 0; push frames go to
// Config.OnPush). m is valid only during handle. When ctx ends first, or
// the pool is closed, Do returns at once and the connection is broken:
// Release then closes it. Errors are those of BlockingPool.Do.
func (h *Held) Do(ctx context.Context, payload []byte, n int, handle func(i int, m resp.Msg)) error {
	return h.run(ctx, func(ctx context.Context) error { return h.d.DoN(ctx, payload, n, handle) })
}

// Broken reports whether the connection failed and can no longer be used.
func (h *Held) Broken() bool { return h.d == nil || h.d.broken }

// Discard marks the connection as unusable, so that Release closes it
// instead of returning it to the pool: for a caller that cannot restore
// the connection's state.
func (h *Held) Discard() { h.discard = true }

// Release gives the connection back to the pool, or closes it if it is
// broken. Calls after the first do nothing.
func (h *Held) Release() {
	if h.d == nil {
		return
	}
	if h.discard {
		h.p.discard(h.d)
	} else {
		h.p.put(h.d)
	}
	h.d = nil
}

// DoN writes payload (n encoded commands) and passes their n replies, in
// order, to handle, skipping push frames, which go to Config.OnPush. m is
// valid only during handle. When ctx ends first, DoN returns an error
// wrapping ctx.Err() as soon as the socket gives up, and the connection is
// broken: the replies it still owes would be read by the next command.
func (d *Dedicated) DoN(ctx context.Context, payload []byte, n int, handle func(i int, m resp.Msg)) error {
	return d.guard(ctx, func() error { return d.roundTripN(payload, n, handle) })
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

// Write writes payload (any number of encoded commands) on the held
// connection and reads nothing: for commands whose replies the server
// suppresses (CLIENT REPLY OFF) or that are read later with Read. When ctx
// ends first the connection is broken.
func (h *Held) Write(ctx context.Context, payload []byte) error {
	return h.run(ctx, func(ctx context.Context) error { return h.d.Write(ctx, payload) })
}

// Read reads the next frame of the held connection, push frames included,
// and passes it to handle; m is valid only during handle. When ctx ends
// first the connection is broken.
func (h *Held) Read(ctx context.Context, handle func(m resp.Msg)) error {
	return h.run(ctx, func(ctx context.Context) error { return h.d.Read(ctx, handle) })
}

// run calls fn with a context that Close also ends.
func (h *Held) run(ctx context.Context, fn func(ctx context.Context) error) error {
	if h.d == nil {
		return errors.New("respire: held connection already released")
	}
	if h.p.ctx.Err() != nil {
		h.d.broken = true
		return NotSent(ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return NotSent(err)
	}
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(h.p.ctx, func() { cancel(ErrClosed) })
	defer stop()
	err := fn(cctx)
	if err != nil && context.Cause(cctx) == ErrClosed {
		return ErrClosed
	}
	return err
}

// Write writes payload and reads nothing. Errors are those of DoN.
func (d *Dedicated) Write(ctx context.Context, payload []byte) error {
	return d.guard(ctx, func() error {
		_, err := d.nc.Write(payload)
		return err
	})
}

// Read reads the next frame, push frames included, and passes it to handle.
// Errors are those of DoN.
func (d *Dedicated) Read(ctx context.Context, handle func(m resp.Msg)) error {
	return d.guard(ctx, func() error {
		m, err := d.rd.Next()
		if err != nil {
			return err
		}
		handle(m)
		return nil
	})
}

// guard runs one I/O step of the connection, interrupted when ctx ends; an
// interrupted or failed step breaks the connection.
func (d *Dedicated) guard(ctx context.Context, step func() error) error {
	if d.broken {
		return NotSent(&ConnError{Addr: d.cfg.Addr, Err: errors.New("connection already broken")})
	}
	stop := context.AfterFunc(ctx, func() { _ = d.nc.SetDeadline(time.Unix(1, 0)) })
	err := step()
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
