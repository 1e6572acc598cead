package respire

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/respire-go/respire/internal/transport"
)

// tracing holds Options.Tracer and Options.Logger. A client has none (nil)
// when both options are unset, so that the hot paths test one pointer.
// Each field is the tracer, with a no-op for the other half of a Start/End
// pair that was set alone, or nil when that kind of event is not traced.
type tracing struct {
	cmd   *Tracer
	batch *Tracer
	conn  *Tracer
	recon *Tracer
	gap   *Tracer
	cache *Tracer
	log   *slog.Logger
	seen  sync.Map // addresses connected to once, for the logger
}

// filled returns a copy of tr whose Start and End functions are all set:
// the user's, or no-ops.
func filled(tr *Tracer) *Tracer {
	f := *tr
	if f.CommandStart == nil {
		f.CommandStart = func(ctx context.Context, _ *Client, _ TraceCommandStartData) context.Context { return ctx }
	}
	if f.CommandEnd == nil {
		f.CommandEnd = func(context.Context, *Client, TraceCommandEndData) {}
	}
	if f.BatchStart == nil {
		f.BatchStart = func(ctx context.Context, _ *Client, _ TraceBatchStartData) context.Context { return ctx }
	}
	if f.BatchEnd == nil {
		f.BatchEnd = func(context.Context, *Client, TraceBatchEndData) {}
	}
	if f.ConnectStart == nil {
		f.ConnectStart = func(ctx context.Context, _ *Client, _ TraceConnectStartData) context.Context { return ctx }
	}
	if f.ConnectEnd == nil {
		f.ConnectEnd = func(context.Context, *Client, TraceConnectEndData) {}
	}
	if f.ReconnectStart == nil {
		f.ReconnectStart = func(ctx context.Context, _ *Client, _ TraceReconnectStartData) context.Context { return ctx }
	}
	if f.ReconnectEnd == nil {
		f.ReconnectEnd = func(context.Context, *Client, TraceReconnectEndData) {}
	}
	return &f
}

// tracerIf returns t when on, else nil.
func tracerIf(t *Tracer, on bool) *Tracer {
	if on {
		return t
	}
	return nil
}

