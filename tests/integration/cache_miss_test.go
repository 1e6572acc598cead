package integration

import (
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Negative caching: a missing key (or field) is cached by default, tracked
// by the server like a value, so that a later write from anywhere
// invalidates it; NoCacheMisses turns it off. The cache needs RESP3, so
// there is no RESP2 case (TestCacheNeedsRESP3).
func TestCacheMisses(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		ctx := ctxT(t)
		c := cacheClient(t, srv, respire.CacheOptions{})
		other := connect(t, respire.Options{Addr: srv.Addr})
		cached := c.Cached(0)

		// GET of a missing key: one GET reaches the server, the rest are
		// served from the cache.
		_, err := cached.Get(ctx, "nothing")
		require.ErrorIs(t, err, respire.Nil)
		before := cmdCalls(t, srv, "get")
		for range 10 {
			_, err = cached.Get(ctx, "nothing")
			require.ErrorIs(t, err, respire.Nil)
		}
		assert.Equal(t, before, cmdCalls(t, srv, "get"))

		// A missing hash field, and MGET's missing keys, too.
		_, err = cached.HGet(ctx, "nohash", "f")
		require.ErrorIs(t, err, respire.Nil)
		mg, err := cached.MGet(ctx, "nothing", "nothing2")
		require.NoError(t, err)
		require.Equal(t, []respire.Null[string]{{}, {}}, mg)
		beforeH, beforeM := cmdCalls(t, srv, "hget"), cmdCalls(t, srv, "mget")
		_, err = cached.HGet(ctx, "nohash", "f")
		require.ErrorIs(t, err, respire.Nil)
		_, err = cached.MGet(ctx, "nothing", "nothing2")
		require.NoError(t, err)
		assert.Equal(t, beforeH, cmdCalls(t, srv, "hget"))
		assert.Equal(t, beforeM, cmdCalls(t, srv, "mget"))

		// The server tracks the missing keys: writes from another client
		// invalidate them.
		require.NoError(t, other.Set(ctx, "nothing", "now", nil))
		_, err = other.Do(ctx, "HSET", "nohash", "f", "fv")
		require.NoError(t, err)
		_, err = c.Do(ctx, "PING") // after the invalidations
		require.NoError(t, err)
		v, err := cached.Get(ctx, "nothing")
		require.NoError(t, err)
		assert.Equal(t, "now", v)
		v, err = cached.HGet(ctx, "nohash", "f")
		require.NoError(t, err)
		assert.Equal(t, "fv", v)

		// A write through the cached client drops the miss before it
		// returns.
		_, err = cached.Get(ctx, "nothing2")
		require.ErrorIs(t, err, respire.Nil)
		require.NoError(t, c.Set(ctx, "nothing2", "mine", nil))
		v, err = cached.Get(ctx, "nothing2")
		require.NoError(t, err)
		assert.Equal(t, "mine", v)
	})
}

// A key that expires on the server is read once more, then its absence
// is cached until it is set again.
func TestCacheMissAfterExpiry(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	cached := c.Cached(0)
	_, err := other.Do(ctx, "SET", "short", "v", "PX", "50")
	require.NoError(t, err)
	v, err := cached.Get(ctx, "short")
	require.NoError(t, err)
	require.Equal(t, "v", v)
	require.Eventually(t, func() bool {
		_, err := cached.Get(ctx, "short")
		return err != nil
	}, 5*time.Second, time.Millisecond)
	_, err = cached.Get(ctx, "short")
	require.ErrorIs(t, err, respire.Nil)
	before := cmdCalls(t, srv, "get")
	for range 100 {
		_, err = cached.Get(ctx, "short")
		require.ErrorIs(t, err, respire.Nil)
	}
	assert.Equal(t, before, cmdCalls(t, srv, "get"))
	require.NoError(t, other.Set(ctx, "short", "again", nil))
	require.Eventually(t, func() bool {
		v, err := cached.Get(ctx, "short")
		return err == nil && v == "again"
	}, 5*time.Second, time.Millisecond)
}

// NoCacheMisses: every read of a missing key reaches the server, and the
// local TTL bounds a cached miss otherwise.
func TestCacheMissesOff(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{NoCacheMisses: true})
	cached := c.Cached(0)
	before := cmdCalls(t, srv, "get")
	for range 5 {
		_, err := cached.Get(ctx, "nothing")
		require.ErrorIs(t, err, respire.Nil)
	}
	assert.Equal(t, before+5, cmdCalls(t, srv, "get"))
	assert.Zero(t, c.CacheStats().Entries)

	// With misses cached, the local TTL bounds a miss's life: it is read
	// from the server again once the TTL ran out.
	d := cacheClient(t, srv, respire.CacheOptions{TTL: 20 * time.Millisecond})
	dc := d.Cached(0)
	_, err := dc.Get(ctx, "nothing")
	require.ErrorIs(t, err, respire.Nil)
	require.Equal(t, int64(1), d.CacheStats().Entries)
	before = cmdCalls(t, srv, "get")
	require.Eventually(t, func() bool {
		_, _ = dc.Get(ctx, "nothing")
		return cmdCalls(t, srv, "get") > before
	}, 5*time.Second, time.Millisecond)
}
