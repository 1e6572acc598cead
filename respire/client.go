package respire

import (
	"context"
	"sync/atomic"

	"github.com/respire-go/respire/transport"
)

// Client is a Redis or Valkey client for one server. It multiplexes all
// goroutines over Options.Connections connections, pipelining their
// commands automatically. It is safe for concurrent use; create one and
// share it.
type Client struct {
	opts     Options
	mux      *transport.Mux
	blocking *transport.BlockingPool
	hub      *transport.PubSub
	cache    *clientCache // nil unless Options.ClientCache
	conns    uint32
	retries  uint8 // Options.RetryReads, for read-only commands
	rr       atomic.Uint32
	srvBit   atomic.Pointer[serverBitCache]
}

// NewClient validates opts and returns a client that connects on first use.
// Use Connect to find a wrong address or password at once.
func NewClient(opts Options) (*Client, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	cfg := opts.transportConfig()
	c := &Client{opts: opts, mux: transport.NewMux(cfg)}
	c.blocking = transport.NewBlockingPool(cfg, opts.BlockingPoolSize)
	c.hub = transport.NewPubSub(cfg)
	c.conns = uint32(c.mux.Config().Connections)
	c.retries = uint8(min(opts.RetryReads, 255))
	c.cache = newClientCache(&opts, cfg)
	return c, nil
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
	if err := c.mux.Connect(ctx); err != nil {
		c.Close()
		return nil, c.wrapErr("connect", err)
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
	c.closeCache()
	c.hub.Close()
	c.blocking.Close()
	return c.mux.Close()
}

// Stats returns transport counters (socket reads, bytes, replies), for
// measuring how many replies each read carries.
func (c *Client) Stats() transport.Stats { return c.mux.Stats() }
