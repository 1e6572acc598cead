package respire

import (
	"context"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// A Client sits on one backend, as net/http's Client sits on a
// RoundTripper: what it connects to, chosen once at NewClient and never
// asked about again. The layers above it (interceptors, the tracer, the
// client-side cache, the typed surface) are the same for all three.
//
//   - singleBackend: one server: the multiplexed connections (c.mux) and
//     the blocking pool (c.blocking). A command's path: exec (command.go)
//     → execPlain → singleBackend.exec → execSingle → transport.Mux.Do
//     (internal/transport/mux.go) → conn (conn.go, direct.go).
//   - sentinelBackend: a single server whose address Sentinel gives
//     (sentinel.go): writes wait while a failover is under way, reads may
//     go to replicas (internal/topology/replicas.go), then as on one
//     server.
//   - clusterBackend: the slot map (internal/topology): exec → execPlain →
//     clusterBackend.exec → execClusterCmd → execCluster (cluster.go:
//     routing, redirects, retries) → the node's transport.Mux.Do.
type backend interface {
	// exec sends x (its arguments complete), decoded by dec, and waits
	// for its reply: exec's contract (command.go).
	exec(ctx context.Context, x *cmd, dec decoder) error
	// send sends x, sealed, for Do: on error the transport owns x, and
	// the error is not yet wrapped with the command's name.
	send(ctx context.Context, x *cmd) error
	// batch sends the commands of b (cmds, futs, taken from it), sets
	// their futures and gives the lists back: the end of Batch.Exec.
	batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error
	// hold lends a connection for a transaction or a callback; see
	// Client.hold.
	hold(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error)
	// connect establishes the connections (Connect); close closes them
	// (Client.Close, last); closeWatch stops what watches the topology
	// (Client.Close, first).
	connect(ctx context.Context) error
	close() error
	closeWatch()
	// stats sums the transport's counters; serverInfo describes a server
	// the client connected to, nil before any.
	stats() Stats
	serverInfo() *transport.ConnInfo
	// addr names the server for tracers (Client.Addr); eachPool calls f
	// with every multiplexer and blocking pool (Client.PoolStats).
	addr() string
	eachPool(f func(*transport.Mux, *transport.BlockingPool))
	// sharded reports that keys are spread over slots on several nodes (a
	// cluster): a transaction's or a Watch's keys must share a slot, a
	// scan goes shard by shard, SELECT is refused.
	sharded() bool
	// sentinelPrimary is the address of the primary Sentinel names now;
	// "" on other backends (Client.SentinelMaster).
	sentinelPrimary() string
}

func (s singleBackend) sentinelPrimary() string   { return "" }
func (s sentinelBackend) sentinelPrimary() string { return s.sc.w.Master() }
func (s clusterBackend) sentinelPrimary() string  { return "" }

func (s singleBackend) sharded() bool   { return false }
func (s sentinelBackend) sharded() bool { return false }
func (s clusterBackend) sharded() bool  { return true }

func (s singleBackend) addr() string { return s.c.singleAddr() }
func (s singleBackend) eachPool(f func(*transport.Mux, *transport.BlockingPool)) {
	f(s.c.mux, s.c.blocking)
}

func (s sentinelBackend) addr() string { return s.c.singleAddr() }
func (s sentinelBackend) eachPool(f func(*transport.Mux, *transport.BlockingPool)) {
	f(s.c.mux, s.c.blocking)
}

func (s clusterBackend) addr() string { return s.c.cl.Seed() }
func (s clusterBackend) eachPool(f func(*transport.Mux, *transport.BlockingPool)) {
	for _, n := range s.c.cl.Nodes() {
		f(n.Mux, n.Pool)
	}
}

func (s singleBackend) connect(ctx context.Context) error { return s.c.mux.Connect(ctx) }

func (s singleBackend) close() error {
	if s.c.redir != nil {
		s.c.redir.close()
	}
	s.c.blocking.Close()
	return s.c.mux.Close()
}

func (s singleBackend) closeWatch()                     {}
func (s singleBackend) stats() Stats                    { return muxStats(s.c.mux) }
func (s singleBackend) serverInfo() *transport.ConnInfo { return s.c.mux.ServerInfo() }

func (s sentinelBackend) connect(ctx context.Context) error {
	if _, err := s.sc.w.WaitMaster(ctx); err != nil {
		return err
	}
	if err := s.c.mux.Connect(ctx); err != nil {
		return err
	}
	if s.sc.reads != nil {
		s.sc.reads.Connect(ctx)
	}
	return nil
}

func (s sentinelBackend) close() error                    { return singleBackend{s.c}.close() }
func (s sentinelBackend) closeWatch()                     { s.sc.close() }
func (s sentinelBackend) stats() Stats                    { return muxStats(s.c.mux) }
func (s sentinelBackend) serverInfo() *transport.ConnInfo { return s.c.mux.ServerInfo() }

func (s clusterBackend) connect(ctx context.Context) error {
	if err := s.c.cl.Connect(ctx); err != nil {
		return err
	}
	s.c.cl.ConnectZones(ctx)
	return nil
}

func (s clusterBackend) close() error {
	s.c.cl.Close()
	return nil
}

func (s clusterBackend) closeWatch()                     {}
func (s clusterBackend) stats() Stats                    { return s.c.clusterStats() }
func (s clusterBackend) serverInfo() *transport.ConnInfo { return s.c.clusterServerInfo() }

// singleBackend is one server.
type singleBackend struct{ c *Client }

func (s singleBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	return s.c.execSingle(ctx, x, dec)
}

func (s singleBackend) send(ctx context.Context, x *cmd) error { return s.c.sendSingle(ctx, x) }

func (s singleBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	return b.execSingle(ctx, cmds, futs)
}

func (s singleBackend) hold(ctx context.Context, _ uint16, _ bool, _ *topology.Node) (*transport.Held, error) {
	if t := s.c.redir.primary(); t != nil {
		// A replica redirected a write to its primary: transactions
		// and held connections go there (redirect.go).
		return t.pool.Hold(ctx)
	}
	return s.c.blocking.Hold(ctx)
}

// sentinelBackend is the primary that Sentinel names, and its replicas.
type sentinelBackend struct {
	c  *Client
	sc *sentinelClient
}

func (s sentinelBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	if done, err := s.c.execSentinel(ctx, x, dec); done {
		return err
	}
	return s.c.execSingle(ctx, x, dec)
}

func (s sentinelBackend) send(ctx context.Context, x *cmd) error {
	gate := s.sc.discovered
	if x.info.flags&flagReadonly == 0 {
		gate = s.sc.gate
	}
	if err := gate(ctx); err != nil {
		x.Recycle()
		return err
	}
	return s.c.sendSingle(ctx, x)
}

func (s sentinelBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	if err := s.sc.gate(ctx); err != nil {
		err = s.c.wrapErr(ctx, "batch", err)
		for i, x := range cmds {
			futs[i].settle(nil, err)
			x.Recycle()
		}
		b.recycleLists(cmds, futs)
		return err
	}
	return b.execSingle(ctx, cmds, futs)
}

func (s sentinelBackend) hold(ctx context.Context, _ uint16, _ bool, _ *topology.Node) (*transport.Held, error) {
	if err := s.sc.gate(ctx); err != nil {
		return nil, err
	}
	return s.c.blocking.Hold(ctx)
}

// clusterBackend is a cluster's slot map.
type clusterBackend struct{ c *Client }

func (s clusterBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	return s.c.execClusterCmd(ctx, x, dec)
}

func (s clusterBackend) send(ctx context.Context, x *cmd) error { return s.c.execCluster(ctx, x) }

func (s clusterBackend) batch(ctx context.Context, b *Batch, cmds []*cmd, futs []settler) error {
	return b.execCluster(ctx, cmds, futs)
}

func (s clusterBackend) hold(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error) {
	return s.c.holdCluster(ctx, slot, keyed, at)
}
