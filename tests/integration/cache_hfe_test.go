package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hash field expiration (Redis 7.4+, HEXPIRE/HPEXPIRE): a field with a TTL
// of its own disappears from the hash while the key itself has none (PTTL
// -1). The server sends an invalidation of the key only when it deletes
// the field: at once when a command touches it, otherwise in its active
// expiry cycle, up to ~100 ms after the TTL ran out; meanwhile HGET says
// the field is gone. So the cache takes an entry's deadline from the TTLs
// of the fields it depends on as well (HPTTL), and no read that starts
// after a field's TTL ran out may return the field.

// hfeRead reads hash h through the cache and reports whether field f (value
// "v") is gone; g (value "w") never expires.
type hfeRead func(t *testing.T, ctx context.Context, c respire.Cached) (gone bool)

var hfeReads = []struct {
	name   string
	fields []respire.FieldValue // the hash; f is the field that expires
	read   hfeRead
}{
	{"hget/only-field", []respire.FieldValue{{Field: "f", Value: "v"}}, readHGet},
	{"hget/other-fields", fvFG, readHGet},
	{"hgetall", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		m, err := c.HGetAll(ctx, "h")
		require.NoError(t, err)
		require.Equal(t, "w", m["g"])
		v, ok := m["f"]
		require.True(t, !ok || v == "v", v)
		return !ok
	}},
	{"hmget", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		vs, err := c.HMGet(ctx, "h", "f", "g")
		require.NoError(t, err)
		require.Equal(t, respire.Null[string]{V: "w", Valid: true}, vs[1])
		require.True(t, !vs[0].Valid || vs[0].V == "v", vs[0])
		return !vs[0].Valid
	}},
	{"hexists", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		ok, err := c.HExists(ctx, "h", "f")
		require.NoError(t, err)
		return !ok
	}},
	{"hstrlen", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		n, err := c.HStrLen(ctx, "h", "f")
		require.NoError(t, err)
		return n == 0
	}},
	{"hkeys", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		ks, err := c.HKeys(ctx, "h")
		require.NoError(t, err)
		require.Contains(t, ks, "g")
		return !slices.Contains(ks, "f")
	}},
	{"hvals", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		vs, err := c.HVals(ctx, "h")
		require.NoError(t, err)
		require.Contains(t, vs, "w")
		return !slices.Contains(vs, "v")
	}},
	{"hpexpiretime", fvFG, func(t *testing.T, ctx context.Context, c respire.Cached) bool {
		ts, err := c.HPExpireTime(ctx, "h", "f", "g")
		require.NoError(t, err)
		require.Len(t, ts, 2)
		require.Equal(t, respire.Null[time.Time]{Valid: true}, ts[1], "no expiry: the zero time")
		return !ts[0].Valid
	}},
	// HLEN is left out: the server counts a field whose TTL ran out until
	// it deletes it, so HLEN's answer changes with the deletion, which the
	// server reports by an invalidation.
}

var fvFG = []respire.FieldValue{{Field: "f", Value: "v"}, {Field: "g", Value: "w"}}

// hasFieldTTLs reports whether srv has hash field TTLs.
func hasFieldTTLs(t *testing.T, srv *harness.Server) bool {
	r, err := srv.Do(ctxT(t), "COMMAND", "INFO", "HPEXPIRE")
	require.NoError(t, err)
	return fmt.Sprint(r) != "[<nil>]" && fmt.Sprint(r) != "[[]]"
}

func TestCacheHashFieldExpiry(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		if !hasFieldTTLs(t, srv) {
			t.Skipf("%s has no hash field TTLs (TestCacheHashReadsWithoutFieldTTLs covers it)", f)
		}
		for _, tc := range hfeReads {
			for _, expiry := range []string{"lazy", "active", "deadline"} {
				t.Run(tc.name+"/"+expiry, func(t *testing.T) {
					testHashFieldExpiry(t, srv, tc.fields, tc.read, expiry)
				})
			}
		}
	})
}

