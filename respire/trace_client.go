package respire

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/respire-go/respire/internal/transport"
)

// tracing holds the tracer interfaces that Options.Tracer implements, and
// Options.Logger. A client has none (nil) when both options are unset, so
// that the hot paths test one pointer.
type tracing struct {
	cmd   CommandTracer
	batch BatchTracer
	conn  ConnectTracer
	recon ReconnectTracer
	gap   PubSubGapTracer
	cache CacheTracer
	log   *slog.Logger
	seen  sync.Map // addresses connected to once, for the logger
}

// checkTracer refuses a Tracer that implements none of the interfaces, so
// that a tracer of the wrong type (a pointer where a value was meant, a
// method with a wrong signature) is not silently ignored.
func checkTracer(t any) error {
	if t == nil {
		return nil
	}
	switch t.(type) {
	case CommandTracer, BatchTracer, ConnectTracer, ReconnectTracer, PubSubGapTracer, CacheTracer:
		return nil
	}
	return optErr("Tracer", "%T implements none of CommandTracer, BatchTracer, ConnectTracer, ReconnectTracer, PubSubGapTracer and CacheTracer", t)
}

// observe sets c.trace from the options and hooks the transport's events
// in cfg up to it.
func (c *Client) observe(cfg *transport.Config) {
	o := &c.opts
	if o.Tracer == nil && o.Logger == nil {
		return
	}
	t := &tracing{log: o.Logger}
	t.cmd, _ = o.Tracer.(CommandTracer)
	t.batch, _ = o.Tracer.(BatchTracer)
	t.conn, _ = o.Tracer.(ConnectTracer)
	t.recon, _ = o.Tracer.(ReconnectTracer)
	t.gap, _ = o.Tracer.(PubSubGapTracer)
	t.cache, _ = o.Tracer.(CacheTracer)
	c.trace = t
	if t.conn != nil || t.log != nil {
		cfg.OnDial = c.onDial
	}
	if t.recon != nil || t.log != nil {
		cfg.OnConnLost = c.onConnLost
	}
	if t.gap != nil || t.log != nil {
		cfg.OnGap = c.onGap
	}
}

// observeCache reports the server's invalidations of the client-side
// cache to the CacheTracer. It runs in NewClient, before the cache's
// connections exist, so no reader sees the functions change.
func (c *Client) observeCache() {
	if c.cache == nil || c.trace == nil || c.trace.cache == nil {
		return
	}
	tr := c.cache.mux.Config().Tracking
	inv, flush := tr.Invalidate, tr.Flush
	t := c.trace.cache
	tr.Invalidate = func(key []byte) {
		inv(key)
		t.TraceCacheInvalidate(context.Background(), c, TraceCacheInvalidateData{Key: key})
	}
	tr.Flush = func() {
		flush()
		t.TraceCacheInvalidate(context.Background(), c, TraceCacheInvalidateData{Flush: true})
	}
}

// execTraced is exec with the CommandTracer told before and after.
func (c *Client) execTraced(ctx context.Context, x *cmd, dec decoder) error {
	t := c.trace.cmd
	ctx = t.TraceCommandStart(ctx, c, commandStart(x, x.info.name))
	err := c.execPlain(ctx, x, dec)
	t.TraceCommandEnd(ctx, c, TraceCommandEndData{Err: err})
	return err
}

// doTraced is doBuilt with the CommandTracer told before and after; word
// is the command's first word as given.
func (c *Client) doTraced(ctx context.Context, x *cmd, word string) (Reply, error) {
	t := c.trace.cmd
	name := x.info.name
	if name == "" {
		name = strings.ToUpper(word)
	}
	ctx = t.TraceCommandStart(ctx, c, commandStart(x, name))
	r, err := c.doBuilt(ctx, x, word)
	t.TraceCommandEnd(ctx, c, TraceCommandEndData{Err: err})
	return r, err
}

func commandStart(x *cmd, name string) TraceCommandStartData {
	x.flatten() // Args reads the arguments from the buffer
	return TraceCommandStartData{
		Name:     name,
		Args:     CommandArgs{enc: x.buf[hdrRoom:], n: x.nargs},
		ReadOnly: x.info.flags&flagReadonly != 0,
		Blocking: x.info.flags&flagBlocking != 0,
	}
}

// traceBatchStart tells the BatchTracer, if any, that a batch of n
// commands starts; it returns the tracer, for traceBatchEnd.
func (c *Client) traceBatchStart(ctx context.Context, n int, tx bool) (context.Context, BatchTracer) {
	if c.trace == nil || c.trace.batch == nil {
		return ctx, nil
	}
	t := c.trace.batch
	return t.TraceBatchStart(ctx, c, TraceBatchStartData{Len: n, Tx: tx}), t
}

