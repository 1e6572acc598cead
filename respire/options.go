package respire

import (
	"context"
	"crypto/tls"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// ReadMode chooses how a connection reads its replies. The zero value,
// ReadModeDefault, is the choice our measurements favour
// (docs/performance.md).
type ReadMode int

const (
	// ReadModeDefault is ReadModeSpin, or ReadModeDirect for a client with
	// ClientCache: a polling caller was measured to delay the cache's
	// invalidations by up to 10-20 ms on a 2-core machine.
	ReadModeDefault ReadMode = iota
	// ReadModeSpin is ReadModeDirect, but the caller reading its own reply
	// first polls the socket for up to ReadSpin before parking its
	// goroutine on the network poller. A parked goroutine is woken by
	// another thread, which costs microseconds (tens on virtual machines)
	// per round trip; polling catches a fast reply at once. It costs CPU:
	// between tries the polling thread yields to any other thread that
	// wants the CPU, at most GOMAXPROCS-1 goroutines of the process poll at
	// once, and polling backs off when replies keep taking longer than
	// ReadSpin. It applies to TCP and Unix sockets without TLS, on Linux,
	// when GOMAXPROCS is at least 2 (elsewhere it is ReadModeDirect). On a
	// machine with few cores, a caller that polls almost continuously can
	// delay the wake-ups of the process's other network goroutines; see
	// docs/performance.md before choosing it in such a process.
	ReadModeSpin
	// ReadModeDirect lets a caller that is alone in waiting for a reply
	// read it from the socket itself, saving two goroutine hand-offs per
	// call; under concurrency a background reader serves all callers
	// either way. The caller parks on the network poller at once.
	ReadModeDirect
	// ReadModeBackground keeps a goroutine per connection reading at all
	// times: every reply is handed from it to its caller.
	ReadModeBackground
	// ReadModeFiller is ReadModeBackground plus a filler goroutine per
	// connection that keeps reading from the socket while replies are
	// parsed, so that bytes accumulate per parse pass under load.
	ReadModeFiller
)

// String returns the name of the constant.
func (m ReadMode) String() string {
	switch m {
	case ReadModeDefault:
		return "ReadModeDefault"
	case ReadModeSpin:
		return "ReadModeSpin"
	case ReadModeDirect:
		return "ReadModeDirect"
	case ReadModeBackground:
		return "ReadModeBackground"
	case ReadModeFiller:
		return "ReadModeFiller"
	}
	return "ReadMode(" + strconv.Itoa(int(m)) + ")"
}

// DefaultReadSpin is how long ReadModeSpin polls when Options.ReadSpin is
// zero: about two loopback round trips on a busy virtual machine, far less
// than one across a network, where the back-off soon stops polling.
const DefaultReadSpin = 50 * time.Microsecond

// readMode is ReadMode with its default applied.
func (o *Options) readMode() ReadMode {
	switch {
	case o.ReadMode != ReadModeDefault:
		return o.ReadMode
	case o.ClientCache != nil:
		return ReadModeDirect
	}
	return ReadModeSpin
}

// readSpin is the transport's ReadSpin: how long a direct reader polls.
func (o *Options) readSpin() time.Duration {
	switch {
	case o.readMode() != ReadModeSpin:
		return 0
	case o.ReadSpin == 0:
		return DefaultReadSpin
	}
	return o.ReadSpin
}

// DefaultWatchRetries is the WatchRetries used when Options.WatchRetries is
// zero: enough for a contended key to commit under ordinary load, few
// enough that a key that changes on every attempt fails the call after
// about 2.3 s of randomized pauses on average, instead of retrying for as
// long as its context allows.
const DefaultWatchRetries = 100

// DefaultRetryReads is the RetryReads used when Options.RetryReads is zero:
// a read whose connection broke under it for a cause it may have brought
// about itself (a reply the client could not read, a stall), or under a
// context without a deadline, is sent again up to three times. One whose
// connection the network broke (a reset, an end of stream) within a
// deadline is sent again for as long as the deadline allows, whatever
// RetryReads says.
const DefaultRetryReads = 3

// retryReads is RetryReads with its default applied.
func (o *Options) retryReads() int {
	switch {
	case o.NoRetryReads:
		return 0
	case o.RetryReads == 0:
		return DefaultRetryReads
	}
	return o.RetryReads
}

// Options configures a Client. The zero value of every field is a sensible
// default, documented on the field.
type Options struct {
	// Addr is "host:port", or a Unix socket path starting with '/'.
	// Default "localhost:6379". The host is a DNS name, an IPv4 address or
	// an IPv6 address in brackets ("[::1]:6379"), never empty; the port is
	// a number from 1 to 65535. It is the address of a single server: a
	// cluster's nodes to start from are Cluster.Addrs, a Sentinel
	// deployment's Sentinel.Addrs.
	Addr string
	// Network is "tcp" or "unix". Default: "unix" when Addr starts with
	// '/', else "tcp".
	Network string
	// Username and Password authenticate (HELLO AUTH or AUTH). An empty
	// Username with a Password uses the default user.
	Username string
	Password string
	// Credentials, when set, is asked for the username and password of
	// every new connection during its handshake, instead of Username and
	// Password (which must then be empty): for short-lived tokens (cloud
	// IAM, Entra ID, ...). It runs on the goroutine that dials, within
	// DialTimeout, possibly on many goroutines at once, so it should
	// answer from a cache it refreshes, not fetch a token each time. An
	// empty username means the default user. An error fails the dial with
	// a *HandshakeError (step "credentials") wrapping ErrCredentials and
	// the provider's error, which is not permanent: the client tries again
	// with backoff. Live connections keep the credentials they
	// authenticated with until Client.Reauthenticate. A wrong password is
	// a permanent error, as with Password. The data nodes' only: the
	// sentinels have SentinelOptions.Username and Password.
	Credentials func(ctx context.Context) (username, password string, err error)
	// Dialer, when set, opens the network connection of every connection
	// the client makes, instead of a net.Dialer: for proxies (SOCKS, an
	// SSH tunnel) and custom transports. It is given Network and the
	// address to reach: Addr, a cluster node, a sentinel, a primary a
	// sentinel names. Its context carries DialTimeout. TLSConfig, when
	// set, wraps what it returns, as does the sentinels' TLS (see
	// SentinelOptions.TLSConfig) on connections to the sentinels. Its
	// errors are not permanent.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnConnect, when set, runs on every new connection to a data node
	// (multiplexed, batch, blocking, pub/sub, WithConn; not the
	// sentinels') at the end of its handshake, after AUTH, SELECT and the
	// client's own checks, before any command of the client uses it: for
	// setup commands such as CLIENT NO-EVICT ON or CLIENT SETNAME, which
	// Client.Do refuses since they would change a shared connection for
	// every caller, but which every connection then carries alike. It runs
	// within DialTimeout. The other commands that change the state of a
	// connection are refused there as they are by Client.Do (see
	// SetupConn.Do). An
	// error fails the dial with a *HandshakeError whose Step is
	// "OnConnect", wrapping the error. That error is permanent (callers
	// get it at once while the client keeps trying in the background, see
	// docs/reliability.md) unless the connection broke, the context ended,
	// or the server answered LOADING, BUSY, TRYAGAIN, MASTERDOWN or
	// CLUSTERDOWN during the hook.
	OnConnect func(ctx context.Context, conn *SetupConn) error
	// NoClientInfo turns off CLIENT SETINFO LIB-NAME respire and LIB-VER
	// (Version), which the handshake otherwise sends in the same write as
	// HELLO so that CLIENT LIST and CLIENT INFO show the library. A server
	// that does not know the command (Redis before 7.2) answers an error,
	// which is ignored.
	NoClientInfo bool
	// NoFollowRedirect turns off following Valkey's -REDIRECT on a single
	// server or Sentinel client. By default the handshake with a
	// standalone Valkey 8 or later declares CLIENT CAPA redirect and sends
	// READONLY, so that a replica at Options.Addr serves reads and answers
	// a write with the address of its primary, where the client runs it
	// (see docs/replicas.md). With NoFollowRedirect neither is sent, and a
	// write to a replica fails with the server's READONLY error, as on
	// Redis. Clusters ignore it: they follow MOVED and ASK.
	NoFollowRedirect bool
	// ClientName is set with HELLO SETNAME / CLIENT SETNAME when not empty.
	// The server accepts only printable ASCII without spaces ('!' to '~').
	ClientName string
	// DB is selected after connecting when not 0. On a cluster every
	// node connection selects it: Valkey 9 and later allow databases
	// below its cluster-databases setting; other servers (Redis, older
	// Valkey) refuse any but 0, and so the client fails at Connect (or the
	// first command) with a *HandshakeError naming the database and the
	// node. See docs/cluster.md, "Databases on a cluster".
	DB int
	// Protocol is 2 or 3. The zero value asks for RESP3 and falls back to
	// RESP2 when the server or a proxy refuses HELLO.
	Protocol int
	// TLSConfig enables TLS. Its ServerName defaults to the host of Addr,
	// so the server's certificate is verified. With Sentinel it applies
	// to the sentinels too, unless SentinelOptions.TLSConfig or NoTLS say
	// otherwise.
	//
	// For mutual TLS (a server with tls-auth-clients yes) give the client
	// certificate in Certificates, or in GetClientCertificate, which
	// every new connection calls: ClientCertFromFiles returns one that
	// reads a certificate rotated on disk without a restart. A server with
	// tls-auth-clients-user CN (Redis 8.6, Valkey 9.1) authenticates the
	// connection as the ACL user named by the certificate's common name;
	// leave Username and Password empty then. A server that refuses the
	// certificate, or requires one the client lacks, fails the
	// connection with a permanent *HandshakeError of Step "TLS". See
	// docs/security.md.
	TLSConfig *tls.Config
	// Connections is the number of multiplexed connections. Commands on the
	// same key always use the same connection, unless a batch takes a batch
	// connection (BatchConnections). Default 1.
	Connections int
	// BatchConnections is the most extra connections per server that
	// batches (Batch.Exec) use when the connection they would share
	// already has commands in flight: several goroutines running batches
	// at once then each write and read their own, instead of queueing
	// behind each other's replies. Read-only commands use them too while
	// their connection carries replies of 64 KiB or more, which the server
	// sends 64 KiB per turn of its event loop, so that they do not wait
	// behind those; writes never do. They are dialed one at a time, in the
	// background, when needed, and closed after a minute unused. A
	// goroutine's commands keep their order whichever connection carries
	// them, each call returning after its reply; a command whose call
	// ended with its outcome unknown (its context ended after it was
	// written) may still run after the goroutine's next ones. Zero means
	// DefaultBatchConnections; NoBatchConnections turns them off.
	BatchConnections int
	// NoBatchConnections turns off the batch connections
	// (BatchConnections): every batch and command shares the multiplexed
	// connections.
	NoBatchConnections bool
	// ReadMode chooses how replies are read; see the ReadMode constants.
	// The zero value is ReadModeDefault.
	ReadMode ReadMode
	// ReadSpin is how long a caller reading its own reply polls the socket
	// with ReadModeSpin (or ReadModeDefault, when that means ReadModeSpin)
	// before parking. Zero means DefaultReadSpin. It is an error with a
	// ReadMode that does not poll: choose ReadModeDirect to turn polling
	// off.
	ReadSpin time.Duration
	// FailFast makes commands fail at once with ErrUnavailable while the
	// server cannot be reached. By default they wait for the reconnect,
	// bounded by their context.
	FailFast bool
	// DialTimeout bounds connecting and the handshake. Default 5s.
	DialTimeout time.Duration
	// MinRetryBackoff and MaxRetryBackoff bound the delay between reconnect
	// attempts, which doubles from the first to the second, with jitter.
	// Defaults 25ms and 2s. When both are set, MaxRetryBackoff may not be
	// below MinRetryBackoff; a MinRetryBackoff above 2s with
	// MaxRetryBackoff zero raises the cap to MinRetryBackoff.
	MinRetryBackoff time.Duration
	MaxRetryBackoff time.Duration
	// HealthCheckInterval is how long a connection may be idle before it is
	// sent a PING. Default 15s.
	HealthCheckInterval time.Duration
	// StallTimeout replaces a connection whose oldest pending reply makes
	// no progress for this long. Default 30s.
	StallTimeout time.Duration
	// Limits bound what a broken or hostile server can make the client
	// hold; zero fields take their defaults (see Limits).
	Limits Limits
	// BlockingPoolSize bounds the dedicated connections per server on
	// which blocking commands (BLPOP, XREAD BLOCK, WAIT, ...) run, one at
	// a time each, so they never hold up other commands; transactions,
	// Watch and WithConn take theirs from the same pool. The pool grows
	// on demand, one connection per caller blocked at once, up to this
	// bound, and shrinks when idle: connections unused for a minute are
	// closed, but for the 4 used last. A caller that finds the bound
	// reached (every connection busy) fails at once with an error
	// wrapping ErrPoolExhausted that names the bound. Zero means
	// DefaultBlockingPoolSize, or a quarter of the process's limit on
	// open files (RLIMIT_NOFILE) when that is lower, but not below 32.
	// See docs/reliability.md, "Blocking commands at scale".
	BlockingPoolSize int
	// PubSubBuffer, when set, bounds the number of messages a
	// Subscription holds for its reader, besides PubSubBufferBytes; when
	// either bound is reached, further messages of that subscription are
	// dropped and counted in a Gap. Default: no count bound.
	// SubscriptionOptions.Buffer overrides it.
	PubSubBuffer int
	// PubSubBufferBytes bounds the memory each Subscription holds for its
	// reader: the bytes of its buffered messages plus, for each, its slot
	// in the queue (128 bytes on 64-bit platforms). Default 8 MiB, Redis's
	// own soft limit for a pub/sub client's output buffer (docs/pubsub.md
	// explains the choice). SubscriptionOptions.BufferBytes overrides it.
	PubSubBufferBytes int
	// ClientCache, when set, turns on server-assisted client-side caching
	// for reads made through Client.Cached; see CacheOptions. It needs
	// RESP3.
	ClientCache *CacheOptions
	// RetryReads bounds how many times a command that the spec marks
	// read-only is sent again when its connection broke after it was
	// written, so that its outcome is unknown (a write is never resent
	// then), each time on a new connection and within the command's
	// context. The bound counts the breaks the command may have caused
	// itself (a reply the client could not read: ErrProtocol; ErrStalled),
	// and every break under a context without a deadline; a command whose
	// connection the network broke (a reset, an end of stream, a failed
	// write) under a context with a deadline is sent again for as long as
	// that deadline allows, as rueidis does, without counting: under
	// connections reset every 30 ms, a read of 1 MiB behind others may be
	// cut many times before one attempt gets its whole reply. Zero means
	// DefaultRetryReads; NoRetryReads turns all such retries off. A batch
	// is resent this way when every command of it that was left unanswered
	// is read-only. Tx, Watch, WithConn and blocking commands are never
	// resent after a write. Whatever this says, a command that certainly
	// never reached the server (its connection broke before its bytes were
	// written) is sent again on the new connection, read or write, as long
	// as its context allows.
	//
	// Large writes (commands that are not read-only, of 64 KiB and more)
	// are never resent after they were written, so the client keeps at
	// most two of them written and unanswered on a connection at a time:
	// the others wait unwritten, in order, within their contexts, and a
	// break leaves at most those two with an unknown outcome.
	RetryReads int
	// NoRetryReads turns off the resending of read-only commands whose
	// outcome is unknown (RetryReads): their callers get the connection
	// error at once.
	NoRetryReads bool
	// WatchRetries is how many times WatchRetry runs its function at most
	// before it gives up with an error wrapping TxFailed. Zero means
	// DefaultWatchRetries.
	WatchRetries int
	// Cluster, when set, connects to a Redis Cluster (or Valkey cluster)
	// instead of a single server: commands go to the node that serves
	// their keys' slot; see ClusterOptions and docs/cluster.md. Addr must
	// then be empty: the nodes to start from are Cluster.Addrs.
	Cluster *ClusterOptions
	// ReadFrom chooses where commands the spec marks read-only go on a
	// cluster or with Sentinel: the primary (the zero value; on a cluster,
	// the slot's), or one of its replicas. Commands in a Tx or Watch always go to the primary.
	ReadFrom ReadFrom
	// AvailabilityZone is the client's availability zone (as "us-east-1a",
	// the name the servers are configured with in availability-zone), for
	// ReadFrom ReadZoneReplica and ReadZone, which need it; with any other
	// ReadFrom it is an error. Empty by default: no zone.
	AvailabilityZone string
	// Tracer, when set, is told about commands, batches, connections,
	// reconnects, pub/sub gaps and cache invalidations, through those of
	// its functions that are set (see Tracer; package respireotel has one
	// for OpenTelemetry). Nil costs nothing.
	Tracer *Tracer

	// Interceptors wrap the client's commands, batches and dials, the
	// first outermost (see Interceptor): circuit breakers, rate limits,
	// metrics, fakes for unit tests. None by default.
	Interceptors []Interceptor
	// Logger, when set, logs connection events: failed dials and
	// handshakes, lost connections, reconnects, new nodes, lost pub/sub
	// messages (see log.go). It never logs a password. Nil logs nothing.
	Logger *slog.Logger
	// Sentinel, when set, connects to the primary that Redis Sentinel (or
	// Valkey Sentinel) names, and follows its failovers; ReadFrom then
	// chooses between the primary and its replicas. Addr must be empty: the
	// nodes to start from are Sentinel.Addrs. See SentinelOptions and
	// docs/sentinel.md.
	Sentinel *SentinelOptions

	// creds is the rotation state of Credentials, made by NewClient and
	// shared by every connection configuration of the client.
	creds *transport.Credentials
}

func (o *Options) transportConfig() transport.Config {
	addr := o.Addr
	if addr == "" {
		addr = "localhost:6379"
	}
	cfg := transport.Config{
		Network:      o.Network,
		Addr:         addr,
		TLS:          o.TLSConfig,
		Username:     o.Username,
		Password:     o.Password,
		Credentials:  o.creds,
		Dialer:       o.Dialer,
		ClientName:   o.ClientName,
		DB:           o.DB,
		Protocol:     o.Protocol,
		Connections:  o.Connections,
		BatchLanes:   o.batchLanes(),
		Filler:       o.readMode() == ReadModeFiller,
		NoDirectRead: o.readMode() >= ReadModeBackground,
		ReadSpin:     o.readSpin(),
		FailFast:     o.FailFast,
		DialTimeout:  o.DialTimeout,
		MinBackoff:   o.MinRetryBackoff,
		MaxBackoff:   o.MaxRetryBackoff,
		HealthCheck:  o.HealthCheckInterval,
		StallTimeout: o.StallTimeout,
		Limits:       o.Limits.reader(),
	}
	if !o.NoClientInfo {
		cfg.LibName, cfg.LibVersion = LibName, strings.TrimPrefix(Version, "v")
	}
	if hook := o.OnConnect; hook != nil {
		cfg.Setup = func(ctx context.Context, sc *transport.SetupConn) error {
			return hook(ctx, &SetupConn{sc: sc})
		}
	}
	return cfg
}

// DefaultBlockingPoolSize is the most connections of the blocking pool a
// client opens to one server when Options.BlockingPoolSize is 0 (a quarter
// of the process's limit on open files when that is lower): room for
// thousands of callers blocked at once, half of a server's default
// maxclients.
const DefaultBlockingPoolSize = transport.DefaultBlockingPoolSize

// DefaultBatchConnections is the number of batch connections a client
// opens at most when Options.BatchConnections is 0.
const DefaultBatchConnections = 3

// batchLanes is the transport's BatchLanes: Options.BatchConnections with
// its default applied.
func (o *Options) batchLanes() int {
	switch {
	case o.NoBatchConnections:
		return 0
	case o.BatchConnections == 0:
		return DefaultBatchConnections
	}
	return o.BatchConnections
}
