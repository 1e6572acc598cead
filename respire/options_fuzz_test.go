package respire

import (
	"errors"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseURL feeds arbitrary text to ParseURL. It must never panic; it
// fails with errors that wrap ErrInvalidOption and return zero Options; what
// it accepts passes validate and parses back to the same Options when
// written out again; and a password put into the URL never shows in an
// error. Seeds: testdata/fuzz/FuzzParseURL.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{
		"redis://alice:pw@cache.example:6380/4?protocol=2&client_name=api&dial_timeout=2s&read_mode=filler",
		"rediss://:pw@[::1]:7000?db=3&db=3",
		"valkeys://h?retry_reads=2&fail_fast=1",
		"unix://u:pw@/run/redis.sock?db=2",
		"redis://h1:6379,h2:6379",
		"redis://h:7000?cluster=true&read_mode=spin&read_spin=10us&max_retries=-1&no_batch_connections=true&min_retry_backoff=1ms",
		"redis://u:12/pw@h?x=1#f",
		"redis:opaque",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		o, err := ParseURL(raw)
		if err != nil {
			if !errors.Is(err, ErrInvalidOption) {
				t.Fatalf("ParseURL(%q): %v does not wrap ErrInvalidOption", raw, err)
			}
			if !reflect.DeepEqual(o, Options{}) {
				t.Fatalf("ParseURL(%q) failed but returned %+v", raw, o)
			}
		} else {
			if err := o.validate(); err != nil {
				t.Fatalf("ParseURL(%q) accepted options that fail validate: %v", raw, err)
			}
			again := formatURL(o)
			o2, err := ParseURL(again)
			if err != nil {
				t.Fatalf("ParseURL(%q) gave %+v, written out as %q, which fails: %v", raw, o, again, err)
			}
			if !sameURLOptions(o, o2) {
				t.Fatalf("ParseURL(%q) = %+v, but its form %q parses to %+v", raw, o, again, o2)
			}
		}
		checkPasswordHidden(t, raw)
	})
}

// checkPasswordHidden puts a known password into the user part of raw, in
// several forms, and checks that an error never shows it.
func checkPasswordHidden(t *testing.T, raw string) {
	const secret = "s3cr3t"
	if l := strings.ToLower(raw); strings.Contains(l, "cr3t") || strings.Contains(l, "%33") {
		return // the fuzzer wrote it (or its escaped form) elsewhere itself
	}
	for _, user := range []string{"u:" + secret + "@", secret + "@", "u:s%33cr3t@", ":" + secret + "@"} {
		var withPw string
		switch i, j := strings.Index(raw, "://"), strings.IndexByte(raw, ':'); {
		case i >= 0:
			withPw = raw[:i+3] + user + raw[i+3:]
		case j >= 0:
			withPw = raw[:j+1] + user + raw[j+1:] // redis:u:s3cr3t@host
		default:
			withPw = user + raw
		}
		o, err := ParseURL(withPw)
		if err != nil {
			if s := err.Error(); strings.Contains(s, "cr3t") || strings.Contains(s, "%33") {
				t.Fatalf("ParseURL(%q): the error shows the password: %v", withPw, err)
			}
			continue
		}
		// It stays in the user part, whatever raw holds.
		if !strings.HasPrefix(o.Password, secret) && !strings.Contains(o.Username, secret) {
			t.Fatalf("ParseURL(%q): user %q, password %q: where did %q go?", withPw, o.Username, o.Password, secret)
		}
	}
}

// formatURL writes o, as ParseURL returned it, back as a URL.
func formatURL(o Options) string {
	u := url.URL{Scheme: "redis", Host: o.Addr}
	if o.TLSConfig != nil {
		u.Scheme = "rediss"
	}
	if o.Username != "" || o.Password != "" {
		u.User = url.UserPassword(o.Username, o.Password)
	}
	q := url.Values{}
	if o.Network == "unix" {
		u.Scheme, u.Host, u.Path = "unix", "", o.Addr
		// ParseURL refuses an '@' after the host, which a path may keep
		// unescaped.
		u.RawPath = strings.ReplaceAll(u.EscapedPath(), "@", "%40")
		if o.DB != 0 {
			q.Set("db", strconv.Itoa(o.DB))
		}
	} else if o.DB != 0 {
		u.Path = "/" + strconv.Itoa(o.DB)
	}
	if o.Cluster != nil {
		if len(o.Cluster.Addrs) > 1 {
			u.Host = strings.Join(o.Cluster.Addrs, ",")
		} else {
			u.Host = strings.Join(o.Cluster.Addrs, "")
			q.Set("cluster", "true")
		}
	}
	switch o.ReadFrom {
	case ReadPreferReplica:
		q.Set("read_from", "prefer_replica")
	case ReadReplica:
		q.Set("read_from", "replica")
	}
	set := func(key string, v int) {
		if v != 0 {
			q.Set(key, strconv.Itoa(v))
		}
	}
	set("protocol", o.Protocol)
	set("connections", o.Connections)
	set("blocking_pool_size", o.BlockingPoolSize)
	set("pubsub_buffer", o.PubSubBuffer)
	set("pubsub_buffer_bytes", o.PubSubBufferBytes)
	set("retry_reads", o.RetryReads)
	set("batch_connections", o.BatchConnections)
	if o.NoBatchConnections {
		q.Set("no_batch_connections", "true")
	}
	if o.NoRetryReads {
		q.Set("no_retry_reads", "true")
	}
	if o.ClientName != "" {
		q.Set("client_name", o.ClientName)
	}
	for key, d := range map[string]int64{
		"dial_timeout": int64(o.DialTimeout), "stall_timeout": int64(o.StallTimeout),
		"health_check_interval": int64(o.HealthCheckInterval), "read_spin": int64(o.ReadSpin),
		"min_retry_backoff": int64(o.MinRetryBackoff), "max_retry_backoff": int64(o.MaxRetryBackoff),
	} {
		if d != 0 {
			q.Set(key, strconv.FormatInt(d, 10)+"ns")
		}
	}
	if o.FailFast {
		q.Set("fail_fast", "true")
	}
	if o.NoClientInfo {
		q.Set("no_client_info", "true")
	}
	if o.ReadMode != ReadModeDefault {
		q.Set("read_mode", strings.ToLower(strings.TrimPrefix(o.ReadMode.String(), "ReadMode")))
	}
	u.RawQuery = q.Encode()
	return u.String()
}

// sameURLOptions compares what ParseURL sets.
func sameURLOptions(a, b Options) bool {
	if (a.TLSConfig == nil) != (b.TLSConfig == nil) {
		return false
	}
	if a.TLSConfig != nil && (a.TLSConfig.ServerName != b.TLSConfig.ServerName || a.TLSConfig.MinVersion != b.TLSConfig.MinVersion) {
		return false
	}
	if (a.Cluster == nil) != (b.Cluster == nil) {
		return false
	}
	if a.Cluster != nil && strings.Join(a.Cluster.Addrs, ",") != strings.Join(b.Cluster.Addrs, ",") {
		return false
	}
	a.TLSConfig, b.TLSConfig = nil, nil
	a.Cluster, b.Cluster = nil, nil
	// DeepEqual: Options holds funcs, nil in what ParseURL returns.
	return reflect.DeepEqual(a, b)
}
