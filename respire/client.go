package respire

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// Client is a Redis or Valkey client for one server or a cluster
// (Options.Cluster). It multiplexes all goroutines over
// Options.Connections connections per server, pipelining their commands
// automatically. It is safe for concurrent use; create one and share it.
type Client struct {
	opts    Options
	be      backend // what the client runs commands on, and its connections (backend.go)
	closed  atomic.Bool
	hub     *transport.PubSub
	cache   *clientCache // nil unless Options.ClientCache
	conns   uint32       // multiplexed connections per server
	retries uint8        // Options.retryReads(), for read-only commands
	rr      atomic.Uint32
	srvBit  atomic.Pointer[serverBitCache]
	trace   *tracing    // nil without Options.Tracer and Logger
	icmd    CommandFunc // Options.Interceptors around runCommand; nil without
	ibatch  BatchFunc   // Options.Interceptors around runBatch; nil without
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
		k := newClusterBackend(c, &opts, cfg)
		c.be = k
		c.hub = k.newHub(cfg)
		c.conns = uint32(max(opts.Connections, 1))
		c.cache = newClusterCache(&opts, cfg, k)
		c.observeCache()
		return c, nil
	}
	var sc *sentinelClient
	if opts.Sentinel != nil {
		sc = newSentinelClient(c, &opts, &cfg)
	}
	cfg.Redirect = !opts.NoFollowRedirect
	s := newSingleBackend(c, &opts, cfg)
	c.be = s
	if sc != nil {
		sc.single = s
		s.first = sc.w.Master
		c.be = &sentinelBackend{s, sc}
	}
	c.hub = transport.NewPubSub(cfg)
	c.conns = uint32(s.mux.Config().Connections)
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
	c.hub.Close()
	return c.be.close()
}

func (c *Client) dialTimeout() time.Duration {
	if c.opts.DialTimeout > 0 {
		return c.opts.DialTimeout
	}
	return 5 * time.Second
}

// serverInfo describes a server of the client (on a cluster, the first
// node that connected: the nodes of one cluster run one server version).
func (c *Client) serverInfo() *transport.ConnInfo { return c.be.serverInfo() }