// testHashFieldExpiry caches a read of hash h whose field f expires 100 ms
// later, and checks that the cache stops serving f in time. The deadline
// form reads through the cache as fast as it can and fails on any read
// that started after f's TTL ran out and still returned f. The active
// form touches h only through the cache; the lazy form waits until a plain
// client's HEXISTS h f (which deletes the expired field) says f is gone,
// and then the cache must not serve f either.
func testHashFieldExpiry(t *testing.T, srv *harness.Server, fields []respire.FieldValue, read hfeRead, mode string) {
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	_, err := other.Del(ctx, "h")
	require.NoError(t, err)
	_, err = other.HSet(ctx, "h", fields...)
	require.NoError(t, err)
	const ttl = 100 * time.Millisecond
	expireSent := time.Now()
	n, err := other.HPExpire(ctx, "h", ttl, []string{"f"}, nil)
	expireAcked := time.Now()
	require.NoError(t, err)
	require.Equal(t, []int64{1}, n, "HPEXPIRE did not set the field's TTL")

	cached := c.Cached(0)
	require.False(t, read(t, ctx, cached), "the field is gone before its TTL")
	hits := c.CacheStats().Hits
	require.False(t, read(t, ctx, cached), "the field is gone before its TTL")
	require.Greater(t, c.CacheStats().Hits, hits, "the read was not cached")

	switch mode {
	case "deadline":
		// The server set the field's expiry before it replied, so the
		// field is logically gone by expireAcked+ttl; 2 ms of slack for
		// the server's millisecond clock.
		expired := expireAcked.Add(ttl + 2*time.Millisecond)
		reads, late := 0, 0
		for {
			start := time.Now()
			gone := read(t, ctx, cached)
			reads++
			if gone {
				break
			}
			if d := start.Sub(expired); d > 0 {
				late++
				assert.Failf(t, "served after expiry", "read %d started %v after the field's TTL ran out and returned it", reads, d)
			}
			require.Less(t, time.Since(expireAcked), ttl+2*time.Second, "the cache never dropped the field")
		}
		require.Zero(t, late)
		t.Logf("%d reads; the first one without f began %v after HPEXPIRE of %v", reads, time.Since(expireAcked), ttl)
	case "active":
		const bound = ttl + 2*time.Second
		for !read(t, ctx, cached) {
			require.Less(t, time.Since(expireAcked), bound, "the cache still serves the field (cache %+v)", c.CacheStats())
			time.Sleep(time.Millisecond)
		}
		gone := time.Since(expireAcked)
		// The server's expiry is its millisecond clock when it ran
		// HPEXPIRE plus ttl: no earlier than expireSent+ttl-1ms.
		require.GreaterOrEqual(t, time.Since(expireSent), ttl-time.Millisecond, "the cache dropped the field before its TTL")
		ok, err := other.HExists(ctx, "h", "f")
		require.NoError(t, err)
		if ok {
			// Redis 8.0 disagrees with itself for the millisecond of the
			// expiry: HPTTL and HPEXPIRETIME say -2 when HEXISTS still
			// says 1. Beyond that millisecond they agree.
			require.Less(t, gone, ttl+2*time.Millisecond, "the cache dropped the field before the server did")
		}
	case "lazy":
		deadline := time.Now().Add(5 * time.Second)
		for {
			ok, err := other.HExists(ctx, "h", "f")
			require.NoError(t, err)
			if !ok {
				break
			}
			require.True(t, time.Now().Before(deadline), "the field never expired on the server")
			time.Sleep(5 * time.Millisecond)
		}
		require.True(t, read(t, ctx, cached), "the cache serves the field after the server said it is gone")
	}
}

func readHGet(t *testing.T, ctx context.Context, c respire.Cached) bool {
	v, err := c.HGet(ctx, "h", "f")
	if errors.Is(err, respire.Nil) {
		return true
	}
	require.NoError(t, err)
	require.Equal(t, "v", v)
	return false
}

// TestCacheHashFieldTTLCost: what a cached hash read sends on a miss when
// the server has field TTLs, and that a field without a TTL, or a field
// whose TTL is far off, leaves the entry cached.
func TestCacheHashFieldTTLCost(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	_, err := other.HSet(ctx, "h", fvFG...)
	require.NoError(t, err)
	_, err = other.HPExpire(ctx, "h", time.Hour, []string{"f"}, nil)
	require.NoError(t, err)
	cached := c.Cached(0)

	for _, tc := range []struct {
		name                 string
		read                 func() error
		cmd                  string
		hpttl, hkeys, writes int64 // HPTTL and HKEYS calls of a miss
	}{
		{"hget", func() error { _, err := cached.HGet(ctx, "h", "f"); return err }, "hget", 1, 0, 1},
		{"hmget", func() error { _, err := cached.HMGet(ctx, "h", "f", "g"); return err }, "hmget", 1, 0, 1},
		{"hgetall", func() error { _, err := cached.HGetAll(ctx, "h"); return err }, "hgetall", 1, 0, 2},
		{"hlen", func() error { _, err := cached.HLen(ctx, "h"); return err }, "hlen", 1, 1, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := [3]int64{cmdCalls(t, srv, tc.cmd), cmdCalls(t, srv, "hpttl"), cmdCalls(t, srv, "hkeys")}
			for range 5 {
				require.NoError(t, tc.read())
			}
			after := [3]int64{cmdCalls(t, srv, tc.cmd), cmdCalls(t, srv, "hpttl"), cmdCalls(t, srv, "hkeys")}
			assert.Equal(t, [3]int64{1, tc.hpttl, tc.hkeys}, [3]int64{after[0] - before[0], after[1] - before[1], after[2] - before[2]},
				"one miss (read, HPTTL, HKEYS), then hits")
		})
	}

	// HLEN's key is tracked through the HKEYS sent before it: another
	// client's write reaches the cached HLEN.
	n, err := cached.HLen(ctx, "h")
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	_, err = other.HSet(ctx, "h", respire.FieldValue{Field: "x", Value: "y"})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		n, err := cached.HLen(ctx, "h")
		return err == nil && n == 3
	}, 5*time.Second, time.Millisecond)
}

