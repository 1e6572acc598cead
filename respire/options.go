package respire

import (
	"crypto/tls"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/transport"
	"github.com/respire-go/respire/transport/resp"
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
	// Default "localhost:6379".
	Addr string
	// Network is "tcp" or "unix". Default: "unix" when Addr starts with
	// '/', else "tcp".
	Network string
	// Username and Password authenticate (HELLO AUTH or AUTH). An empty
	// Username with a Password uses the default user.
	Username string
	Password string
	// ClientName is set with HELLO SETNAME / CLIENT SETNAME when not empty.
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
	// same key always use the same connection. Default 1.
	Connections int
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
	// Defaults 25ms and 2s.
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
	// PubSubBuffer is the number of messages a Subscription holds for its
	// reader; when it is full, further messages are dropped and counted in
	// a Gap. Default 1024. SubscriptionOptions.Buffer overrides it.
	PubSubBuffer int
	// ClientCache, when set, turns on server-assisted client-side caching
	// for reads made through Client.Cached; see CacheOptions. It needs
	// RESP3.
	ClientCache *CacheOptions
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
	if o.BlockingPoolSize < 0 {
		return optErr("BlockingPoolSize", "%d is negative", o.BlockingPoolSize)
	}
	if o.PubSubBuffer < 0 {
		return optErr("PubSubBuffer", "%d is negative", o.PubSubBuffer)
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
	return nil
}

func (o *Options) transportConfig() transport.Config {
	addr := o.Addr
	if addr == "" {
		addr = "localhost:6379"
	}
	return transport.Config{
		Network:      o.Network,
		Addr:         addr,
		TLS:          o.TLSConfig,
		Username:     o.Username,
		Password:     o.Password,
		ClientName:   o.ClientName,
		DB:           o.DB,
		Protocol:     o.Protocol,
		Connections:  o.Connections,
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
}

// ParseURL parses a redis://, rediss:// (TLS) or unix:// URL into Options:
//
//	redis://[[user]:password@]host[:port][/db][?option=value&...]
//	rediss://... (the same, with TLS verifying the host's certificate)
//	unix://[[user]:password@]/path/to/socket[?db=N&...]
//
// Query options: db, protocol, client_name, connections, dial_timeout,
// stall_timeout, health_check_interval, fail_fast, filler (on|off),
// blocking_pool_size, pubsub_buffer.
// Errors wrap ErrInvalidOption and never contain the password.
func ParseURL(raw string) (Options, error) {
	var o Options
	u, err := url.Parse(raw)
	if err != nil {
		return o, fmt.Errorf("%w: URL: cannot parse %q", ErrInvalidOption, redact(raw))
	}
	if u.User != nil {
		o.Username = u.User.Username()
		o.Password, _ = u.User.Password()
		if _, has := u.User.Password(); !has {
			// redis://secret@host: a lone user part is the password.
			o.Password, o.Username = o.Username, ""
		}
	}
	switch u.Scheme {
	case "redis", "rediss":
		host, port := u.Hostname(), u.Port()
		if host == "" {
			host = "localhost"
		}
		if port == "" {
			port = "6379"
		}
		o.Addr = net.JoinHostPort(host, port)
		if u.Scheme == "rediss" {
			o.TLSConfig = &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		}
		if p := strings.Trim(u.Path, "/"); p != "" {
			db, err := strconv.Atoi(p)
			if err != nil || db < 0 {
				return o, optErr("URL", "database %q is not a non-negative number", p)
			}
			o.DB = db
		}
	case "unix":
		if u.Path == "" {
			return o, optErr("URL", "unix URL has no socket path")
		}
		o.Network, o.Addr = "unix", u.Path
	default:
		return o, optErr("URL", "scheme %q is not redis, rediss or unix", u.Scheme)
	}
	q := u.Query()
	for key, vals := range q {
		v := vals[len(vals)-1]
		var err error
		switch key {
		case "db":
			o.DB, err = strconv.Atoi(v)
		case "protocol":
			o.Protocol, err = strconv.Atoi(v)
		case "client_name":
			o.ClientName = v
		case "connections":
			o.Connections, err = strconv.Atoi(v)
		case "dial_timeout":
			o.DialTimeout, err = time.ParseDuration(v)
		case "stall_timeout":
			o.StallTimeout, err = time.ParseDuration(v)
		case "health_check_interval":
			o.HealthCheckInterval, err = time.ParseDuration(v)
		case "fail_fast":
			o.FailFast, err = strconv.ParseBool(v)
		case "blocking_pool_size":
			o.BlockingPoolSize, err = strconv.Atoi(v)
		case "pubsub_buffer":
			o.PubSubBuffer, err = strconv.Atoi(v)
		case "filler":
			switch v {
			case "on":
				o.Filler = FillerOn
			case "off":
				o.Filler = FillerOff
			default:
				err = fmt.Errorf("not on or off")
			}
		default:
			return o, optErr("URL", "unknown query option %q", key)
		}
		if err != nil {
			return o, optErr("URL", "option %s=%q: %v", key, v, err)
		}
	}
	if err := o.validate(); err != nil {
		return o, err
	}
	return o, nil
}

// redact hides the password of a URL that may not parse.
func redact(raw string) string {
	at := strings.LastIndexByte(raw, '@')
	scheme := strings.Index(raw, "://")
	if at < 0 || scheme < 0 || at < scheme {
		return raw
	}
	cred := raw[scheme+3 : at]
	if i := strings.IndexByte(cred, ':'); i >= 0 {
		cred = cred[:i+1] + "xxxxx"
	} else {
		cred = "xxxxx"
	}
	return raw[:scheme+3] + cred + raw[at:]
}
