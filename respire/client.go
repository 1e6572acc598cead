package respire

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// Client is a Redis or Valkey client for one server or a cluster
// (Options.Cluster). It multiplexes all goroutines over
// Options.Connections connections per server, pipelining their commands
// automatically. It is safe for concurrent use; create one and share it.
type Client struct {
	opts     Options
	mux      *transport.Mux          // nil on a cluster
	blocking *transport.BlockingPool // nil on a cluster
	cl       *topology.Cluster       // nil on a single server
	nodeInfo atomic.Pointer[transport.ConnInfo]
	closed   atomic.Bool
	hub      *transport.PubSub
	shards   *topology.ShardedPubSub // sharded pub/sub on a cluster; nil on a single server
	cache    *clientCache            // nil unless Options.ClientCache
	conns    uint32
	retries  uint8 // Options.retryReads(), for read-only commands
	rr       atomic.Uint32
	srvBit   atomic.Pointer[serverBitCache]
	trace    *tracing         // nil without Options.Tracer and Logger
	sent     *sentinelClient  // nil unless Options.Sentinel
	redir    *replicaRedirect // where REDIRECTs lead (redirect.go); nil on a cluster and with NoFollowRedirect
	be       backend          // what the client runs commands on (backend.go)
	icmd     CommandFunc      // Options.Interceptors around runCommand; nil without
	ibatch   BatchFunc        // Options.Interceptors around runBatch; nil without
}

// NewClient validates opts and returns a client that connects on first use.
// Use Connect to find a wrong address or password at once.
func NewClient(opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	opts.creds = nil
	if opts.Credentials != nil {
		opts.creds = transport.NewCredentials(opts.Credentials)
	}
	cfg := opts.transportConfig()
	c := &Client{opts: opts}
	c.observe(&cfg)
	c.intercept(&cfg)
	c.retries = uint8(min(opts.retryReads(), 255))
	if opts.Cluster != nil {
		c.cl = newCluster(&opts, cfg)
		hubCfg := cfg
		hubCfg.Resolve = c.anyNodeAddr
		c.hub = transport.NewPubSub(hubCfg)
		c.initClusterPubSub(cfg)
		c.conns = uint32(max(opts.Connections, 1))
		c.cache = newClusterCache(&opts, cfg, c.cl)
		c.observeCache()
		c.be = clusterBackend{c}
		return c, nil
	}
	c.be = singleBackend{c}
	if opts.Sentinel != nil {
		c.sent = newSentinelClient(c, &opts, &cfg)
		c.be = sentinelBackend{c, c.sent}
	}
	if !opts.NoFollowRedirect {
		cfg.Redirect = true
		c.redir = newReplicaRedirect(&opts, cfg)
	}
	c.mux = transport.NewMux(cfg)
	c.blocking = transport.NewBlockingPool(cfg, opts.BlockingPoolSize)
	c.hub = transport.NewPubSub(cfg)
	c.conns = uint32(c.mux.Config().Connections)
	c.cache = newClientCache(&opts, cfg)
	c.observeCache()
	return c, nil
}

// Options returns a copy of the Options the client was created with, for
// helpers built on a client (package lock, package aside) to check that it
// has what they need. Changing the copy changes nothing; what its pointers
// lead to (ClientCache, TLSConfig, Tracer, Cluster, ...) is shared with
// the client and must not be changed. Like the Options given, it holds the
// password: keep it out of logs.
func (c *Client) Options() Options {
	o := c.opts
	o.creds = nil
	return o
}

// Connect returns a client whose connections are established and
// handshaken, or the error that prevented it (an unreachable address, a
// TLS failure, a wrong password: a *HandshakeError wrapping the server's
// *Error).
func Connect(ctx context.Context, opts Options) (*Client, error) {
	c, err := NewClient(opts)
	if err != nil {
		return nil, err
	}
	if cerr := c.be.connect(ctx); cerr != nil {
		c.Close()
		return nil, c.wrapErr(ctx, "connect", cerr)
	}
	if err := c.connectCache(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close closes the connections. Commands in flight and later commands fail
// with an error wrapping ErrClosed. Close waits for the client's goroutines
// to end. It is safe to call more than once.
func (c *Client) Close() error {
	c.closed.Store(true)
	c.be.closeWatch()
	c.closeCache()
	c.closeShards()
	c.hub.Close()
	return c.be.close()
}

// anyNodeAddr is the address the pub/sub hub of a cluster client dials:
// any primary (SUBSCRIBE and PUBLISH reach every node of a cluster).
func (c *Client) anyNodeAddr() string {
	ctx, cancel := context.WithTimeout(context.Background(), c.mux0Timeout())
	defer cancel()
	if n, err := c.cl.Any(ctx); err == nil {
		return n.Addr
	}
	return c.cl.Seed()
}

func (c *Client) mux0Timeout() time.Duration {
	if c.opts.DialTimeout > 0 {
		return c.opts.DialTimeout
	}
	return 5 * time.Second
}

// serverInfo describes a server of the client (on a cluster, the first
// node that connected: the nodes of one cluster run one server version).
func (c *Client) serverInfo() *transport.ConnInfo { return c.be.serverInfo() }

// clusterServerInfo is serverInfo on a cluster.
func (c *Client) clusterServerInfo() *transport.ConnInfo {
	if si := c.nodeInfo.Load(); si != nil {
		return si
	}
	for _, n := range c.cl.Nodes() {
		if si := n.Mux.ServerInfo(); si != nil {
			c.nodeInfo.Store(si)
			return si
		}
	}
	return nil
}
