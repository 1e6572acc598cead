package transport

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// ErrPoolExhausted is wrapped by the error of a blocking command, a
// transaction or a held connection that found the blocking pool at its
// bound: every connection it may open busy. The error names the bound.
var ErrPoolExhausted = errors.New("respire: blocking pool exhausted")

// BlockingPool runs commands that may block on the server (BLPOP, XREAD
// BLOCK, WAIT, ...) on dedicated connections, one command per connection at
// a time, so that they never hold up the multiplexed connections and no
// stall detector mistakes a long wait for a dead peer.
//
// The pool grows on demand and shrinks when idle (blocking_grow.go): a
// call takes an idle connection, or dials one with the same Config
// (address, TLS, credentials, protocol, database) as the Mux, as long as
// fewer than Size connections are busy, idle or being dialed; past that it
// fails at once with ErrPoolExhausted, as a blocking command may hold its
// connection for as long as it blocks. Connections idle for
// Config.PoolIdle are closed, but for the PoolKeepIdle used last. A call
// whose context ends while its command is in flight returns at once; its
// connection, which still owes a reply, is closed rather than reused.
type BlockingPool struct {
	cfg    Config
	size   int
	ctx    context.Context
	cancel context.CancelFunc

	mu   sync.Mutex
	idle []*Dedicated // the least recently used first
	busy map[*Dedicated]struct{}
	// claims counts the connections the pool answers for, against size:
	// the idle ones, and one per call that took one, dials one or waits
	// for one.
	claims  int
	dialing int           // dials in flight, at most maxPoolDials
	waiters []*poolWaiter // calls waiting for a dial or a connection, in order
	busyMax int           // the most busy connections since busy was made
	reaper  *time.Timer   // closes connections idle for too long
	reaping bool          // reaper is armed
	everUp  bool          // a dial succeeded once
	closed  bool
}

// Pool sizing. The bound is DefaultBlockingPoolSize unless the process may
// open few files (defaultPoolSize); PoolKeepIdle connections stay open
// however long they are idle.
const (
	// DefaultBlockingPoolSize is the bound of a pool given a size of zero
	// or less, unless a quarter of the process's limit on open files is
	// lower (but not below 32).
	DefaultBlockingPoolSize = 5000
	// PoolKeepIdle is how many idle connections a pool keeps open
	// whatever their idle time.
	PoolKeepIdle = 4
	// DefaultPoolIdle is Config.PoolIdle's default.
	DefaultPoolIdle = time.Minute
	// minDefaultPoolSize is the smallest default bound (the former fixed
	// default).
	minDefaultPoolSize = 32
	// dedicatedBuf is the read buffer a dedicated connection starts with,
	// and the nodes it keeps after its handshake; poolKeepBuf what a
	// connection going idle keeps of both (the reader's initial size).
	dedicatedBuf = 1 << 10
	poolKeepBuf  = 16 << 10
)

// defaultPoolSize is DefaultBlockingPoolSize, or a quarter of the
// process's soft limit on open files when that is lower, so that blocked
// callers alone cannot use up the descriptors the process has (Go raises
// its soft limit to the hard one at start on most systems).
func defaultPoolSize() int {
	n := DefaultBlockingPoolSize
	if lim := openFileLimit(); lim > 0 {
		n = min(n, max(lim/4, minDefaultPoolSize))
	}
	return n
}

// NewBlockingPool returns a pool of at most size connections for cfg, or
// of defaultPoolSize when size is zero or less. It dials nothing until the
// first call.
func NewBlockingPool(cfg Config, size int) *BlockingPool {
	if size <= 0 {
		size = defaultPoolSize()
	}
	cfg = cfg.withDefaults()
	// The pool's connections read no cached keys: no tracking, so their
	// handshake also works on RESP2.
	cfg.Tracking = nil
	p := &BlockingPool{
		cfg:  cfg,
		size: size,
		busy: make(map[*Dedicated]struct{}),
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
// the caller must not touch r again. Errors wrap ErrPoolExhausted at once
// when Size connections are taken, the context's error when it ended
// during the call (waiting for a connection included), ErrClosed after
// Close, ErrUnavailable when no connection could be dialed, and a
// *ConnError when the connection broke.
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

	d, err := p.get(ctx, cctx)
	if err != nil {
		return NotSent(err)
	}
	err = d.Do(cctx, r.flat(), r.handler.HandleReply)
	p.put(d)
	if err != nil && context.Cause(cctx) == ErrClosed {
		return ErrClosed
	}
	return err
}

// exhausted is the error of a call that found Size connections taken.
func (p *BlockingPool) exhausted() error {
	return fmt.Errorf("%w: all %d connections to %s busy (the bound, Options.BlockingPoolSize)",
		ErrPoolExhausted, p.size, p.cfg.Addr)
}

// put takes a connection back after a call: idle, or to a waiting call, if
// it is healthy; closed otherwise.
func (p *BlockingPool) put(d *Dedicated) { p.putUsed(d, time.Time{}) }

// putUsed is put for a connection last used at used, or now when used is
// zero: read under the lock, so that the idle list is in that order.
func (p *BlockingPool) putUsed(d *Dedicated, used time.Time) {
	healthy := !d.Broken() && !p.stale(d)
	if healthy {
		// An idle connection keeps no memory a large reply made it grow.
		d.rd.Shrink(poolKeepBuf)
	}
	p.mu.Lock()
	delete(p.busy, d)
	if !healthy {
		p.claims--
		p.mu.Unlock()
		d.Close()
		return
	}
	if used.IsZero() {
		used = time.Now()
	}
	d.lastUsed = used
	p.giveLocked(d)
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
		p.putUsed(d, d.lastUsed)
	}
	return errors.Join(errs...)
}

// discard closes a connection a call took, giving up its claim.
func (p *BlockingPool) discard(d *Dedicated) {
	p.mu.Lock()
	delete(p.busy, d)
	p.claims--
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
	p.claims -= len(idle)
	if p.reaper != nil {
		p.reaper.Stop()
	}
	p.mu.Unlock()
	// Busy connections are closed by their callers, and waiting calls
	// give up, which the cancel wakes.
	p.cancel()
	for _, d := range idle {
		d.Close()
	}
	return nil
}

// BlockingStats describes the pool's connections.
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
	cfg      *Config
	nc       net.Conn
	rd       *resp.Reader
	info     ConnInfo
	broken   bool
	lastUsed time.Time // when a call last gave it back to its pool
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
	// A blocked caller's reply is most often small: the buffer starts
	// small, and grows for a larger one (to poolKeepBuf at once).
	rd.Shrink(dedicatedBuf)
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
