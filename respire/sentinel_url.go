package respire

import (
	"crypto/tls"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// sentinelSchemes maps the Sentinel URL schemes to the scheme of the data
// nodes' options.
var sentinelSchemes = map[string]string{
	"redis-sentinel":   "redis",
	"rediss-sentinel":  "rediss",
	"valkey-sentinel":  "valkey",
	"valkeys-sentinel": "valkeys",
}

// DefaultSentinelPort is the port of a sentinel address given without one
// in a Sentinel URL.
const DefaultSentinelPort = "26379"

// parseSentinelURL parses the Sentinel form of ParseURL:
//
//	redis-sentinel://[[user]:password@]host[:port][,host[:port]...]/master-name[/db][?option=value&...]
//
// (rediss-sentinel:// for TLS to the data nodes and the sentinels,
// valkey-sentinel:// and valkeys-sentinel:// the same). The hosts are
// sentinels (default port 26379); the user part authenticates to the data
// nodes; sentinel_username and sentinel_password authenticate to the
// sentinels, sentinel_poll_interval sets SentinelOptions.PollInterval and
// sentinel_switch_at_promotion (true or false) SwitchAtPromotion;
// every other option is ParseURL's. ok is false for another scheme.
func parseSentinelURL(raw string) (o Options, ok bool, err error) {
	scheme, rest, found := strings.Cut(raw, "://")
	base, known := sentinelSchemes[strings.ToLower(scheme)]
	if !found || !known {
		return Options{}, false, nil
	}
	if strings.IndexByte(raw, '#') >= 0 {
		return Options{}, true, optErr("URL", "a fragment (#...) has no meaning here; write a '#' in a password as %%23")
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 && strings.IndexByte(rest[i:], '@') >= 0 {
		return Options{}, true, optErr("URL", "'@' after the host: write '/' and '?' in a password as %%2F and %%3F, and '@' in a query value as %%40")
	}
	// The hosts are split here: url.Parse reads no list of hosts whose
	// last one lacks a port.
	auth, tail := rest, ""
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		auth, tail = rest[:i], rest[i:]
	}
	user, hosts := "", auth
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		user, hosts = auth[:at+1], auth[at+1:]
	}
	u, perr := url.Parse(scheme + "://" + user + "sentinels" + tail)
	if perr != nil || u.Opaque != "" {
		return Options{}, true, optErr("URL", "cannot parse %q", redact(raw))
	}
	var addrs []string
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			return Options{}, true, optErr("URL", "an empty sentinel host in %q", hosts)
		}
		hu, err := url.Parse("//" + h)
		if err != nil || hu.User != nil {
			return Options{}, true, optErr("URL", "sentinel host %q is not host[:port]", h)
		}
		host, port, err := urlHostPort(hu)
		if err != nil {
			return Options{}, true, err
		}
		if !strings.Contains(h, ":") || strings.HasSuffix(h, "]") {
			port = DefaultSentinelPort
		}
		addrs = append(addrs, net.JoinHostPort(host, port))
	}
	name, dbPath, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if name == "" {
		return Options{}, true, optErr("URL", "no master name: write %s://host:26379/master-name", scheme)
	}
	so := &SentinelOptions{MasterName: name, Addrs: addrs}
	q := u.Query()
	for key, set := range map[string]func(string) error{
		"sentinel_username": func(v string) error { so.Username = v; return nil },
		"sentinel_password": func(v string) error { so.Password = v; return nil },
		"sentinel_poll_interval": func(v string) (err error) {
			so.PollInterval, err = time.ParseDuration(v)
			return err
		},
		"sentinel_switch_at_promotion": func(v string) (err error) {
			so.SwitchAtPromotion, err = strconv.ParseBool(v)
			return err
		},
	} {
		vals, has := q[key]
		if !has {
			continue
		}
		for _, v := range vals[1:] {
			if v != vals[0] {
				return Options{}, true, optErr("URL", "option %s is given twice, with different values", key)
			}
		}
		if err := set(vals[0]); err != nil {
			return Options{}, true, optErr("URL", "option %s: %v", key, err)
		}
		q.Del(key)
	}
	// The rest is an ordinary URL of the data nodes, checked as such.
	data := url.URL{Scheme: base, User: u.User, Host: "localhost", RawQuery: q.Encode()}
	if dbPath != "" {
		data.Path = "/" + dbPath
	}
	o, err = ParseURL(data.String())
	if err != nil {
		return Options{}, true, err
	}
	o.Addr = ""
	if o.TLSConfig != nil {
		// Each data node's certificate is checked against its own host,
		// and each sentinel's too.
		o.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
		so.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12}
	}
	o.Sentinel = so
	if err := o.validate(); err != nil {
		return Options{}, true, err
	}
	return o, true, nil
}