// observe sets c.trace from the options and hooks the transport's events
// in cfg up to it.
func (c *Client) observe(cfg *transport.Config) {
	o := &c.opts
	if o.Tracer == nil && o.Logger == nil {
		return
	}
	t := &tracing{log: o.Logger}
	if tr := o.Tracer; tr != nil {
		f := filled(tr)
		t.cmd = tracerIf(f, tr.CommandStart != nil || tr.CommandEnd != nil)
		t.batch = tracerIf(f, tr.BatchStart != nil || tr.BatchEnd != nil)
		t.conn = tracerIf(f, tr.ConnectStart != nil || tr.ConnectEnd != nil)
		t.recon = tracerIf(f, tr.ReconnectStart != nil || tr.ReconnectEnd != nil)
		t.gap = tracerIf(f, tr.PubSubGap != nil)
		t.cache = tracerIf(f, tr.CacheInvalidate != nil)
	}
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
// cache to the Tracer's CacheInvalidate. It runs in NewClient, before the cache's
// connections exist, so no reader sees the functions change.
func (c *Client) observeCache() {
	if c.cache == nil || c.trace == nil || c.trace.cache == nil {
		return
	}
	t := c.trace.cache
	c.cache.src.observe(func(key []byte) {
		t.CacheInvalidate(context.Background(), c, TraceCacheInvalidateData{Key: key})
	}, func() {
		t.CacheInvalidate(context.Background(), c, TraceCacheInvalidateData{Flush: true})
	})
}

// execTraced is exec with the Tracer's command functions told before and after.
func (c *Client) execTraced(ctx context.Context, x *cmd, dec decoder) error {
	t := c.trace.cmd
	ctx = t.CommandStart(ctx, c, commandStart(x, x.info.name))
	err := c.execPlain(ctx, x, dec)
	t.CommandEnd(ctx, c, TraceCommandEndData{Err: err})
	return err
}

// doTraced is doBuilt with the Tracer's command functions told before and after; word
// is the command's first word as given.
func (c *Client) doTraced(ctx context.Context, x *cmd, word string) (Reply, error) {
	t := c.trace.cmd
	name := x.info.name
	if name == "" {
		name = strings.ToUpper(word)
	}
	ctx = t.CommandStart(ctx, c, commandStart(x, name))
	r, err := c.doBuilt(ctx, x, word)
	t.CommandEnd(ctx, c, TraceCommandEndData{Err: err})
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

// traceBatchStart tells the Tracer's batch functions, if any, that a batch of
// cmds starts; it returns the tracer, for traceBatchEnd.
func (c *Client) traceBatchStart(ctx context.Context, cmds []*cmd, tx bool) (context.Context, *Tracer) {
	if c.trace == nil || c.trace.batch == nil {
		return ctx, nil
	}
	t := c.trace.batch
	return t.BatchStart(ctx, c, TraceBatchStartData{Len: len(cmds), Tx: tx, Command: sameCommand(cmds)}), t
}

// sameCommand returns the name of cmds when they are all the same command,
// else "".
func sameCommand(cmds []*cmd) string {
	if len(cmds) == 0 {
		return ""
	}
	info := cmds[0].info
	for _, x := range cmds[1:] {
		if x.info != info {
			return ""
		}
	}
	return info.name
}

// traceCachedStart tells the Tracer's command functions, if any, that x, a
// read of Client.Cached that the cache could not serve, goes to the server;
// it returns the tracer, for traceCachedEnd.
func (c *Client) traceCachedStart(ctx context.Context, x *cmd) (context.Context, *Tracer) {
	if c.trace == nil || c.trace.cmd == nil {
		return ctx, nil
	}
	t := c.trace.cmd
	d := commandStart(x, x.info.name)
	d.CacheMiss = true
	return t.CommandStart(ctx, c, d), t
}

// traceCachedEnd ends what traceCachedStart began.
func (c *Client) traceCachedEnd(ctx context.Context, t *Tracer, err error) {
	if t != nil {
		t.CommandEnd(ctx, c, TraceCommandEndData{Err: err})
	}
}

// traceBatchEnd ends what traceBatchStart began.
func (c *Client) traceBatchEnd(ctx context.Context, t *Tracer, err error) {
	if t != nil {
		t.BatchEnd(ctx, c, TraceBatchEndData{Err: err})
	}
}

// execTraced is Batch.Exec with the Tracer's batch functions told before and after.
func (b *Batch) execTraced(ctx context.Context) error {
	c := b.c
	ctx, t := c.traceBatchStart(ctx, b.cmds, false)
	err := b.execNow(ctx)
	c.traceBatchEnd(ctx, t, err)
	return err
}

// onDial is transport.Config.OnDial.
func (c *Client) onDial(addr string) func(transport.ConnInfo, error) {
	t := c.trace
	ctx := context.Background()
	if t.conn != nil {
		ctx = t.conn.ConnectStart(ctx, c, TraceConnectStartData{Addr: addr})
	}
	return func(info transport.ConnInfo, err error) {
		var he *HandshakeError
		d := TraceConnectEndData{Addr: addr, Err: err, Handshake: errors.As(err, &he)}
		if err == nil {
			d.Protocol, d.Server, d.Version = info.Protocol, info.Server, info.Version
		}
		if t.conn != nil {
			t.conn.ConnectEnd(ctx, c, d)
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
		ctx = t.recon.ReconnectStart(ctx, c, TraceReconnectStartData{Addr: addr, Cause: cause})
	}
	if t.log != nil {
		c.logLost(addr, cause)
	}
	return func(attempts int, err error) {
		if t.recon != nil {
			t.recon.ReconnectEnd(ctx, c, TraceReconnectEndData{Addr: addr, Attempts: attempts, Err: err})
		}
		if t.log != nil {
			c.logRestored(addr, attempts, err)
		}
	}
}

// onGap is transport.Config.OnGap.
func (c *Client) onGap(g transport.Gap, opened bool) {
	t := c.trace
	d := TracePubSubGapData{Reason: GapReason(g.Reason), Opened: opened, Since: g.Since, Until: g.Until, Err: g.Err}
	if d.Reason == GapOverflow {
		d.Dropped = 1
	}
	if t.gap != nil {
		t.gap.PubSubGap(context.Background(), c, d)
	}
	if t.log != nil && opened {
		c.logGap(d)
	}
}

// Addr is the address the client was configured with (Options.Addr, with
// its default applied); for a cluster, the first seed. Tracers use it to
// name the server.
func (c *Client) Addr() string { return c.be.addr() }

// DB is the database index that every connection of the client selects
// (Options.DB). Tracers report it as the database (OpenTelemetry's
// db.namespace): commands that the tracer sees run on connections the
// client set up, whose database no caller can change.
func (c *Client) DB() int { return c.opts.DB }

// singleAddr is Addr on one server.
func (c *Client) singleAddr() string {
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
	c.be.eachPool(add)
	if c.hub.Connected() {
		s.PubSub = 1
	}
	if c.cache != nil {
		s.Cache = c.cache.src.open()
	}
	return s
}
