package respire

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseURLSchemesAndHosts(t *testing.T) {
	for raw, want := range map[string]struct {
		addr string
		tls  bool
	}{
		"valkey://h:7000":          {"h:7000", false},
		"valkeys://h":              {"h:6379", true},
		"REDIS://h":                {"h:6379", false},
		"redis://":                 {"localhost:6379", false},
		"redis://:7000":            {"localhost:7000", false},
		"redis://u:pw@:7000/":      {"localhost:7000", false},
		"redis://[fe80::1%25eth0]": {"[fe80::1%eth0]:6379", false},
		"redis://10.0.0.1:06379":   {"10.0.0.1:06379", false},
		"redis://my_host.svc":      {"my_host.svc:6379", false},
		"rediss://[::1]:7000":      {"[::1]:7000", true},
	} {
		o, err := ParseURL(raw)
		require.NoError(t, err, raw)
		assert.Equal(t, want.addr, o.Addr, raw)
		assert.Equal(t, want.tls, o.TLSConfig != nil, raw)
	}
	o, err := ParseURL("valkeys://cache.example:6380")
	require.NoError(t, err)
	assert.Equal(t, "cache.example", o.TLSConfig.ServerName)

	// The user part of a unix URL authenticates, as in a redis:// URL.
	o, err = ParseURL("unix://app:pw@/run/redis.sock?db=3")
	require.NoError(t, err)
	assert.Equal(t, "app", o.Username)
	assert.Equal(t, "pw", o.Password)
	assert.Equal(t, "/run/redis.sock", o.Addr)
	assert.Equal(t, 3, o.DB)
}

func TestParseURLDatabase(t *testing.T) {
	for raw, db := range map[string]int{
		"redis://h/1":             1,
		"redis://h?db=2":          2,
		"redis://h/3?db=3":        3, // the same number twice is accepted
		"redis://h/4?db=04":       4,
		"redis://h?db=5&db=5":     5,
		"redis://h/":              0,
		"redis://h?retry_reads=1": 0,
		"redis://h1,h2/3":         3, // a cluster's database (Valkey 9 cluster-databases)
	} {
		o, err := ParseURL(raw)
		require.NoError(t, err, raw)
		assert.Equal(t, db, o.DB, raw)
	}
	o, err := ParseURL("redis://h?retry_reads=2")
	require.NoError(t, err)
	assert.Equal(t, 2, o.RetryReads)
	o, err = ParseURL("redis://h?no_retry_reads=true&no_batch_connections=true")
	require.NoError(t, err)
	assert.True(t, o.NoRetryReads)
	assert.True(t, o.NoBatchConnections)
}

func TestParseURLRefuses(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://host:6379,host2:x":                 "cannot parse",
		"redis://h1,,h2":                            "empty host",
		"redis://a:b:6379":                          "brackets",
		"redis://::1":                               "brackets",
		"redis://[h]:6379":                          "[h]", // url.Parse refuses these itself
		"redis://[10.0.0.1]":                        "[10.0.0.1]",
		"redis://h:":                                "no port",
		"redis://h:0":                               "port",
		"redis://h:65536":                           "port",
		"redis://h:99999999999999999":               "port",
		"redis://h!x":                               "character",
		"redis://h/1?db=2":                          "database 1 in the path and 2 in the query",
		"redis://h?db=1&db=2":                       "given twice",
		"redis://h?read_mode=spin&read_mode=direct": "given twice",
		"redis://h/1/2":                             "database number",
		"redis://h//1":                              "database number",
		"redis://h/-1":                              "database number",
		"redis://h/+1":                              "database number",
		"redis://h?db=-1":                           "db",
		"redis://h?db=+1":                           "db",
		"redis://h?connections=-1":                  "connections",
		"redis://h?retry_reads=-1":                  "retry_reads",
		"redis://h?retry_reads=x":                   "retry_reads",
		"redis://h?retry_reads=0":                   "write no_retry_reads=true to turn retries off",
		"redis://h?batch_connections=0":             "write no_batch_connections=true for none",
		"redis://h?no_retry_reads=maybe":            "no_retry_reads",
		"redis://h?db=%zz":                          "query",
		"redis://h?db=1;x=2":                        "query",
		"redis://h#frag":                            "fragment",
		"redis://h#":                                "fragment",
		"redis:h":                                   "two slashes",
		"redis:":                                    "two slashes",
		"redis:/h":                                  "two slashes",
		"unix://host/run/redis.sock":                "host",
		"unix://:6379/run/redis.sock":               "host",
		"unix:///":                                  "socket path",
		"unix:/run/redis.sock":                      "two slashes",
		"redis://h?client_name=a+b":                 "ClientName",
		"redis://h?client_name=a@b":                 "'@' after the host",
		"sentinel://h":                              "scheme",
		"redis://h?dial_timeout=-1s":                "DialTimeout",
	} {
		o, err := ParseURL(raw)
		require.Error(t, err, raw)
		assert.ErrorIs(t, err, ErrInvalidOption, raw)
		assert.Contains(t, err.Error(), want, raw)
		assert.Equal(t, Options{}, o, raw)
	}
}

