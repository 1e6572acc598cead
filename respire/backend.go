package respire

import (
	"context"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// A Client sits on one backend, as net/http's Client sits on a
// RoundTripper: what it connects to, chosen once at NewClient and never
// asked about again. The Client keeps what every deployment has (options,
// the pub/sub hub, the client-side cache, tracing, interceptors); the
// backend holds its connections and topology and carries what differs by
// deployment. The layers above it (interceptors, the tracer, the
// client-side cache, the typed surface) are the same for all three:
//
//   - singleBackend (single.go): one server: its multiplexed connections,
//     its blocking pool, and the primary a Valkey replica's REDIRECT named
//     (redirect.go).
//   - sentinelBackend (sentinel.go): a single server whose address
//     Sentinel gives: writes wait while a failover is under way, reads may
//     go to replicas (internal/topology/replicas.go), then as on one
//     server.
//   - clusterBackend (cluster.go, cluster_batch.go, cluster_fanout.go,
//     iter_cluster.go): the slot map (internal/topology), whose redirect
//     handling is topology.Cluster.Exec and Redirected.
//
// The client-side cache keeps a tracker per server it reads from: one on
// a single server, one per primary on a cluster (cluster_cache.go); it
// is made for the backend at NewClient.
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
	// hold lends a connection for a transaction or a callback: on a
	// cluster, of the node at (an ASK target), else of the slot's primary
	// when keyed, else of any primary.
	hold(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error)
	// txSlot and watchSlot are the slot that a transaction's commands or
	// a Watch's keys must share, and whether they have keys; an
	// *ArgError wrapping ErrCrossSlot when they span slots. One server
	// has one keyspace: no slot.
	txSlot(cmds []*cmd) (uint16, bool, error)
	watchSlot(keys []string) (uint16, bool, error)
	// txRedirected says whether a transaction the server refused for the
	// redirect rd runs again, on the node returned for an ASK (nil: the
	// slot's primary). Only a cluster redirects.
	txRedirected(ctx context.Context, rd redirect, attempt int) (*topology.Node, bool)
	// scan returns the parts a scan with sc goes over, each a source of
	// pages: one server's, or on a cluster each primary's (SCAN) or the
	// primary of key's slot (keyed: HSCAN, SSCAN, ZSCAN).
	scan(ctx context.Context, sc *scanSpec, key string, keyed bool) ([]pager, error)
	// refuse is Do's check for commands that change a shared
	// connection's state; doKeys records the keys of Do's command known
	// to the spec where they route it.
	refuse(args []any) error
	doKeys(x *cmd, info *cmdInfo, args []any)
	// shardSet returns where a subscription's sharded channels go when
	// they are not the hub's (a cluster's per-node hubs), else nil.
	shardSet(sub *transport.Subscription) *topology.ShardSet
	// connect establishes the connections (Connect); close closes them
	// (Client.Close, last); closeWatch stops what watches the topology
	// (Client.Close, first).
	connect(ctx context.Context) error
	close() error
	closeWatch()
	// serverInfo describes a server the client connected to, nil before
	// any.
	serverInfo() *transport.ConnInfo
	// addr names the server for tracers (Client.Addr); eachPool calls f
	// with every multiplexer and blocking pool (Client.PoolStats,
	// Client.Stats).
	addr() string
	eachPool(f func(*transport.Mux, *transport.BlockingPool))
	// sentinelPrimary is the address of the primary Sentinel names now;
	// "" on other backends (Client.SentinelMaster).
	sentinelPrimary() string
}
