package transport

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Config describes how to reach one server node and how to run its
// connections. The respire package fills it from its public Options; every
// field has been defaulted there, but Mux applies the same defaults to zero
// values so that the package can be used alone.
type Config struct {
	// Network is "tcp" or "unix".
	Network string
	// Addr is host:port for tcp, a path for unix.
	Addr string
	// Resolve, when set, gives the address to dial each time a connection
	// is opened, instead of Addr: for a connection that follows a topology
	// (a cluster node that may fail, a Sentinel-watched primary).
	Resolve func() string
	// TLS, when set, wraps connections in TLS. Its ServerName defaults to
	// the host of Addr so the certificate is verified.
	TLS *tls.Config

	Username   string
	Password   string
	ClientName string
	DB         int
	// Protocol is 2, 3, or 0 for RESP3 with a fallback to RESP2 when HELLO
	// is refused.
	Protocol int
	// Credentials, when set, gives the username and password of every
	// handshake instead of Username and Password, and re-authenticates the
	// live connections on Rotate (credentials.go). Configs copied from one
	// another share it.
	Credentials *Credentials
	// Dialer, when set, opens the stream of every connection (multiplexed,
	// batch lanes, blocking pool, pub/sub, dedicated) to Addr, or to what
	// Resolve gives, instead of a net.Dialer; TLS, when set, wraps what it
	// returns. Its context carries the DialTimeout.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// Setup, when set, runs at the end of every handshake, after its own
	// steps succeeded and before the connection carries any request, with
	// the new connection (setup.go). An error fails the dial with a
	// *HandshakeError of step StepSetup.
	Setup func(ctx context.Context, c *SetupConn) error
	// LibName, when set, and LibVersion are sent with CLIENT SETINFO in
	// the handshake, in the same write as HELLO; a server that does not
	// know the command (before Redis 7.2) answers an error, which is
	// ignored.
	LibName, LibVersion string

	// Connections is the number of multiplexed connections; default 1.
	Connections int
	// BatchLanes is the most extra connections the Mux opens for batches
	// (DoMulti) that find their connection busy (see lanes.go); 0 means
	// none. Ignored with Tracking.
	BatchLanes int
	// LaneIdle is how long a batch lane may go unused before the Mux
	// closes it; default 1 minute.
	LaneIdle time.Duration
	// PoolIdle is how long a connection of the BlockingPool may stay
	// idle before the pool closes it, beyond the PoolKeepIdle it keeps;
	// default DefaultPoolIdle.
	PoolIdle time.Duration
	// Filler starts a goroutine per connection that keeps reading from the
	// socket while replies are parsed.
	Filler bool
	// NoDirectRead keeps a background goroutine reading at all times. By
	// default (without filler, push handler or tracking) a caller whose
	// reply is next reads it itself when no other goroutine is reading,
	// which saves a goroutine hand-off per call for sequential callers.
	NoDirectRead bool
	// ReadSpin is how long a caller reading its own reply polls the
	// socket before parking (see spin.go); 0 turns polling off.
	ReadSpin time.Duration
	// FailFast makes calls fail at once with ErrUnavailable while the
	// connection is down, instead of waiting (bounded by their context) for
	// the reconnect.
	FailFast bool

	DialTimeout time.Duration // default 5s
	MinBackoff  time.Duration // first reconnect delay, default 25ms
	MaxBackoff  time.Duration // reconnect delay cap, default 2s
	// HealthCheck is how often an idle connection is pinged; default 15s.
	HealthCheck time.Duration
	// StallTimeout closes a connection whose oldest pending reply makes no
	// progress for this long; default 30s.
	StallTimeout time.Duration
	// Limits bound what the server may make the reader hold.
	Limits resp.Limits
	// OnPush receives RESP3 push frames (pub/sub messages, invalidations).
	// It runs on the reader goroutine; m is valid only during the call.
	OnPush func(m resp.Msg)
	// OnConnect, when set, runs after each successful handshake.
	OnConnect func(info ConnInfo)
	// ReadOnly sends READONLY after connecting, for reads from a cluster
	// replica.
	ReadOnly bool
	// NodeID, when set, is the cluster node id the server must report
	// (CLUSTER MYID) for the connection to be used: a different node or
	// cluster answering at a known address fails the handshake with
	// ErrWrongNode.
	NodeID string
	// Role, when set ("master" or "replica"), is the replication role the
	// server must report (ROLE) for the connection to be used; a replica
	// must also be connected to its master. A server in another role fails
	// the handshake with ErrWrongRole, which is not permanent: a topology
	// that follows failovers (Sentinel) soon resolves another address.
	Role string
	// Tracking, when set, turns on CLIENT TRACKING on every connection and
	// routes invalidation pushes to it; a connection that negotiates RESP2
	// then fails its handshake with ErrTrackingNeedsRESP3.
	Tracking *Tracking
	// OnDial, when set, runs before each connection (multiplexed, blocking
	// pool, pub/sub) is dialed, with the address dialed; the func it
	// returns, when not nil, runs once the dial and the handshake ended,
	// with their error or nil. See events.go.
	OnDial func(addr string) func(info ConnInfo, err error)
	// OnConnLost, when set, runs when an established multiplexed
	// connection breaks, with its cause; the func it returns, when not nil,
	// runs once the connection is replaced (err nil), after attempts dials,
	// or when the Mux stopped trying because it was closed (ErrClosed).
	OnConnLost func(addr string, cause error) func(attempts int, err error)
	// OnGap, when set, runs when a subscription may have lost messages:
	// with opened true for a new gap marker (an overflow's first dropped
	// message, or a disconnect), with opened false for each further
	// message dropped into an open overflow gap.
	OnGap func(g Gap, opened bool)
	// Redirect declares CLIENT CAPA redirect, and sends READONLY, when the
	// server is a standalone Valkey 8 or later (redirect.go): a replica
	// then answers a write with -REDIRECT host:port naming its primary
	// instead of -READONLY, and keeps serving reads. Other servers get
	// neither command.
	Redirect bool
}

// ConnInfo describes an established connection.
type ConnInfo struct {
	Addr     string
	Protocol int // 2 or 3, as negotiated
	Server   string
	Version  string
	// ID is the connection's client id on the server (from HELLO), 0
	// when the server did not say.
	ID int64
	// Zone is the server's availability zone (Valkey 8.1+ reports
	// availability_zone in HELLO when it is configured), "" when it did
	// not say.
	Zone string
	// authGen is the rotation of Config.Credentials whose credentials
	// the connection authenticated with.
	authGen uint64
}

func (c Config) withDefaults() Config {
	if c.Network == "" {
		c.Network = "tcp"
		if len(c.Addr) > 0 && c.Addr[0] == '/' {
			c.Network = "unix"
		}
	}
	if c.Connections <= 0 {
		c.Connections = 1
	}
	if c.BatchLanes < 0 || c.Tracking != nil {
		c.BatchLanes = 0
	}
	if c.LaneIdle <= 0 {
		c.LaneIdle = time.Minute
	}
	if c.PoolIdle <= 0 {
		c.PoolIdle = DefaultPoolIdle
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 25 * time.Millisecond
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = 2 * time.Second
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = c.MinBackoff
	}
	if c.HealthCheck <= 0 {
		c.HealthCheck = 15 * time.Second
	}
	if c.StallTimeout <= 0 {
		c.StallTimeout = 30 * time.Second
	}
	c.Limits = c.Limits.WithDefaults()
	return c
}
