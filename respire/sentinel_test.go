package respire

import (
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSentinelOptionsValidate(t *testing.T) {
	good := func() Options {
		return Options{Sentinel: &SentinelOptions{MasterName: "mymaster", Addrs: []string{"127.0.0.1:26379"}}}
	}
	g := good()
	require.NoError(t, g.validate())
	for _, tc := range []struct {
		name  string
		edit  func(o *Options)
		field string
	}{
		{"no master name", func(o *Options) { o.Sentinel.MasterName = "" }, "Sentinel.MasterName"},
		{"space in the name", func(o *Options) { o.Sentinel.MasterName = "my master" }, "Sentinel.MasterName"},
		{"no sentinels", func(o *Options) { o.Sentinel.Addrs = nil }, "Sentinel.Addrs"},
		{"not host:port", func(o *Options) { o.Sentinel.Addrs = []string{"sentinel"} }, "Sentinel.Addrs"},
		{"bad port", func(o *Options) { o.Sentinel.Addrs = []string{"h:0"} }, "Sentinel.Addrs"},
		{"bad host", func(o *Options) { o.Sentinel.Addrs = []string{"h/x:1"} }, "Sentinel.Addrs"},
		{"too many", func(o *Options) { o.Sentinel.Addrs = make([]string, 17) }, "Sentinel.Addrs"},
		{"negative poll", func(o *Options) { o.Sentinel.PollInterval = -1 }, "Sentinel.PollInterval"},
		{"with Cluster", func(o *Options) { o.Cluster = &ClusterOptions{} }, "Sentinel"},
		{"with Addr", func(o *Options) { o.Addr = "h:6379" }, "Addr"},
		{"with unix", func(o *Options) { o.Network = "unix" }, "Network"},
		{"NoTLS with TLSConfig", func(o *Options) {
			o.Sentinel.NoTLS, o.Sentinel.TLSConfig = true, &tls.Config{MinVersion: tls.VersionTLS12}
		}, "Sentinel.NoTLS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := good()
			tc.edit(&o)
			err := o.validate()
			require.ErrorIs(t, err, ErrInvalidOption)
			assert.Contains(t, err.Error(), ": "+tc.field+": ")
			_, err = NewClient(o)
			require.ErrorIs(t, err, ErrInvalidOption)
		})
	}
}

// TestSentinelTLSDefault: the sentinels get the data nodes' TLS unless
// SentinelOptions.TLSConfig or NoTLS say otherwise.
func TestSentinelTLSDefault(t *testing.T) {
	data := &tls.Config{ServerName: "data", MinVersion: tls.VersionTLS12}
	own := &tls.Config{ServerName: "sentinels", MinVersion: tls.VersionTLS12}
	for _, tc := range []struct {
		name      string
		data, own *tls.Config
		noTLS     bool
		want      *tls.Config
	}{
		{"plain", nil, nil, false, nil},
		{"data TLS, for both", data, nil, false, data},
		{"data TLS, sentinels plain", data, nil, true, nil},
		{"each its own", data, own, false, own},
		{"sentinels only", nil, own, false, own},
	} {
		so := &SentinelOptions{MasterName: "m", Addrs: []string{"h:26379"}, TLSConfig: tc.own, NoTLS: tc.noTLS}
		o := &Options{TLSConfig: tc.data, Sentinel: so}
		require.NoError(t, o.validate(), tc.name)
		assert.Same(t, tc.want, so.sentinelTLS(o), tc.name)
	}
}

func TestSentinelParseURL(t *testing.T) {
	o, err := ParseURL("redis-sentinel://s1:1,[::1]:3,[fe80::1%25eth0]/mymaster")
	require.NoError(t, err)
	assert.Equal(t, []string{"s1:1", "[::1]:3", "[fe80::1%eth0]:26379"}, o.Sentinel.Addrs)
	o, err = ParseURL("redis-sentinel://user:pw@s1:1,s2/mymaster/2?sentinel_username=su&sentinel_password=sp&sentinel_poll_interval=250ms&protocol=2")
	require.NoError(t, err)
	require.NotNil(t, o.Sentinel)
	assert.Equal(t, []string{"s1:1", "s2:26379"}, o.Sentinel.Addrs)
	assert.Equal(t, "mymaster", o.Sentinel.MasterName)
	assert.Equal(t, "su", o.Sentinel.Username)
	assert.Equal(t, "sp", o.Sentinel.Password)
	assert.Equal(t, "250ms", o.Sentinel.PollInterval.String())
	assert.Equal(t, "user", o.Username)
	assert.Equal(t, "pw", o.Password)
	assert.Equal(t, 2, o.DB)
	assert.Equal(t, 2, o.Protocol)
	assert.Empty(t, o.Addr)
	assert.Nil(t, o.TLSConfig)

	o, err = ParseURL("rediss-sentinel://[::1]/m")
	require.NoError(t, err)
	assert.Equal(t, []string{"[::1]:26379"}, o.Sentinel.Addrs)
	assert.NotNil(t, o.TLSConfig)
	assert.NotNil(t, o.Sentinel.TLSConfig)

	o, err = ParseURL("valkey-sentinel://h/m")
	require.NoError(t, err)
	assert.Equal(t, "m", o.Sentinel.MasterName)
	assert.False(t, o.Sentinel.SwitchAtPromotion)
	o, err = ParseURL("valkey-sentinel://h/m?sentinel_switch_at_promotion=true")
	require.NoError(t, err)
	assert.True(t, o.Sentinel.SwitchAtPromotion)

	for _, bad := range []string{
		"redis-sentinel://h",                // no master name
		"redis-sentinel://h/",               // no master name
		"redis-sentinel://h/m/x",            // bad db
		"redis-sentinel://h/m?cluster=true", // with Cluster
		"redis-sentinel://h/m?sentinel_poll_interval=soon",
		"redis-sentinel://h/m?sentinel_switch_at_promotion=maybe",
		"redis-sentinel://h/m?sentinel_password=a&sentinel_password=b",
		"redis-sentinel://h/m?nosuch=1",
		"redis-sentinel://h,,g/m",
		"redis-sentinel://h:0/m",
		"redis-sentinel://h/m#frag",
		"redis-sentinel://:secret@h/m?x=@",
	} {
		_, err := ParseURL(bad)
		require.ErrorIs(t, err, ErrInvalidOption, bad)
		assert.NotContains(t, err.Error(), "secret", bad)
	}
	_, err = ParseURL("redis-sentinel://:p%zz@h/m")
	require.ErrorIs(t, err, ErrInvalidOption)
	assert.True(t, strings.Contains(err.Error(), "xxxxx") || !strings.Contains(err.Error(), "p%zz"))
	assert.False(t, errors.Is(err, ErrNotSent))
}
