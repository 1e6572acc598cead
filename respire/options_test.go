package respire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseURL(t *testing.T) {
	o, err := ParseURL("redis://alice:s3cret@cache.example:6380/4?protocol=2&client_name=api&connections=3&dial_timeout=2s&fail_fast=true&read_mode=filler&blocking_pool_size=4&pubsub_buffer=99&pubsub_buffer_bytes=4096&no_batch_connections=true&no_client_info=true&no_follow_redirect=true")
	require.NoError(t, err)
	assert.Equal(t, "cache.example:6380", o.Addr)
	assert.True(t, o.NoClientInfo)
	assert.True(t, o.NoFollowRedirect)
	assert.Equal(t, "alice", o.Username)
	assert.Equal(t, "s3cret", o.Password)
	assert.Equal(t, 4, o.DB)
	assert.Equal(t, 2, o.Protocol)
	assert.Equal(t, "api", o.ClientName)
	assert.Equal(t, 3, o.Connections)
	assert.Equal(t, 2*time.Second, o.DialTimeout)
	assert.True(t, o.FailFast)
	assert.Equal(t, ReadModeFiller, o.ReadMode)
	assert.Equal(t, 4, o.BlockingPoolSize)
	assert.Equal(t, 99, o.PubSubBuffer)
	assert.Equal(t, 4096, o.PubSubBufferBytes)
	assert.True(t, o.NoBatchConnections)
	assert.Zero(t, o.BatchConnections)
	assert.Nil(t, o.TLSConfig)

	o, err = ParseURL("rediss://:pw@secure.example")
	require.NoError(t, err)
	assert.Equal(t, "secure.example:6379", o.Addr)
	require.NotNil(t, o.TLSConfig)
	assert.Equal(t, "secure.example", o.TLSConfig.ServerName)
	assert.False(t, o.TLSConfig.InsecureSkipVerify)
	assert.Equal(t, "pw", o.Password)
	assert.Empty(t, o.Username)

	o, err = ParseURL("redis://onlypassword@h:1")
	require.NoError(t, err)
	assert.Equal(t, "onlypassword", o.Password)
	assert.Empty(t, o.Username)

	o, err = ParseURL("unix:///run/redis.sock?db=2")
	require.NoError(t, err)
	assert.Equal(t, "unix", o.Network)
	assert.Equal(t, "/run/redis.sock", o.Addr)
	assert.Equal(t, 2, o.DB)

	o, err = ParseURL("redis://[::1]:7000")
	require.NoError(t, err)
	assert.Equal(t, "[::1]:7000", o.Addr)
}

func TestParseURLErrors(t *testing.T) {
	for raw, want := range map[string]string{
		"http://h":                       "scheme",
		"redis://h/abc":                  "database",
		"redis://h?protocol=4":           "Protocol",
		"redis://h?bogus=1":              "unknown query option",
		"redis://h?dial_timeout=soon":    "dial_timeout",
		"redis://h?read_mode=maybe":      "read_mode",
		"redis://h?batch_connections=x":  "batch_connections",
		"redis://h?batch_connections=-1": "batch_connections",
		"redis://h?filler=on":            "unknown query option",
		"unix://":                        "socket path",
	} {
		_, err := ParseURL(raw)
		require.Error(t, err, raw)
		assert.True(t, errors.Is(err, ErrInvalidOption), raw)
		assert.Contains(t, err.Error(), want, raw)
	}
	// Passwords never show in errors.
	_, err := ParseURL("redis://u:topsecret@h/notadb")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "topsecret")
	_, err = ParseURL("redis://u:topsecret@h:port:bad/\x7f")
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "topsecret")
}

