package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"

	"github.com/respire-go/respire/internal/transport/resp"
)

// ErrPoolExhausted is wrapped by the error of a blocking command that
// found every connection of the blocking pool busy until its context ended.
// The error names the pool size.
var ErrPoolExhausted = errors.New("respire: blocking pool exhausted")

// BlockingPool runs commands that may block on the server (BLPOP, XREAD
// BLOCK, WAIT, ...) on dedicated connections, one command per connection at
// a time, so that they never hold up the multiplexed connections and no
// stall detector mistakes a long wait for a dead peer.
//
// At most Size connections exist. They are dialed on demand with the same
// Config (address, TLS, credentials, protocol, database) as the Mux and kept
// for reuse while idle. A call whose context ends while its command is in
// flight returns at once; its connection, which still owes a reply, is
// closed rather than reused.
type BlockingPool struct {
	cfg    Config
	size   int
	tokens chan struct{} // one per call holding or dialing a connection
	ctx    context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	idle   []*Dedicated
	busy   map[*Dedicated]struct{}
	closed bool
}

// DefaultBlockingPoolSize is the pool size used when NewBlockingPool is
// given a size of zero or less.
const DefaultBlockingPoolSize = 32

// NewBlockingPool returns a pool of at most size connections for cfg. It
// dials nothing until the first call.
func NewBlockingPool(cfg Config, size int) *BlockingPool {
	if size <= 0 {
		size = DefaultBlockingPoolSize
	}
	cfg = cfg.withDefaults()
	// The pool's connections read no cached keys: no tracking, so their
	// handshake also works on RESP2.
	cfg.Tracking = nil
	p := &BlockingPool{
		cfg:    cfg,
		size:   size,
		tokens: make(chan struct{}, size),
		busy:   make(map[*Dedicated]struct{}),
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	cfg.Credentials.addPool(p)
	return p
}

// Size returns the largest number of connections the pool opens.
func (p *BlockingPool) Size() int { return p.size }

// Do sends r on a connection of the pool and waits for its reply, which the
// request's Handler has received by the time Do returns nil. The contract
// is that of Mux.Do: on any error the Handler's Recycle has been called and
// the caller must not touch r again. Errors wrap ErrPoolExhausted (and the
// context's error) when no connection became free in time, the context's
// error when it ended during the call, ErrClosed after Close, ErrUnavailable
// when no connection could be dialed, and a *ConnError when the connection
// broke.
func (p *BlockingPool) Do(ctx context.Context, r *Request) error {
	err := p.do(ctx, r)
	if err != nil {
		r.handler.Recycle()
	}
	return err
}

func (p *BlockingPool) do(ctx context.Context, r *Request) error {
	if err := ctx.Err(); err != nil {
		return NotSent(err)
	}
	// One context ends the call for both reasons: the caller's and Close.
	cctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(p.ctx, func() { cancel(ErrClosed) })
	defer stop()

	if err := p.acquire(ctx, cctx); err != nil {
		return NotSent(err)
	}
	defer func() { <-p.tokens }()

	d, err := p.get(cctx)
	if err != nil {
		if context.Cause(cctx) == ErrClosed {
			return NotSent(ErrClosed)
		}
		return NotSent(err)
	}
	err = d.Do(cctx, r.flat(), r.handler.HandleReply)
	p.put(d)
	if err != nil && context.Cause(cctx) == ErrClosed {
		return ErrClosed
	}
	return err
}

// acquire takes one of the pool's tokens, waiting until cctx ends: ctx is
// the caller's context, cctx the one that Close also cancels.
func (p *BlockingPool) acquire(ctx, cctx context.Context) error {
	select {
	case p.tokens <- struct{}{}:
		return nil
	default:
	}
	select {
	case p.tokens <- struct{}{}:
		return nil
	case <-cctx.Done():
		if context.Cause(cctx) == ErrClosed {
			return ErrClosed
		}
		return fmt.Errorf("%w: all %d connections busy: %w", ErrPoolExhausted, p.size, ctx.Err())
	}
}

// get returns an idle connection that is still open, or dials one.
func (p *BlockingPool) get(ctx context.Context) (*Dedicated, error) {
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, ErrClosed
		}
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		d := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.busy[d] = struct{}{}
		p.mu.Unlock()
		// A connection the server closed while it was idle (a restart, a
		// client timeout) would fail the command for nothing; a blocking
		// command is usually not safe to repeat, so check before sending.
		if alive(d.nc) && !p.stale(d) && p.upToDate(ctx, d) {
			return d, nil
		}
		p.discard(d)
	}
	d, err := DialDedicated(ctx, p.cfg)
	if err != nil {
		switch {
		case permanent(err):
			return nil, NotSent(err)
		case ctx.Err() != nil:
			return nil, unavailable(p.cfg.Addr, err, ctx.Err())
		}
		return nil, unavailable(p.cfg.Addr, err, nil)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		d.Close()
		return nil, ErrClosed
	}
	p.busy[d] = struct{}{}
	return d, nil
}

