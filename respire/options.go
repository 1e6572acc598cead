package respire

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// FillerMode chooses whether each connection runs a filler goroutine that
// keeps reading from the socket while replies are parsed.
type FillerMode int

const (
	// FillerDefault lets Respire choose; today it means FillerOff, the faster
	// mode in our measurements on loopback (docs/performance.md).
	FillerDefault FillerMode = iota
	// FillerOn runs the filler goroutine.
	FillerOn
	// FillerOff parses straight from the socket.
	FillerOff
)

// DefaultReadSpin is the ReadSpin used when Options.ReadSpin is zero: about
// two loopback round trips on a busy virtual machine, far less than one
// across a network, where the back-off soon stops polling.
const DefaultReadSpin = 50 * time.Microsecond

// DefaultWatchRetries is the WatchRetries used when Options.WatchRetries is
// zero: enough for a contended key to commit under ordinary load, few
// enough that a key that changes on every attempt fails the call after
// about 2.3 s of randomized pauses on average, instead of retrying for as
// long as its context allows.
const DefaultWatchRetries = 100

// DefaultRetryReads is the RetryReads used when Options.RetryReads is zero:
// a read whose connection broke under it is sent again on a new
// connection, up to three times, within its context: enough for a read
// of a large value while connections are reset every 50 ms.
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

func (o *Options) readSpin() time.Duration {
	switch {
	case o.ReadSpin < 0:
		return 0
	case o.ReadSpin == 0 && o.ClientCache != nil:
		return 0
	case o.ReadSpin == 0:
		return DefaultReadSpin
	}
	return o.ReadSpin
}

