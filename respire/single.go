package respire

import (
	"context"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// The single-server backend. A GET's path: Client.Get (zz_commands.go) →
// execStr (methods.go) → Client.exec (command.go: interceptors, tracing)
// → singleBackend.exec → singleBackend.do, here → transport.Mux.Do
// (internal/transport/mux.go). A Valkey replica's REDIRECT is followed in
// do, to the primary that redirect.go keeps connections to.

// singleBackend is one server: its multiplexed connections, its blocking
// pool, and the primary a REDIRECT named.
type singleBackend struct {
	c        *Client
	mux      *transport.Mux
	blocking *transport.BlockingPool
	redir    *replicaRedirect // nil with Options.NoFollowRedirect
	// first names the server a command goes to first, for a
	// RedirectError: Options.Addr, or the primary Sentinel names.
	first func() string
}

// newSingleBackend makes the connections of a client of one server; cfg
// is complete (Redirect set unless Options.NoFollowRedirect).
func newSingleBackend(c *Client, opts *Options, cfg transport.Config) *singleBackend {
	s := &singleBackend{c: c, first: c.singleAddr}
	if cfg.Redirect {
		s.redir = newReplicaRedirect(opts, cfg)
	}
	s.mux = transport.NewMux(cfg)
	s.blocking = transport.NewBlockingPool(cfg, opts.BlockingPoolSize)
	return s
}

// exec is backend.exec: blocking commands on the pool, others on the
// multiplexed connections.
func (s *singleBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	c := s.c
	if x.info.flags&flagBlocking != 0 {
		err := s.execBlocking(ctx, x, dec)
		if err == nil && c.cache != nil {
			c.afterWrite(ctx, x)
		}
		return err
	}
	x.dec = dec
	x.sealRefs()
	if !x.keyed && c.conns > 1 {
		x.Route = c.rr.Add(1)
	}
	if x.info.flags&flagReadonly != 0 {
		x.Retries = c.retries
		x.ReadOnly = true
	}
	name := x.info.name
	if err := s.do(ctx, x, false); err != nil {
		return c.wrapErr(ctx, name, err)
	}
	return c.replied(ctx, x)
}

// execBlocking is exec for commands the spec flags as blocking: they run on
// a connection of the blocking pool, never on the multiplexed ones. The
// contract is exec's.
func (s *singleBackend) execBlocking(ctx context.Context, x *cmd, dec decoder) error {
	x.dec = dec
	x.seal()
	name := x.info.name
	if err := s.do(ctx, x, true); err != nil {
		return s.c.wrapErr(ctx, name, err)
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return err
	}
	return nil
}

// send is backend.send: the blocking pool or the multiplexed connections,
// as the command's flags say.
func (s *singleBackend) send(ctx context.Context, x *cmd) error {
	return s.do(ctx, x, x.info.flags&flagBlocking != 0)
}

// do sends x (the multiplexed connections, or the blocking pool when
// blocking) and follows its REDIRECTs: Mux.Do's contract (on error x is
// the transport's).
func (s *singleBackend) do(ctx context.Context, x *cmd, blocking bool) error {
	r := s.redir
	if r == nil {
		if blocking {
			return s.blocking.Do(ctx, &x.Request)
		}
		return s.mux.Do(ctx, &x.Request)
	}
	// addr is where x goes and from where it went before, "" for the
	// client's own server (named only in errors: looked up then).
	from, addr := "", ""
	mux, pool := s.mux, s.blocking
	if t := r.first(x); t != nil {
		addr, mux, pool = t.addr, t.mux, t.pool
	}
	for hops := 0; ; hops++ {
		var err error
		if blocking {
			err = pool.Do(ctx, &x.Request)
		} else {
			err = mux.Do(ctx, &x.Request)
		}
		if err != nil {
			if addr != "" {
				return &RedirectError{From: s.orOwn(from), To: addr, Hops: hops, Err: err}
			}
			return err
		}
		to, ok := replicaRedirectOf(x)
		if !ok {
			return nil
		}
		if hops >= maxReplicaRedirects {
			x.replyErr = &RedirectError{From: s.orOwn(addr), To: to, Hops: hops + 1, Err: x.replyErr}
			return nil
		}
		t, err := r.target(to)
		if err != nil {
			x.Recycle()
			return err
		}
		x.ClearReply()
		from, addr, mux, pool = addr, to, t.mux, t.pool
	}
}

// orOwn returns addr, or the client's own server's address for "".
func (s *singleBackend) orOwn(addr string) string {
	if addr == "" {
		return s.first()
	}
	return addr
}

// batch is backend.batch: the commands in one write on the multiplexed
// connections (or on a held one when a command blocks).
func (s *singleBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	var err error
	b.lists.reqs, err = s.execBatch(ctx, cmds, b.lists.reqs)
	if err != nil {
		for _, f := range futs {
			f.settle(nil, err)
		}
		// The transport owns the commands now (a late reply may still be
		// decoded into them): the slices that point at them are dropped,
		// not pooled.
		b.lists = nil
		return err
	}
	for i, x := range cmds {
		futs[i].settle(&x.res, withCommand(x.info, x.replyErr))
		s.c.release(x)
	}
	b.recycleLists(cmds, futs)
	return nil
}

// execBatch sends xs (their decoders set) in one write and waits for all
// replies; per-command outcomes are left in x.res and x.replyErr. On error
// the transport owns xs. reqs is scratch space for the request list, given
// back (perhaps grown) for reuse.
// Writes among them drop their keys from the client-side cache before the
// results are handed out.
func (s *singleBackend) execBatch(ctx context.Context, xs []*cmd, reqs []*transport.Request) ([]*transport.Request, error) {
	c := s.c
	for _, x := range xs {
		if x.info.flags&flagBlocking != 0 {
			return reqs, s.execBatchHeld(ctx, xs)
		}
	}
	reqs = reqs[:0]
	for _, x := range xs {
		x.sealRefs()
		if x.info.flags&flagReadonly != 0 {
			x.Retries = c.retries
		}
		reqs = append(reqs, &x.Request)
	}
	mux := s.mux
	if s.redir != nil {
		mux = s.batchMux(xs)
	}
	if err := mux.DoMulti(ctx, reqs); err != nil {
		return reqs, c.wrapErr(ctx, "batch", err)
	}
	if s.redir != nil {
		if err := s.followBatch(ctx, xs, s.first()); err != nil {
			return reqs, c.wrapErr(ctx, "batch", err)
		}
	}
	if c.cache != nil {
		c.afterWrites(ctx, xs)
	}
	return reqs, nil
}

// execBatchHeld runs a batch that holds a blocking command on a connection
// of the blocking pool, so that it never delays the multiplexed one. On
// error the commands are dropped, not recycled.
func (s *singleBackend) execBatchHeld(ctx context.Context, xs []*cmd) error {
	c := s.c
	h, err := s.blocking.Hold(ctx)
	if err != nil {
		return c.wrapErr(ctx, "batch", err)
	}
	defer h.Release()
	if err := doHeld(ctx, h, xs); err != nil {
		return c.wrapErr(ctx, "batch", err)
	}
	if c.cache != nil {
		c.afterWrites(ctx, xs)
	}
	return nil
}

// hold is backend.hold: a connection of the blocking pool, or of the
// primary a replica's REDIRECT named.
func (s *singleBackend) hold(ctx context.Context, _ uint16, _ bool, _ *topology.Node) (*transport.Held, error) {
	if t := s.redir.primary(); t != nil {
		// A replica redirected a write to its primary: transactions
		// and held connections go there (redirect.go).
		return t.pool.Hold(ctx)
	}
	return s.blocking.Hold(ctx)
}

func (s *singleBackend) connect(ctx context.Context) error { return s.mux.Connect(ctx) }

func (s *singleBackend) close() error {
	if s.redir != nil {
		s.redir.close()
	}
	s.blocking.Close()
	return s.mux.Close()
}

func (s *singleBackend) closeWatch()                     {}
func (s *singleBackend) serverInfo() *transport.ConnInfo { return s.mux.ServerInfo() }
func (s *singleBackend) addr() string                    { return s.c.singleAddr() }
func (s *singleBackend) sentinelPrimary() string         { return "" }

func (s *singleBackend) eachPool(f func(*transport.Mux, *transport.BlockingPool)) {
	f(s.mux, s.blocking)
}

// One server has one keyspace: nothing to check or split.
func (s *singleBackend) txSlot([]*cmd) (uint16, bool, error)                 { return 0, false, nil }
func (s *singleBackend) watchSlot([]string) (uint16, bool, error)            { return 0, false, nil }
func (s *singleBackend) refuse(args []any) error                             { return refuseConnState(args, false, false) }
func (s *singleBackend) doKeys(*cmd, *cmdInfo, []any)                        {}
func (s *singleBackend) shardSet(*transport.Subscription) *topology.ShardSet { return nil }

func (s *singleBackend) txRedirected(context.Context, redirect, int) (*topology.Node, bool) {
	return nil, false
}

// scan is backend.scan: one part, whose pages are ordinary commands.
func (s *singleBackend) scan(ctx context.Context, sc *scanSpec, _ string, _ bool) ([]pager, error) {
	c := s.c
	return []pager{func(cursor int64) (any, error) {
		x := c.newCmd(sc.info)
		sc.args(x, cursor)
		return execAny[any](ctx, c, x, sc.dec)
	}}, nil
}

// doHeld writes xs, sealed here, in one write on h and hands each its reply.
func doHeld(ctx context.Context, h *transport.Held, xs []*cmd) error {
	size := 0
	for _, x := range xs {
		x.seal()
		size += len(x.buf) - x.start
	}
	payload := make([]byte, 0, size)
	for _, x := range xs {
		payload = append(payload, x.buf[x.start:]...)
	}
	return h.Do(ctx, payload, len(xs), func(i int, m resp.Msg) { xs[i].HandleReply(m) })
}