// traceBatchEnd ends what traceBatchStart began.
func (c *Client) traceBatchEnd(ctx context.Context, t BatchTracer, err error) {
	if t != nil {
		t.TraceBatchEnd(ctx, c, TraceBatchEndData{Err: err})
	}
}

// execTraced is Batch.Exec with the BatchTracer told before and after.
func (b *Batch) execTraced(ctx context.Context) error {
	c := b.c
	ctx, t := c.traceBatchStart(ctx, len(b.cmds), false)
	err := b.execNow(ctx)
	c.traceBatchEnd(ctx, t, err)
	return err
}

// onDial is transport.Config.OnDial.
func (c *Client) onDial(addr string) func(transport.ConnInfo, error) {
	t := c.trace
	ctx := context.Background()
	if t.conn != nil {
		ctx = t.conn.TraceConnectStart(ctx, c, TraceConnectStartData{Addr: addr})
	}
	return func(info transport.ConnInfo, err error) {
		var he *HandshakeError
		d := TraceConnectEndData{Addr: addr, Err: err, Handshake: errors.As(err, &he)}
		if err == nil {
			d.Protocol, d.Server, d.Version = info.Protocol, info.Server, info.Version
		}
		if t.conn != nil {
			t.conn.TraceConnectEnd(ctx, c, d)
		}
		if t.log != nil {
			c.logConnect(d)
		}
	}
}

// onConnLost is transport.Config.OnConnLost.
func (c *Client) onConnLost(addr string, cause error) func(int, error) {
	t := c.trace
	ctx := context.Background()
	if t.recon != nil {
		ctx = t.recon.TraceReconnectStart(ctx, c, TraceReconnectStartData{Addr: addr, Cause: cause})
	}
	if t.log != nil {
		c.logLost(addr, cause)
	}
	return func(attempts int, err error) {
		if t.recon != nil {
			t.recon.TraceReconnectEnd(ctx, c, TraceReconnectEndData{Addr: addr, Attempts: attempts, Err: err})
		}
		if t.log != nil {
			c.logRestored(addr, attempts, err)
		}
	}
}

// onGap is transport.Config.OnGap.
func (c *Client) onGap(g transport.Gap, opened bool) {
	t := c.trace
	d := TracePubSubGapData{Reason: g.Reason, Opened: opened, Since: g.Since, Until: g.Until, Err: g.Err}
	if g.Reason == GapOverflow {
		d.Dropped = 1
	}
	if t.gap != nil {
		t.gap.TracePubSubGap(context.Background(), c, d)
	}
	if t.log != nil && opened {
		c.logGap(d)
	}
}

// Addr is the address the client was configured with (Options.Addr, with
// its default applied); for a cluster, the first seed. Tracers use it to
// name the server.
func (c *Client) Addr() string {
	if c.cl != nil {
		return c.cl.Seed()
	}
	if c.opts.Addr == "" {
		return "localhost:6379"
	}
	return c.opts.Addr
}

// PoolStats counts a client's connections, summed over the nodes of a
// cluster.
type PoolStats struct {
	// Multiplexed is the number of established multiplexed connections
	// (Options.Connections per node when all are up).
	Multiplexed int
	// Batch is the number of established batch connections
	// (Options.BatchConnections), opened while batches run concurrently.
	Batch int
	// BlockingIdle and BlockingBusy count the connections of the blocking
	// pool: idle ones kept for reuse, and ones running a blocking
	// command, a transaction or a Watch. BlockingSize is the bound
	// (Options.BlockingPoolSize per node).
	BlockingIdle, BlockingBusy, BlockingSize int
	// PubSub is 1 while the client's subscriber connection is up.
	PubSub int
	// Cache is the number of established connections of the client-side
	// cache (Options.ClientCache).
	Cache int
}

// Open is the number of established connections of every kind.
func (s PoolStats) Open() int {
	return s.Multiplexed + s.Batch + s.BlockingIdle + s.BlockingBusy + s.PubSub + s.Cache
}

// PoolStats returns how many connections the client holds, for metrics.
func (c *Client) PoolStats() PoolStats {
	var s PoolStats
	add := func(m *transport.Mux, p *transport.BlockingPool) {
		if m != nil {
			s.Multiplexed += m.Open()
			s.Batch += m.OpenLanes()
		}
		if p != nil {
			b := p.Stats()
			s.BlockingIdle += b.Idle
			s.BlockingBusy += b.Busy
			s.BlockingSize += b.Size
		}
	}
	if c.cl != nil {
		for _, n := range c.cl.Nodes() {
			add(n.Mux, n.Pool)
		}
	} else {
		add(c.mux, c.blocking)
	}
	if c.hub.Connected() {
		s.PubSub = 1
	}
	if c.cache != nil {
		s.Cache = c.cache.mux.Open()
	}
	return s
}
