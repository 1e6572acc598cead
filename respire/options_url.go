package respire

import (
	"crypto/tls"
	"errors"
	"maps"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

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
// nodes of a cluster to start from (Options.Cluster.Addrs); so does a
// single host with cluster=true. A lone user part
// (redis://secret@host) is the password of the default user. A unix URL
// has no host (three slashes); its user part authenticates as in a redis://
// URL. The path of a redis:// URL is empty or one database number; a
// database given both in the path and as db in the query must be the same
// number in both.
//
// Query options (the names of Options fields in snake case): db,
// protocol, client_name, no_client_info, no_follow_redirect, connections,
// batch_connections, no_batch_connections, dial_timeout, stall_timeout,
// health_check_interval, min_retry_backoff, max_retry_backoff, fail_fast,
// read_mode (spin, direct, background or filler), read_spin,
// blocking_pool_size, pubsub_buffer, pubsub_buffer_bytes, retry_reads,
// no_retry_reads, cluster (true or false), read_from (primary,
// prefer_replica, replica, nearest, zone_replica or zone),
// availability_zone. Numbers are decimal digits,
// durations are written as for time.ParseDuration. An option given twice
// must have the same text both times.
//
// A go-redis URL is read too: max_retries sets RetryReads (only reads are
// resent here; -1 sets NoRetryReads, 0 keeps the default), and
// db, protocol, client_name, dial_timeout, min_retry_backoff and
// max_retry_backoff are the options above. Its options that have no
// equivalent (read_timeout, write_timeout, pool_size, pool_timeout,
// min_idle_conns, conn_max_idle_time, skip_verify, route_by_latency, ...)
// are errors that name what to use instead.
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
				return Options{}, optErr("URL", "an IPv6 address in a list of hosts: give the nodes in Options.Cluster.Addrs")
			}
			seeds = append(seeds, net.JoinHostPort(host, port))
		}
		o.Cluster = &ClusterOptions{Addrs: seeds}
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
	if o.Cluster != nil && o.Addr != "" && o.Network != "unix" {
		// cluster=true with one host: the one node to start from.
		o.Cluster.Addrs, o.Addr = []string{o.Addr}, ""
		if o.TLSConfig != nil {
			// Each node's certificate is checked against its own host.
			o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
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
	case "no_follow_redirect":
		o.NoFollowRedirect, err = strconv.ParseBool(v)
	case "connections":
		o.Connections, err = parseCount(v)
	case "batch_connections":
		// 0 would mean the default, as in Options: refused, so that no
		// URL means other than the field it names.
		if o.BatchConnections, err = parseCount(v); err == nil && o.BatchConnections == 0 {
			err = errors.New("0 would mean the default, as Options.BatchConnections 0 does: write no_batch_connections=true for none")
		}
	case "no_batch_connections":
		o.NoBatchConnections, err = strconv.ParseBool(v)
	case "dial_timeout":
		o.DialTimeout, err = time.ParseDuration(v)
	case "stall_timeout":
		o.StallTimeout, err = time.ParseDuration(v)
	case "health_check_interval":
		o.HealthCheckInterval, err = time.ParseDuration(v)
	case "min_retry_backoff":
		o.MinRetryBackoff, err = time.ParseDuration(v)
	case "max_retry_backoff":
		o.MaxRetryBackoff, err = time.ParseDuration(v)
	case "fail_fast":
		o.FailFast, err = strconv.ParseBool(v)
	case "blocking_pool_size":
		o.BlockingPoolSize, err = parseCount(v)
	case "pubsub_buffer":
		o.PubSubBuffer, err = parseCount(v)
	case "pubsub_buffer_bytes":
		o.PubSubBufferBytes, err = parseCount(v)
	case "retry_reads":
		if o.RetryReads, err = parseCount(v); err == nil && o.RetryReads == 0 {
			err = errors.New("0 would mean the default (3), as Options.RetryReads 0 does: write no_retry_reads=true to turn retries off")
		}
	case "no_retry_reads":
		o.NoRetryReads, err = strconv.ParseBool(v)
	case "max_retries":
		// go-redis's spelling: -1 turns retries off, 0 keeps the default.
		if v == "-1" {
			o.NoRetryReads = true
		} else {
			o.RetryReads, err = parseCount(v)
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
		case "zone_replica":
			o.ReadFrom = ReadZoneReplica
		case "zone":
			o.ReadFrom = ReadZone
		default:
			err = errors.New("not primary, prefer_replica, replica, nearest, zone_replica or zone")
		}
	case "availability_zone":
		o.AvailabilityZone = v
	case "read_mode":
		switch v {
		case "spin":
			o.ReadMode = ReadModeSpin
		case "direct":
			o.ReadMode = ReadModeDirect
		case "background":
			o.ReadMode = ReadModeBackground
		case "filler":
			o.ReadMode = ReadModeFiller
		default:
			err = errors.New("not spin, direct, background or filler")
		}
	case "read_spin":
		o.ReadSpin, err = time.ParseDuration(v)
	default:
		if instead, ok := unmappedURLOptions[key]; ok {
			return optErr("URL", "option %s has no equivalent here: %s", key, instead)
		}
		return optErr("URL", "unknown query option %q", key)
	}
	if err != nil {
		return optErr("URL", "option %s=%q: %v", key, v, err)
	}
	return nil
}