// Options configures a Client. The zero value of every field is a sensible
// default, documented on the field.
type Options struct {
	// Addr is "host:port", or a Unix socket path starting with '/'.
	// Default "localhost:6379". The host is a DNS name, an IPv4 address or
	// an IPv6 address in brackets ("[::1]:6379"), never empty; the port is
	// a number from 1 to 65535.
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
	// address to reach: Addr, a cluster node, a sentinel, a master a
	// sentinel names. Its context carries DialTimeout. TLSConfig, when
	// set, wraps what it returns, as does SentinelOptions.TLSConfig on
	// connections to the sentinels. Its errors are not permanent.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// OnConnect, when set, runs on every new connection to a data node
	// (multiplexed, batch, blocking, pub/sub, WithConn; not the
	// sentinels') at the end of its handshake, after AUTH, SELECT and the
	// client's own checks, before any command of the client uses it: for
	// setup commands such as CLIENT NO-EVICT ON or CLIENT SETNAME. It runs
	// within DialTimeout. Commands that change the state of a connection
	// are refused there as they are by Client.Do (see SetupConn.Do). An
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
	// ClientName is set with HELLO SETNAME / CLIENT SETNAME when not empty.
	// The server accepts only printable ASCII without spaces ('!' to '~').
	ClientName string
	// DB is selected after connecting when not 0.
	DB int
	// Protocol is 2 or 3. The zero value asks for RESP3 and falls back to
	// RESP2 when the server or a proxy refuses HELLO.
	Protocol int
	// TLSConfig enables TLS. Its ServerName defaults to the host of Addr,
	// so the server's certificate is verified.
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
	// them. Default 3 (DefaultBatchConnections); -1 for none.
	BatchConnections int
	// Filler chooses the read mode; see FillerMode.
	Filler FillerMode
	// NoDirectRead keeps a goroutine per connection reading at all times.
	// By default a caller that is alone in waiting for a reply reads it
	// from the socket itself, saving two goroutine hand-offs per call; under
	// concurrency a background reader serves all callers either way.
	NoDirectRead bool
	// ReadSpin is how long a caller reading its own reply (see
	// NoDirectRead) polls the socket before parking its goroutine on the
	// network poller. A parked goroutine is woken by another thread, which
	// costs microseconds (tens on virtual machines) per round trip; polling
	// catches a fast reply at once. It costs CPU: between tries the
	// polling thread yields to any other thread that wants the CPU, at most
	// GOMAXPROCS-1 goroutines of the process poll at once, and polling
	// backs off when replies keep taking longer than ReadSpin. Zero means
	// DefaultReadSpin, or no polling for a client with ClientCache (a
	// polling caller was measured to delay the cache's invalidations by up
	// to 10-20 ms on a 2-core machine; an explicit ReadSpin accepts that);
	// a negative value turns polling off. It applies to TCP and Unix
	// sockets without TLS, on Linux, when GOMAXPROCS is at least 2. On a
	// machine with few cores, a caller that polls almost continuously can
	// delay the wake-ups of the process's other network goroutines; see
	// docs/performance.md before keeping it on in such a process.
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
	// hold; zero fields take the defaults of package resp.
	Limits resp.Limits
	// BlockingPoolSize bounds the dedicated connections on which blocking
	// commands (BLPOP, XREAD BLOCK, WAIT, ...) run, one at a time each, so
	// they never hold up other commands. They are dialed when needed and
	// kept while idle. A blocking command that finds them all busy waits
	// for one until its context ends. Default 32.
	BlockingPoolSize int
	// PubSubBuffer, when set, bounds the number of messages a
	// Subscription holds for its reader, besides PubSubBufferBytes; when
	// either bound is reached, further messages of that subscription are
	// dropped and counted in a Gap. Default: no count bound.
	// SubscriptionOptions.Buffer overrides it.
	PubSubBuffer int
	// PubSubBufferBytes bounds the memory each Subscription holds for its
	// reader: the bytes of its buffered messages plus
	// transport.MessageOverhead each. Default 8 MiB, Redis's own soft
	// limit for a pub/sub client's output buffer (docs/pubsub.md explains
	// the choice). SubscriptionOptions.BufferBytes overrides it.
	PubSubBufferBytes int
	// ClientCache, when set, turns on server-assisted client-side caching
	// for reads made through Client.Cached; see CacheOptions. It needs
	// RESP3.
	ClientCache *CacheOptions
	// RetryReads is how many times a command that the spec marks read-only
	// is sent again when its connection broke after it was written, so
	// that its outcome is unknown (a write is never resent then), each
	// time on a new connection and within the command's context. Zero
	// means DefaultRetryReads; NoRetryReads turns such retries off. A
	// batch is resent this way when every command of it that was left
	// unanswered is read-only. Tx, Watch, WithConn and blocking commands
	// are never resent after a write. Whatever this says, a command that
	// certainly never reached the server (its connection broke before its
	// bytes were written) is sent again on the new connection, read or
	// write, as long as its context allows.
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
	// their keys' slot; see ClusterOptions and docs/cluster.md. Addr is
	// then one more seed.
	Cluster *ClusterOptions
	// ReadFrom chooses where commands the spec marks read-only go on a
	// cluster: the slot's primary (the zero value), or one of its
	// replicas. Commands in a Tx or Watch always go to the primary.
	ReadFrom ReadFrom
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
	// Sentinel, when set, connects to the master that Redis Sentinel (or
	// Valkey Sentinel) names, and follows its failovers; ReadFrom then
	// chooses between the master and its replicas. Addr must be empty. See
	// SentinelOptions and docs/sentinel.md.
	Sentinel *SentinelOptions

	// creds is the rotation state of Credentials, made by NewClient and
	// shared by every connection configuration of the client.
	creds *transport.Credentials
}

func optErr(field, format string, args ...any) error {
	return fmt.Errorf("%w: %s: %s", ErrInvalidOption, field, fmt.Sprintf(format, args...))
}