// TestCacheHashReadsWithoutFieldTTLs: on servers without field TTLs the
// cache asks for none, and caches hash reads as before.
func TestCacheHashReadsWithoutFieldTTLs(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		if hasFieldTTLs(t, srv) {
			t.Skipf("%s has hash field TTLs (TestCacheHashFieldExpiry covers it)", f)
		}
		ctx := ctxT(t)
		c := cacheClient(t, srv, respire.CacheOptions{})
		_, err := c.HSet(ctx, "h", fvFG...)
		require.NoError(t, err)
		errs := totalErrors(t, srv)
		cached := c.Cached(0)
		for range 2 {
			v, err := cached.HGet(ctx, "h", "f")
			require.NoError(t, err)
			require.Equal(t, "v", v)
			m, err := cached.HGetAll(ctx, "h")
			require.NoError(t, err)
			require.Len(t, m, 2)
			n, err := cached.HLen(ctx, "h")
			require.NoError(t, err)
			require.EqualValues(t, 2, n)
			vs, err := cached.HMGet(ctx, "h", "g")
			require.NoError(t, err)
			require.Equal(t, "w", vs[0].V)
		}
		for _, cmd := range []string{"hget", "hgetall", "hlen", "hmget"} {
			assert.EqualValues(t, 1, cmdCalls(t, srv, cmd), cmd)
		}
		assert.Zero(t, cmdCalls(t, srv, "hkeys"))
		assert.Equal(t, errs, totalErrors(t, srv), "no command failed")
	})
}

// totalErrors is INFO stats total_error_replies.
func totalErrors(t *testing.T, srv *harness.Server) int64 {
	r, err := srv.Do(ctxT(t), "INFO", "stats")
	require.NoError(t, err)
	m := regexp.MustCompile(`total_error_replies:(\d+)`).FindStringSubmatch(fmt.Sprint(r))
	require.NotNil(t, m)
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// BenchmarkCachedHashMiss measures what a cache miss costs, per read kind,
// on a server with field TTLs (Redis 8.0: HPTTL in the same write for field
// reads, a second round trip for whole-hash reads) and one without (Redis
// 7.0), beside GET's miss as the baseline of one round trip. Each
// iteration flushes the cache and reads once.
func BenchmarkCachedHashMiss(b *testing.B) {
	for _, f := range []harness.Flavor{harness.Redis70, harness.Redis80} {
		b.Run(string(f), func(b *testing.B) {
			srv := harness.Start(b, harness.Config{Flavor: f})
			ctx := context.Background()
			c := connect(b, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
			require.NoError(b, c.Set(ctx, "s", "v", nil))
			var fv []respire.FieldValue
			for i := range 10 {
				fv = append(fv, respire.FieldValue{Field: "f" + strconv.Itoa(i), Value: "v"})
			}
			_, err := c.HSet(ctx, "h", fv...)
			require.NoError(b, err)
			cached := c.Cached(0)
			for _, r := range []struct {
				name string
				read func() error
			}{
				{"get", func() error { _, err := cached.Get(ctx, "s"); return err }},
				{"hget", func() error { _, err := cached.HGet(ctx, "h", "f1"); return err }},
				{"hmget3", func() error { _, err := cached.HMGet(ctx, "h", "f1", "f2", "f3"); return err }},
				{"hgetall10", func() error { _, err := cached.HGetAll(ctx, "h"); return err }},
				{"hlen10", func() error { _, err := cached.HLen(ctx, "h"); return err }},
			} {
				b.Run(r.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						c.FlushCache()
						if err := r.read(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}