// unmappedURLOptions are the query options of go-redis's ParseURL and
// ParseClusterURL that have no Respire equivalent, with what to use
// instead. Those that map (db, protocol, client_name, dial_timeout,
// max_retries, min_retry_backoff, max_retry_backoff) are read by
// setURLOption.
var unmappedURLOptions = map[string]string{
	"read_timeout":         "give each call a context with a deadline (context.WithTimeout); stall_timeout replaces a connection whose replies stop coming",
	"write_timeout":        "give each call a context with a deadline (context.WithTimeout); stall_timeout replaces a connection whose replies stop coming",
	"pool_timeout":         "a command waits for a connection within its context; give it a deadline (context.WithTimeout)",
	"pool_size":            "commands share multiplexed connections (connections, default 1; batch_connections for concurrent batches); blocking commands use blocking_pool_size",
	"pool_fifo":            "there is no pool of idle connections: commands share multiplexed connections (connections)",
	"min_idle_conns":       "there is no pool of idle connections: commands share multiplexed connections (connections)",
	"max_idle_conns":       "there is no pool of idle connections: commands share multiplexed connections (connections)",
	"max_active_conns":     "commands share multiplexed connections (connections); blocking commands use blocking_pool_size",
	"conn_max_idle_time":   "connections are kept and checked with a PING when idle (health_check_interval)",
	"conn_max_lifetime":    "connections are kept and checked with a PING when idle (health_check_interval)",
	"idle_timeout":         "connections are kept and checked with a PING when idle (health_check_interval)",
	"max_conn_age":         "connections are kept and checked with a PING when idle (health_check_interval)",
	"idle_check_frequency": "connections are kept and checked with a PING when idle (health_check_interval)",
	"skip_verify":          "a URL cannot turn off certificate verification; set Options.TLSConfig (InsecureSkipVerify) in code",
	"addr":                 "list a cluster's nodes in the host part: redis://h1:7000,h2:7001",
	"max_redirects":        "redirects are followed for as long as the command's context allows",
	"read_only":            "use read_from=prefer_replica (or replica)",
	"route_by_latency":     "use read_from=nearest",
	"route_randomly":       "use read_from=prefer_replica",
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
		return false, optErr("URL", "scheme %q is not redis, rediss, valkey, valkeys, unix, redis-sentinel, rediss-sentinel, valkey-sentinel or valkeys-sentinel", u.Scheme)
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