// validate reports the first bad field.
func (o *Options) validate() error {
	switch o.Protocol {
	case 0, 2, 3:
	default:
		return optErr("Protocol", "%d is not 2 or 3", o.Protocol)
	}
	if err := o.Cluster.validate(); err != nil {
		return err
	}
	if err := o.Sentinel.validate(o); err != nil {
		return err
	}
	if o.Cluster != nil && o.DB != 0 {
		return optErr("DB", "a cluster has only database 0, not %d", o.DB)
	}
	if o.ReadFrom < ReadPrimary || o.ReadFrom > ReadNearest {
		return optErr("ReadFrom", "unknown mode %d", o.ReadFrom)
	}
	if err := o.ClientCache.validate(o.Protocol); err != nil {
		return err
	}
	switch o.Network {
	case "", "tcp", "tcp4", "tcp6", "unix":
	default:
		return optErr("Network", "%q is not tcp or unix", o.Network)
	}
	if o.DB < 0 {
		return optErr("DB", "%d is negative", o.DB)
	}
	if o.Connections < 0 {
		return optErr("Connections", "%d is negative", o.Connections)
	}
	if o.BatchConnections < -1 {
		return optErr("BatchConnections", "%d is below -1 (-1 turns them off)", o.BatchConnections)
	}
	if o.BlockingPoolSize < 0 {
		return optErr("BlockingPoolSize", "%d is negative", o.BlockingPoolSize)
	}
	if o.PubSubBuffer < 0 {
		return optErr("PubSubBuffer", "%d is negative", o.PubSubBuffer)
	}
	if o.PubSubBufferBytes < 0 {
		return optErr("PubSubBufferBytes", "%d is negative", o.PubSubBufferBytes)
	}
	if o.RetryReads < 0 {
		return optErr("RetryReads", "%d is negative", o.RetryReads)
	}
	if o.Filler < FillerDefault || o.Filler > FillerOff {
		return optErr("Filler", "unknown mode %d", o.Filler)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{
		{"DialTimeout", o.DialTimeout}, {"MinRetryBackoff", o.MinRetryBackoff},
		{"MaxRetryBackoff", o.MaxRetryBackoff}, {"HealthCheckInterval", o.HealthCheckInterval},
		{"StallTimeout", o.StallTimeout},
	} {
		if d.v < 0 {
			return optErr(d.name, "%v is negative", d.v)
		}
	}
	if o.Limits.MaxBulk < 0 || o.Limits.MaxAggregate < 0 || o.Limits.MaxDepth < 0 || o.Limits.MaxLine < 0 || o.Limits.MaxNodes < 0 {
		return optErr("Limits", "negative limit")
	}
	if o.WatchRetries < 0 {
		return optErr("WatchRetries", "%d is negative", o.WatchRetries)
	}
	if o.MinRetryBackoff > 0 && o.MaxRetryBackoff > 0 && o.MinRetryBackoff > o.MaxRetryBackoff {
		return optErr("MaxRetryBackoff", "%v is below MinRetryBackoff %v", o.MaxRetryBackoff, o.MinRetryBackoff)
	}
	if err := checkClientName(o.ClientName); err != nil {
		return err
	}
	if o.Credentials != nil && (o.Username != "" || o.Password != "") {
		return optErr("Credentials", "given with Username or Password: the provider gives both")
	}
	return o.checkAddr()
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
		Filler:       o.Filler == FillerOn,
		NoDirectRead: o.NoDirectRead,
		ReadSpin:     o.readSpin(),
		FailFast:     o.FailFast,
		DialTimeout:  o.DialTimeout,
		MinBackoff:   o.MinRetryBackoff,
		MaxBackoff:   o.MaxRetryBackoff,
		HealthCheck:  o.HealthCheckInterval,
		StallTimeout: o.StallTimeout,
		Limits:       o.Limits,
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

// ParseURL parses a redis://, rediss:// (TLS), valkey://, valkeys:// (TLS)
// or unix:// URL into Options:
//
//	redis://[[user]:password@]host[:port][/db][?option=value&...]
//	rediss://... (the same, with TLS verifying the host's certificate)
//	valkey://... and valkeys://... (the same as redis:// and rediss://)
//	unix://[[user]:password@]/path/to/socket[?option=value&...]
//
// The host is a DNS name, an IPv4 address or an IPv6 address in brackets
// ([::1]); an empty host is localhost, with or without a port, and the port
// defaults to 6379. A list of hosts (redis://h1:7000,h2:7001) names the
// seeds of a cluster (Options.Cluster); so does a single host with
// cluster=true. A lone user part
// (redis://secret@host) is the password of the default user. A unix URL
// has no host (three slashes); its user part authenticates as in a redis://
// URL. The path of a redis:// URL is empty or one database number; a
// database given both in the path and as db in the query must be the same
// number in both.
//
// Query options: db, protocol, client_name, no_client_info, connections, dial_timeout,
// stall_timeout, health_check_interval, fail_fast, filler (on|off),
// blocking_pool_size, pubsub_buffer, pubsub_buffer_bytes, retry_reads (Options.RetryReads; 0 sets NoRetryReads),
// cluster (true or false), read_from (primary, prefer_replica, replica or nearest).
// Numbers are decimal digits, durations are written as for
// time.ParseDuration. An option given twice must have the same text both
// times.
//
// '/', '?' and '#' end the user part, so write them as %2F, %3F and %23 in
// a password: an '@' after the host is refused instead of being read as
// part of a path or query, where a password would show up in errors (write
// an '@' in a query value as %40). Fragments (#...) and opaque URLs
// (redis:host) are errors. Errors wrap ErrInvalidOption and never contain
// the password.
//
// A Sentinel deployment (Options.Sentinel) is written
// redis-sentinel://[[user]:password@]host[:port][,host...]/master-name[/db]
// (rediss-sentinel:// with TLS, valkey-sentinel://, valkeys-sentinel://):
// the hosts are sentinels (default port 26379), the user part is the data
// nodes'; sentinel_username, sentinel_password and sentinel_poll_interval
// set SentinelOptions, and the other query options are those above.
func ParseURL(raw string) (Options, error) {
	if o, ok, err := parseSentinelURL(raw); ok {
		return o, err
	}
	var o Options
	u, err := url.Parse(raw)
	if err != nil {
		// Not err: its text may quote part of a mistyped password.
		return Options{}, optErr("URL", "cannot parse %q", redact(raw))
	}
	secure, err := checkURLShape(u, raw)
	if err != nil {
		return Options{}, err
	}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
		if _, has := u.User.Password(); !has {
			// redis://secret@host: a lone user part is the password.
			o.Password, o.Username = o.Username, ""
		}
	}
	pathDB := -1
	if u.Scheme == "unix" {
		if u.Host != "" {
			return Options{}, optErr("URL", "unix URL names the host %q: write unix:///path/to/socket", u.Host)
		}
		if u.Path == "" || strings.HasSuffix(u.Path, "/") {
			return Options{}, optErr("URL", "unix URL has no socket path")
		}
		o.Network, o.Addr = "unix", u.Path
	} else if strings.IndexByte(u.Host, ',') >= 0 {
		// Several hosts: the seeds of a cluster.
		var seeds []string
		for _, h := range strings.Split(u.Host, ",") {
			if h == "" {
				return Options{}, optErr("URL", "an empty host in the list %q", u.Host)
			}
			host, port, err := urlHostPort(&url.URL{Host: h})
			if err != nil {
				return Options{}, err
			}
			if strings.IndexByte(host, ':') >= 0 {
				// url.Parse reads no brackets in a list of hosts.
				return Options{}, optErr("URL", "an IPv6 address in a list of hosts: give the seeds in Options.Cluster.Seeds")
			}
			seeds = append(seeds, net.JoinHostPort(host, port))
		}
		o.Cluster = &ClusterOptions{Seeds: seeds}
		if secure {
			// Each node's certificate is checked against its own host.
			o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		}
		if pathDB, err = urlPathDB(u.Path); err != nil {
			return Options{}, err
		}
	} else {
		host, port, err := urlHostPort(u)
		if err != nil {
			return Options{}, err
		}
		o.Addr = net.JoinHostPort(host, port)
		if secure {
			o.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if pathDB, err = urlPathDB(u.Path); err != nil {
			return Options{}, err
		}
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return Options{}, optErr("URL", "query: %v", err)
	}
	// In order, so that the error about a URL is always the same one.
	for _, key := range slices.Sorted(maps.Keys(q)) {
		vals := q[key]
		for _, v := range vals[1:] {
			if v != vals[0] {
				return Options{}, optErr("URL", "option %s is given twice, as %q and %q", key, vals[0], v)
			}
		}
		if err := o.setURLOption(key, vals[0]); err != nil {
			return Options{}, err
		}
	}
	if pathDB >= 0 {
		if q.Has("db") && o.DB != pathDB {
			return Options{}, optErr("URL", "database %d in the path and %d in the query", pathDB, o.DB)
		}
		o.DB = pathDB
	}
	if err := o.validate(); err != nil {
		return Options{}, err
	}
	return o, nil
}

// setURLOption sets the field of a URL query option.
func (o *Options) setURLOption(key, v string) error {
	var err error
	switch key {
	case "db":
		o.DB, err = parseCount(v)
	case "protocol":
		o.Protocol, err = parseCount(v)
	case "client_name":
		o.ClientName = v
	case "no_client_info":
		o.NoClientInfo, err = strconv.ParseBool(v)
	case "connections":
		o.Connections, err = parseCount(v)
	case "batch_connections":
		o.BatchConnections, err = strconv.Atoi(v)
	case "dial_timeout":
		o.DialTimeout, err = time.ParseDuration(v)
	case "stall_timeout":
		o.StallTimeout, err = time.ParseDuration(v)
	case "health_check_interval":
		o.HealthCheckInterval, err = time.ParseDuration(v)
	case "fail_fast":
		o.FailFast, err = strconv.ParseBool(v)
	case "blocking_pool_size":
		o.BlockingPoolSize, err = parseCount(v)
	case "pubsub_buffer":
		o.PubSubBuffer, err = parseCount(v)
	case "pubsub_buffer_bytes":
		o.PubSubBufferBytes, err = parseCount(v)
	case "retry_reads":
		// 0 is how a URL says "no retries": it has no other way to.
		if o.RetryReads, err = parseCount(v); err == nil && o.RetryReads == 0 {
			o.NoRetryReads = true
		}
	case "cluster":
		var on bool
		if on, err = strconv.ParseBool(v); err == nil && on && o.Cluster == nil {
			o.Cluster = &ClusterOptions{}
		}
	case "read_from":
		switch v {
		case "primary":
			o.ReadFrom = ReadPrimary
		case "prefer_replica":
			o.ReadFrom = ReadPreferReplica
		case "replica":
			o.ReadFrom = ReadReplica
		case "nearest":
			o.ReadFrom = ReadNearest
		default:
			err = errors.New("not primary, prefer_replica, replica or nearest")
		}
	case "filler":
		switch v {
		case "on":
			o.Filler = FillerOn
		case "off":
			o.Filler = FillerOff
		default:
			err = errors.New("not on or off")
		}
	default:
		return optErr("URL", "unknown query option %q", key)
	}
	if err != nil {
		return optErr("URL", "option %s=%q: %v", key, v, err)
	}
	return nil
}

// checkURLShape refuses what no scheme allows: an unknown scheme, an opaque
// URL, a fragment, an '@' after the host. It reports whether the scheme
// asks for TLS.
func checkURLShape(u *url.URL, raw string) (secure bool, err error) {
	switch u.Scheme {
	case "redis", "valkey", "unix":
	case "rediss", "valkeys":
		secure = true
	default:
		return false, optErr("URL", "scheme %q is not redis, rediss, valkey, valkeys or unix", u.Scheme)
	}
	// url.Parse found the scheme at the start of raw, followed by ':'.
	rest, ok := strings.CutPrefix(raw[len(u.Scheme)+1:], "//")
	if u.Opaque != "" || !ok {
		return false, optErr("URL", "want %s://..., with two slashes after the scheme", u.Scheme)
	}
	if strings.IndexByte(raw, '#') >= 0 {
		return false, optErr("URL", "a fragment (#...) has no meaning here; write a '#' in a password as %%23")
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 && strings.IndexByte(rest[i:], '@') >= 0 {
		return false, optErr("URL", "'@' after the host: write '/' and '?' in a password as %%2F and %%3F, and '@' in a query value as %%40")
	}
	return secure, nil
}

// urlHostPort checks the host and port of a redis:// URL and applies their
// defaults.
func urlHostPort(u *url.URL) (host, port string, err error) {
	if strings.HasSuffix(u.Host, ":") {
		return "", "", optErr("URL", "host %q has a ':' but no port", u.Host)
	}
	host, port = u.Hostname(), u.Port()
	switch {
	case strings.HasPrefix(u.Host, "["):
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() || !plainZone(a.Zone()) {
			return "", "", optErr("URL", "%q in brackets is not an IPv6 address", host)
		}
	case host == "":
		host = "localhost"
	default:
		if err := checkHost("URL", host); err != nil {
			return "", "", err
		}
	}
	if port == "" {
		return host, "6379", nil
	}
	if err := checkPort("URL", port); err != nil {
		return "", "", err
	}
	return host, port, nil
}

// plainZone reports an IPv6 zone (an interface name) made of letters,
// digits, '.', '_' and '-' only, or none.
func plainZone(z string) bool {
	for i := 0; i < len(z); i++ {
		switch b := z[i]; {
		case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9', b == '.', b == '_', b == '-':
		default:
			return false
		}
	}
	return true
}

// urlPathDB returns the database that the path of a redis:// URL selects,
// or -1 for none.
func urlPathDB(path string) (int, error) {
	if path == "" || path == "/" {
		return -1, nil
	}
	db, err := parseCount(strings.TrimPrefix(path, "/"))
	if err != nil {
		return -1, optErr("URL", "path %q is not /N, a database number", path)
	}
	return db, nil
}

// parseCount parses a non-negative decimal number without a sign.
func parseCount(s string) (int, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, errors.New("not a non-negative decimal number")
	}
	return strconv.Atoi(s)
}

// checkAddr checks Addr for the network it is dialed on.
func (o *Options) checkAddr() error {
	unix := o.Network == "unix" || o.Network == "" && strings.HasPrefix(o.Addr, "/")
	switch {
	case unix && o.Addr == "":
		return optErr("Addr", "network unix needs the path of a socket")
	case unix:
		if strings.IndexByte(o.Addr, 0) >= 0 {
			return optErr("Addr", "socket path %q has a NUL byte", o.Addr)
		}
		return nil
	case o.Addr == "":
		return nil // localhost:6379
	}
	host, port, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return optErr("Addr", "%q is not host:port (an IPv6 address goes in brackets, as in [::1]:6379)", o.Addr)
	}
	if err := checkPort("Addr", port); err != nil {
		return err
	}
	return checkHost("Addr", host)
}

// checkHost refuses a host that no resolver finds: empty, or neither an IP
// address nor a name of letters, digits, '-', '_' and '.'.
func checkHost(field, host string) error {
	if host == "" {
		return optErr(field, "the host is empty; write localhost for this machine")
	}
	if strings.IndexByte(host, ':') >= 0 {
		if a, err := netip.ParseAddr(host); err == nil && a.Is6() && plainZone(a.Zone()) {
			return nil
		}
		return optErr(field, "host %q has a ':' that does not start the port; an IPv6 address goes in brackets, as in [::1]:6379", host)
	}
	for i := 0; i < len(host); i++ {
		if c := host[i]; !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return optErr(field, "host %q has the character %q, which no host name has", host, c)
		}
	}
	return nil
}