// A password never shows in an error, written right or wrong: a '/', '?'
// or '#' in it, unescaped, moves the rest of it into the path, the query or
// the fragment.
func TestParseURLErrorsHideThePassword(t *testing.T) {
	for _, raw := range []string{
		"redis://u:s3cr3t@h/notadb",
		"redis://u:s3cr3t@h:bad",
		"redis://u:s3cr3t@h?bogus=1",
		"redis://s3cr3t@h,h2:x",
		"redis://u:s3cr3t@h\x7f",
		"redis://u:12/s3cr3t@h",
		"redis://u:12?s3cr3t@h",
		"redis://u:12?x=s3cr3t@h",
		"redis://u:1#s3cr3t@h",
		"redis://u:s3/cr3t@h",
		"redis://u:s3%zzcr3t@h",
		"redis://u:s3[cr3t@h",
		"redis:u:s3cr3t@h",
		"redis:/u:s3cr3t@h\x7f",
		"u:s3cr3t@h",
		"s3cr3t@h\x7f",
		"unix://u:s3cr3t@host/sock",
	} {
		_, err := ParseURL(raw)
		require.Error(t, err, raw)
		assert.ErrorIs(t, err, ErrInvalidOption, raw)
		assert.NotContains(t, err.Error(), "s3cr3t", raw)
		assert.NotContains(t, err.Error(), "cr3t", raw)
	}
}

func TestRedact(t *testing.T) {
	for raw, want := range map[string]string{
		"redis://u:pw@h":  "redis://u:xxxxx@h",
		"redis://pw@h":    "redis://xxxxx@h",
		"redis://u:p@w@h": "redis://u:xxxxx@h",
		"redis:u:pw@h":    "redis:u:xxxxx@h",
		"u:pw@h":          "u:xxxxx@h",
		"pw@h":            "xxxxx@h",
		"redis://h":       "redis://h",
		"redis://h/x@y":   "redis://xxxxx@y",
	} {
		assert.Equal(t, want, redact(raw), raw)
	}
}

func TestOptionsValidateAddr(t *testing.T) {
	for _, o := range []Options{
		{Addr: "::6379"},
		{Addr: ":6379"},
		{Addr: " localhost:6379"},
		{Addr: "localhost:6379 "},
		{Addr: "localhost"},
		{Addr: "localhost:redis"},
		{Addr: "localhost:0"},
		{Addr: "localhost:70000"},
		{Addr: "h1:6379,h2:6379"},
		{Addr: "[::1:6379"},
		{Addr: "fe80::1:6379"},
		{Addr: "/run/redis.sock", Network: "tcp"},
		{Network: "unix"},
		{Network: "unix", Addr: "/run/\x00redis.sock"},
	} {
		_, err := NewClient(o)
		require.Error(t, err, "%+v", o)
		assert.ErrorIs(t, err, ErrInvalidOption, "%+v", o)
		assert.Contains(t, err.Error(), "Addr", "%+v", o)
	}
	for _, o := range []Options{
		{},
		{Addr: "localhost:6379"},
		{Addr: "10.1.2.3:1"},
		{Addr: "[::1]:6379"},
		{Addr: "[fe80::1%eth0]:6379"},
		{Addr: "/run/redis.sock"},
		{Addr: "relative.sock", Network: "unix"},
		{Addr: "redis_1:65535", Network: "tcp4"},
	} {
		c, err := NewClient(o)
		require.NoError(t, err, "%+v", o)
		require.NoError(t, c.Close())
	}
}