func TestOptionsValidate(t *testing.T) {
	bad := []Options{
		{Protocol: 1},
		{Network: "udp"},
		{DB: -1},
		{Connections: -2},
		{BatchConnections: -1},
		{BatchConnections: 2, NoBatchConnections: true},
		{RetryReads: 2, NoRetryReads: true},
		{ReadSpin: -1},
		{ReadMode: ReadModeDirect, ReadSpin: time.Microsecond},
		{ReadMode: ReadModeFiller, ReadSpin: time.Microsecond},
		{ClientCache: &CacheOptions{}, ReadSpin: time.Microsecond},
		{Addr: "h:7000", Cluster: &ClusterOptions{}},
		{DialTimeout: -time.Second},
		{StallTimeout: -1},
		{ReadMode: ReadMode(9)},
		{ReadMode: -1},
	}
	for _, o := range bad {
		_, err := NewClient(o)
		require.Error(t, err, "%+v", o)
		assert.ErrorIs(t, err, ErrInvalidOption)
	}
	c, err := NewClient(Options{})
	require.NoError(t, err)
	require.NoError(t, c.Close())
}

func TestArgErrorNamesCommandAndArgument(t *testing.T) {
	err := newArgError("SET", "expiration", "EX and PX are both set")
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	assert.True(t, strings.Contains(err.Error(), "SET") && strings.Contains(err.Error(), "expiration"))
}

func TestBatchConnectionsDefaults(t *testing.T) {
	for _, c := range []struct {
		opts Options
		want int
	}{
		{Options{}, DefaultBatchConnections},
		{Options{NoBatchConnections: true}, 0},
		{Options{BatchConnections: 1}, 1},
		{Options{BatchConnections: 7}, 7},
	} {
		require.NoError(t, c.opts.validate())
		assert.Equal(t, c.want, c.opts.transportConfig().BatchLanes, "%+v", c.opts)
	}
}

func TestReadModeDefaults(t *testing.T) {
	cache := &CacheOptions{}
	cases := []struct {
		name             string
		opts             Options
		spin             time.Duration
		filler, noDirect bool
	}{
		{"zero means spin, the default", Options{}, DefaultReadSpin, false, false},
		{"spin, default duration", Options{ReadMode: ReadModeSpin}, DefaultReadSpin, false, false},
		{"explicit spin", Options{ReadSpin: 20 * time.Microsecond}, 20 * time.Microsecond, false, false},
		{"direct turns polling off", Options{ReadMode: ReadModeDirect}, 0, false, false},
		{"background", Options{ReadMode: ReadModeBackground}, 0, false, true},
		{"filler", Options{ReadMode: ReadModeFiller}, 0, true, true},
		{"no polling with a client-side cache", Options{ClientCache: cache}, 0, false, false},
		{"unless asked for", Options{ClientCache: cache, ReadMode: ReadModeSpin}, DefaultReadSpin, false, false},
		{"asked for with a duration", Options{ClientCache: cache, ReadMode: ReadModeSpin, ReadSpin: time.Microsecond}, time.Microsecond, false, false},
	}
	for _, c := range cases {
		require.NoError(t, c.opts.validate(), c.name)
		cfg := c.opts.transportConfig()
		assert.Equal(t, c.spin, cfg.ReadSpin, c.name)
		assert.Equal(t, c.filler, cfg.Filler, c.name)
		assert.Equal(t, c.noDirect, cfg.NoDirectRead, c.name)
	}
}

func TestReadModeErrorsNameTheFix(t *testing.T) {
	_, err := NewClient(Options{ReadMode: ReadModeBackground, ReadSpin: time.Microsecond})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "ReadModeBackground, which does not poll")
	_, err = NewClient(Options{ClientCache: &CacheOptions{}, ReadSpin: time.Microsecond})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "ReadModeSpin")
	_, err = NewClient(Options{ReadSpin: -1})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "ReadModeDirect")
	_, err = NewClient(Options{Addr: "h:7000", Cluster: &ClusterOptions{}})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "Cluster.Addrs")
	assert.Equal(t, "ReadMode(9)", ReadMode(9).String())
}

func TestCredentialsOption(t *testing.T) {
	provider := func(context.Context) (string, string, error) { return "u", "p", nil }
	_, err := NewClient(Options{Password: "p", Credentials: provider})
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "Credentials")

	c, err := NewClient(Options{})
	require.NoError(t, err)
	defer c.Close()
	err = c.Reauthenticate(context.Background())
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.Contains(t, err.Error(), "Credentials")
}