// put takes a connection back after a call: idle if it is healthy, closed
// otherwise.
func (p *BlockingPool) put(d *Dedicated) {
	p.mu.Lock()
	delete(p.busy, d)
	if p.closed || d.Broken() || p.stale(d) || len(p.idle) >= p.size {
		// len(p.idle) reaches size only while reauthIdle holds idle
		// connections and callers dialed others meanwhile.
		p.mu.Unlock()
		d.Close()
		return
	}
	p.idle = append(p.idle, d)
	p.mu.Unlock()
}

// upToDate sends AUTH on d before its next command when the credentials
// rotated (Config.Credentials) since d authenticated, and reports whether d
// may be used; when not, a new connection asks the provider.
func (p *BlockingPool) upToDate(ctx context.Context, d *Dedicated) bool {
	return p.reauth(ctx, d) == nil
}

// reauth is upToDate with the error.
func (p *BlockingPool) reauth(ctx context.Context, d *Dedicated) error {
	cr := p.cfg.Credentials
	if cr == nil {
		return nil
	}
	gen, err := cr.upToDate(ctx, d.info.authGen, d.info.Addr, func(payload []byte) (*ServerError, error) {
		var se *ServerError
		err := d.Do(ctx, payload, func(m resp.Msg) {
			if v := m[m.Value(0)]; v.IsError() {
				se = NewServerError(string(v.Data))
			}
		})
		return se, err
	})
	d.info.authGen = gen
	return err
}

// reauthIdle brings the idle connections up to date with the last
// rotation of Config.Credentials, one after the other; callers meanwhile
// find them busy. A connection that refuses the credentials is closed, as
// one that broke.
func (p *BlockingPool) reauthIdle(ctx context.Context) error {
	p.mu.Lock()
	idle := p.idle
	p.idle = nil
	for _, d := range idle {
		p.busy[d] = struct{}{}
	}
	p.mu.Unlock()
	var errs []error
	for _, d := range idle {
		if err := p.reauth(ctx, d); err != nil {
			var he *HandshakeError
			if errors.As(err, &he) {
				errs = append(errs, err)
			}
			p.discard(d)
			continue
		}
		p.put(d)
	}
	return errors.Join(errs...)
}

func (p *BlockingPool) discard(d *Dedicated) {
	p.mu.Lock()
	delete(p.busy, d)
	p.mu.Unlock()
	d.Close()
}

// Close closes every connection. Calls in flight return ErrClosed at once,
// and so do later calls.
func (p *BlockingPool) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.cfg.Credentials.removePool(p)
	idle := p.idle
	p.idle = nil
	p.mu.Unlock()
	// Busy connections are closed by their callers, which the cancel wakes.
	p.cancel()
	for _, d := range idle {
		d.Close()
	}
	return nil
}

// Stats describes the pool's connections.
type BlockingStats struct {
	Size, Idle, Busy int
}

// Stats returns how many connections are idle and busy.
func (p *BlockingPool) Stats() BlockingStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return BlockingStats{Size: p.size, Idle: len(p.idle), Busy: len(p.busy)}
}

// Dedicated is one handshaken connection that runs one command at a time,
// synchronously, on the caller's goroutine. It is not safe for concurrent
// use, except for Close.
type Dedicated struct {
	cfg    *Config
	nc     net.Conn
	rd     *resp.Reader
	info   ConnInfo
	broken bool
}

// DialDedicated dials and handshakes a connection described by cfg.
func DialDedicated(ctx context.Context, cfg Config) (*Dedicated, error) {
	cfg = cfg.withDefaults()
	nc, rd, info, err := dial(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	if cfg.OnConnect != nil {
		cfg.OnConnect(info)
	}
	return &Dedicated{cfg: &cfg, nc: nc, rd: rd, info: info}, nil
}

// Info describes the connection.
func (d *Dedicated) Info() ConnInfo { return d.info }

// Broken reports whether the connection failed or was abandoned and must
// not be used again.
func (d *Dedicated) Broken() bool { return d.broken }

// Close closes the connection.
func (d *Dedicated) Close() error {
	return d.nc.Close()
}

// Do writes payload (one or more encoded commands) and passes the next
// reply to handle, skipping push frames, which go to Config.OnPush. m is
// valid only during handle. When ctx ends first, Do returns an error
// wrapping ctx.Err() as soon as the socket gives up, and the connection is
// broken: the reply it still owes would be read by the next command.
func (d *Dedicated) Do(ctx context.Context, payload []byte, handle func(m resp.Msg)) error {
	return d.DoN(ctx, payload, 1, func(_ int, m resp.Msg) { handle(m) })
}