func TestOptionsValidateMore(t *testing.T) {
	for _, c := range []struct {
		field string
		opts  Options
	}{
		{"ClientName", Options{ClientName: "my app"}},
		{"ClientName", Options{ClientName: "caf\u00e9"}},
		{"MaxRetryBackoff", Options{MinRetryBackoff: time.Second, MaxRetryBackoff: time.Millisecond}},
		{"WatchRetries", Options{WatchRetries: -3}},
	} {
		_, err := NewClient(c.opts)
		require.Error(t, err, "%+v", c.opts)
		assert.ErrorIs(t, err, ErrInvalidOption)
		assert.Contains(t, err.Error(), c.field)
	}
	// MinRetryBackoff alone above the default cap raises the cap.
	c, err := NewClient(Options{MinRetryBackoff: 5 * time.Second})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func TestCacheOptionsPrefixesMustNotOverlap(t *testing.T) {
	for _, prefixes := range [][]string{
		{"user:", "user:"},
		{"user:", "user:42:"},
		{"", "a"},
	} {
		_, err := NewClient(Options{ClientCache: &CacheOptions{Broadcast: true, Prefixes: prefixes}})
		require.Error(t, err, "%q", prefixes)
		assert.ErrorIs(t, err, ErrInvalidOption)
		assert.Contains(t, err.Error(), "overlap")
	}
	c, err := NewClient(Options{ClientCache: &CacheOptions{Broadcast: true, Prefixes: []string{"user:", "order:", "u"}, Policy: CacheLRU}})
	if err == nil {
		c.Close()
	}
	require.ErrorContains(t, err, "overlap", `"user:" starts with "u"`)
	c, err = NewClient(Options{ClientCache: &CacheOptions{Broadcast: true, Prefixes: []string{"user:", "order:"}}})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

// Several hosts are a cluster's seeds; cluster=true makes a single host one.
func TestParseURLCluster(t *testing.T) {
	o, err := ParseURL("redis://u:pw@h1:7000,h2,h3:7002?read_from=prefer_replica")
	require.NoError(t, err)
	require.NotNil(t, o.Cluster)
	assert.Equal(t, []string{"h1:7000", "h2:6379", "h3:7002"}, o.Cluster.Addrs)
	assert.Equal(t, "", o.Addr)
	assert.Equal(t, "pw", o.Password)
	assert.Equal(t, ReadPreferReplica, o.ReadFrom)
	o, err = ParseURL("rediss://h:7000?cluster=true")
	require.NoError(t, err)
	require.NotNil(t, o.Cluster)
	assert.Equal(t, []string{"h:7000"}, o.Cluster.Addrs)
	assert.Empty(t, o.Addr)
	assert.Empty(t, o.TLSConfig.ServerName, "each node's certificate is checked against its own host")
	o, err = ParseURL("valkeys://a:1,b:2")
	require.NoError(t, err)
	assert.Empty(t, o.TLSConfig.ServerName, "each node's certificate is checked against its own host")
	o, err = ParseURL("redis://h1,h2?read_from=nearest")
	require.NoError(t, err)
	assert.Equal(t, ReadNearest, o.ReadFrom)
	_, err = ParseURL("redis://h?read_from=closest")
	assert.ErrorIs(t, err, ErrInvalidOption)
}

// Our own spellings of the options that go-redis's URLs also have.
func TestParseURLOptions(t *testing.T) {
	o, err := ParseURL("redis://h?min_retry_backoff=10ms&max_retry_backoff=1s&read_mode=background&batch_connections=5")
	require.NoError(t, err)
	assert.Equal(t, 10*time.Millisecond, o.MinRetryBackoff)
	assert.Equal(t, time.Second, o.MaxRetryBackoff)
	assert.Equal(t, ReadModeBackground, o.ReadMode)
	assert.Equal(t, 5, o.BatchConnections)
	assert.False(t, o.NoBatchConnections)
	for v, want := range map[string]ReadMode{"spin": ReadModeSpin, "direct": ReadModeDirect, "background": ReadModeBackground, "filler": ReadModeFiller} {
		o, err := ParseURL("redis://h?read_mode=" + v)
		require.NoError(t, err, v)
		assert.Equal(t, want, o.ReadMode, v)
	}
	o, err = ParseURL("redis://h?read_mode=spin&read_spin=20us")
	require.NoError(t, err)
	assert.Equal(t, 20*time.Microsecond, o.ReadSpin)
	_, err = ParseURL("redis://h?read_mode=direct&read_spin=20us")
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "does not poll")
}

// A go-redis URL: the options that map are read, the others are refused
// with what to use instead.
func TestParseURLGoRedisOptions(t *testing.T) {
	o, err := ParseURL("redis://:pw@h:6380/2?dial_timeout=3s&max_retries=5&min_retry_backoff=8ms&max_retry_backoff=512ms&client_name=app&protocol=3")
	require.NoError(t, err)
	assert.Equal(t, 2, o.DB)
	assert.Equal(t, 3*time.Second, o.DialTimeout)
	assert.Equal(t, 5, o.RetryReads)
	assert.Equal(t, 8*time.Millisecond, o.MinRetryBackoff)
	assert.Equal(t, 512*time.Millisecond, o.MaxRetryBackoff)
	assert.Equal(t, "app", o.ClientName)
	assert.Equal(t, 3, o.Protocol)

	o, err = ParseURL("redis://h?max_retries=-1")
	require.NoError(t, err)
	assert.True(t, o.NoRetryReads, "-1 turns retries off in go-redis")
	o, err = ParseURL("redis://h?max_retries=0")
	require.NoError(t, err)
	assert.False(t, o.NoRetryReads, "0 is the default in go-redis")
	assert.Equal(t, DefaultRetryReads, o.retryReads())
	_, err = ParseURL("redis://h?max_retries=-2")
	require.ErrorIs(t, err, ErrInvalidOption)

	for key, instead := range map[string]string{
		"read_timeout=1s":         "context.WithTimeout",
		"write_timeout=1s":        "context.WithTimeout",
		"pool_timeout=1s":         "context.WithTimeout",
		"pool_size=100":           "connections",
		"pool_fifo=true":          "connections",
		"min_idle_conns=4":        "connections",
		"max_idle_conns=4":        "connections",
		"max_active_conns=4":      "blocking_pool_size",
		"conn_max_idle_time=1m":   "health_check_interval",
		"conn_max_lifetime=1h":    "health_check_interval",
		"idle_timeout=1m":         "health_check_interval",
		"max_conn_age=1h":         "health_check_interval",
		"idle_check_frequency=1m": "health_check_interval",
		"skip_verify=true":        "TLSConfig",
		"addr=h2:7001":            "redis://h1:7000,h2:7001",
		"max_redirects=3":         "context",
		"read_only=true":          "read_from=prefer_replica",
		"route_by_latency=true":   "read_from=nearest",
		"route_randomly=true":     "read_from=prefer_replica",
	} {
		_, err := ParseURL("redis://h?" + key)
		require.ErrorIs(t, err, ErrInvalidOption, key)
		name, _, _ := strings.Cut(key, "=")
		assert.Contains(t, err.Error(), "option "+name+" has no equivalent here", key)
		assert.Contains(t, err.Error(), instead, key)
	}
}

// The scheme error lists every scheme ParseURL accepts, and those only.
func TestParseURLSchemeErrorListsAll(t *testing.T) {
	_, err := ParseURL("http://h")
	require.ErrorIs(t, err, ErrInvalidOption)
	_, list, ok := strings.Cut(err.Error(), " is not ")
	require.True(t, ok, err.Error())
	named := strings.Split(strings.Replace(list, " or ", ", ", 1), ", ")
	assert.ElementsMatch(t, []string{"redis", "rediss", "valkey", "valkeys", "unix",
		"redis-sentinel", "rediss-sentinel", "valkey-sentinel", "valkeys-sentinel"}, named)
	for _, scheme := range named {
		raw := scheme + "://h"
		switch {
		case scheme == "unix":
			raw = "unix:///run/redis.sock"
		case strings.HasSuffix(scheme, "-sentinel"):
			raw += "/mymaster"
		}
		_, err := ParseURL(raw)
		assert.NoError(t, err, "the error names %s, which must be accepted", scheme)
	}
}