// checkPort refuses a port that is not a number from 1 to 65535 (a service
// name such as "redis" included).
func checkPort(field, port string) error {
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return optErr(field, "port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// checkClientName refuses a name the server would refuse at every
// handshake: it takes only '!' to '~'.
func checkClientName(name string) error {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < '!' || c > '~' {
			return optErr("ClientName", "%q has the character %q; the server takes only printable ASCII without spaces", name, c)
		}
	}
	return nil
}

// redact hides the password of a URL that may not parse: what lies between
// the scheme (or the start) and the last '@', but for a user name before a
// ':' (unless an '@' in it leaves unclear where the user name ends).
func redact(raw string) string {
	at := strings.LastIndexByte(raw, '@')
	if at < 0 {
		return raw
	}
	start := 0
	if i := strings.Index(raw[:at], "://"); i >= 0 {
		start = i + 3
	} else if i := strings.IndexByte(raw[:at], ':'); i >= 0 {
		start = i + 1 // redis:user:password@host, or user:password@host
	}
	cred := raw[start:at]
	if i := strings.IndexByte(cred, ':'); i >= 0 && strings.IndexByte(cred[:i], '@') < 0 {
		cred = cred[:i+1] + "xxxxx"
	} else {
		cred = "xxxxx"
	}
	return raw[:start] + cred + raw[at:]
}

// DefaultBatchConnections is the number of batch connections a client
// opens at most when Options.BatchConnections is 0.
const DefaultBatchConnections = 3

// batchLanes is the transport's BatchLanes for o.BatchConnections.
func (o *Options) batchLanes() int {
	switch {
	case o.BatchConnections < 0:
		return 0
	case o.BatchConnections == 0:
		return DefaultBatchConnections
	}
	return o.BatchConnections
}
