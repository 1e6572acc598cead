package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func cacheClient(t testing.TB, srv *harness.Server, co respire.CacheOptions) *respire.Client {
	t.Helper()
	return connect(t, respire.Options{Addr: srv.Addr, ClientCache: &co})
}

// cmdCalls returns how many times the server ran cmd (INFO commandstats).
func cmdCalls(t testing.TB, srv *harness.Server, cmd string) int64 {
	t.Helper()
	r, err := srv.Do(ctxT(t), "INFO", "commandstats")
	require.NoError(t, err)
	m := regexp.MustCompile(`cmdstat_` + cmd + `:calls=(\d+)`).FindStringSubmatch(fmt.Sprint(r))
	if m == nil {
		return 0
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// doer is a server or a cluster node of the harness.
type doer interface {
	Do(ctx context.Context, args ...string) (any, error)
}

// trackingClients returns the ids of the server's clients with tracking on.
func trackingClients(t testing.TB, srv doer) []string {
	t.Helper()
	r, err := srv.Do(ctxT(t), "CLIENT", "LIST")
	require.NoError(t, err)
	var ids []string
	for _, line := range strings.Split(fmt.Sprint(r), "\n") {
		f := map[string]string{}
		for _, kv := range strings.Fields(line) {
			k, v, _ := strings.Cut(kv, "=")
			f[k] = v
		}
		if strings.Contains(f["flags"], "t") {
			ids = append(ids, f["id"])
		}
	}
	return ids
}

func TestCacheHitsAndInvalidation(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		ctx := ctxT(t)
		c := cacheClient(t, srv, respire.CacheOptions{})
		other := connect(t, respire.Options{Addr: srv.Addr})
		require.NoError(t, other.Set(ctx, "k", "v1", nil))

		cached := c.Cached(time.Minute)
		v, err := cached.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v1", v)

		// Warmed reads are hits: the server runs no GET for them.
		before := cmdCalls(t, srv, "get")
		for range 1000 {
			v, err := cached.Get(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, "v1", v)
		}
		assert.Equal(t, before, cmdCalls(t, srv, "get"))
		st := c.CacheStats()
		assert.GreaterOrEqual(t, st.Hits, int64(1000))
		assert.Equal(t, int64(1), st.Entries)

		// A write from another client invalidates within one round trip:
		// once it is acknowledged, a PING through the cached client (which
		// waits for the tracking connection) is enough.
		require.NoError(t, other.Set(ctx, "k", "v2", nil))
		_, err = c.Do(ctx, "PING")
		require.NoError(t, err)
		v, err = cached.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v2", v)
		assert.Positive(t, c.CacheStats().Invalidations)

		// Writes through the cached client invalidate before they return.
		require.NoError(t, c.Set(ctx, "k", "v3", nil))
		v, err = cached.Get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, "v3", v)

		// A missing key is cached too (TestCacheMisses).
		_, err = cached.Get(ctx, "missing")
		require.ErrorIs(t, err, respire.Nil)
		before = cmdCalls(t, srv, "get")
		_, err = cached.Get(ctx, "missing")
		require.ErrorIs(t, err, respire.Nil)
		assert.Equal(t, before, cmdCalls(t, srv, "get"))

		// FLUSHALL invalidates everything (a null invalidation).
		_, err = other.Do(ctx, "FLUSHALL")
		require.NoError(t, err)
		require.Eventually(t, func() bool { return c.CacheStats().Entries == 0 }, 5*time.Second, time.Millisecond)
		_, err = cached.Get(ctx, "k")
		require.ErrorIs(t, err, respire.Nil)
	})
}

func TestCacheHashAndMultiKeyReads(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	_, err := other.Do(ctx, "HSET", "h", "a", "1", "b", "2")
	require.NoError(t, err)
	_, err = other.Do(ctx, "MSET", "m1", "x", "m2", "y")
	require.NoError(t, err)
	cached := c.Cached(time.Minute)

	all, err := cached.HGetAll(ctx, "h")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, all)
	all["a"] = "changed by the caller"
	v, err := cached.HGet(ctx, "h", "a")
	require.NoError(t, err)
	require.Equal(t, "1", v)
	_, err = cached.HGet(ctx, "h", "zz")
	require.ErrorIs(t, err, respire.Nil)

	// HMGET reuses HGET's entries: only the field not cached yet is sent.
	hm, err := cached.HMGet(ctx, "h", "a", "b", "zz")
	require.NoError(t, err)
	require.Equal(t, []respire.Null[string]{{V: "1", Valid: true}, {V: "2", Valid: true}, {}}, hm)
	before := cmdCalls(t, srv, "hmget") + cmdCalls(t, srv, "hget") + cmdCalls(t, srv, "hgetall")
	all, err = cached.HGetAll(ctx, "h")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, all)
	hm, err = cached.HMGet(ctx, "h", "b", "a")
	require.NoError(t, err)
	require.Equal(t, []respire.Null[string]{{V: "2", Valid: true}, {V: "1", Valid: true}}, hm)
	assert.Equal(t, before, cmdCalls(t, srv, "hmget")+cmdCalls(t, srv, "hget")+cmdCalls(t, srv, "hgetall"))

	// MGET fills the entries GET uses, and reuses them.
	mg, err := cached.MGet(ctx, "m1", "m2", "m3")
	require.NoError(t, err)
	require.Equal(t, []respire.Null[string]{{V: "x", Valid: true}, {V: "y", Valid: true}, {}}, mg)
	before = cmdCalls(t, srv, "get") + cmdCalls(t, srv, "mget")
	v, err = cached.Get(ctx, "m2")
	require.NoError(t, err)
	require.Equal(t, "y", v)
	mg, err = cached.MGet(ctx, "m2", "m1")
	require.NoError(t, err)
	require.Equal(t, []respire.Null[string]{{V: "y", Valid: true}, {V: "x", Valid: true}}, mg)
	assert.Equal(t, before, cmdCalls(t, srv, "get")+cmdCalls(t, srv, "mget"))

	// One change to the hash drops all its entries.
	_, err = other.Do(ctx, "HSET", "h", "c", "3")
	require.NoError(t, err)
	_, err = c.Do(ctx, "PING")
	require.NoError(t, err)
	all, err = cached.HGetAll(ctx, "h")
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "1", "b": "2", "c": "3"}, all)
	_, err = c.Do(ctx, "MSET", "m1", "x2")
	require.NoError(t, err)
	mg, err = cached.MGet(ctx, "m1", "m2")
	require.NoError(t, err)
	require.Equal(t, []respire.Null[string]{{V: "x2", Valid: true}, {V: "y", Valid: true}}, mg)
}

func TestCacheBroadcast(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{Broadcast: true, Prefixes: []string{"user:"}})
	other := connect(t, respire.Options{Addr: srv.Addr})
	require.NoError(t, other.Set(ctx, "user:1", "a", nil))
	require.NoError(t, other.Set(ctx, "order:1", "b", nil))
	cached := c.Cached(0)
	for range 3 {
		v, err := cached.Get(ctx, "user:1")
		require.NoError(t, err)
		require.Equal(t, "a", v)
		v, err = cached.Get(ctx, "order:1")
		require.NoError(t, err)
		require.Equal(t, "b", v)
	}
	st := c.CacheStats()
	assert.Equal(t, int64(1), st.Entries, "only keys under the prefixes are cached")
	require.NoError(t, other.Set(ctx, "user:1", "a2", nil))
	_, err := c.Do(ctx, "PING")
	require.NoError(t, err)
	v, err := cached.Get(ctx, "user:1")
	require.NoError(t, err)
	require.Equal(t, "a2", v)
}

// After a writer's reply is received, no reader anywhere in the process
// gets the old value from the cache: 64 goroutines over shared keys, with
// every value checked byte for byte.
func TestCacheNoStaleReadAfterAck(t *testing.T) {
	for _, conns := range []int{1, 3} {
		t.Run(fmt.Sprintf("connections=%d", conns), func(t *testing.T) {
			srv := harness.Start(t, harness.Config{})
			ctx := ctxT(t)
			c := connect(t, respire.Options{Addr: srv.Addr, Connections: conns,
				ClientCache: &respire.CacheOptions{Connections: conns}})
			const nkeys, writers, readers = 8, 16, 48
			keys := make([]string, nkeys)
			var acked [nkeys]atomic.Int64 // newest acknowledged version
			var wmu [nkeys]sync.Mutex     // one writer per key at a time
			value := func(k int, ver int64) string {
				return fmt.Sprintf("%s|%d|%s", keys[k], ver, strings.Repeat(strconv.Itoa(int(ver%10)), 20+int(ver%50)))
			}
			parse := func(k int, s string) int64 {
				parts := strings.SplitN(s, "|", 3)
				require.Len(t, parts, 3, "value %q", s)
				ver, err := strconv.ParseInt(parts[1], 10, 64)
				require.NoError(t, err)
				require.Equal(t, value(k, ver), s, "byte-for-byte")
				return ver
			}
			for k := range keys {
				keys[k] = "shared:" + strconv.Itoa(k)
				require.NoError(t, c.Set(ctx, keys[k], value(k, 0), nil))
			}
			deadline := time.Now().Add(2 * time.Second)
			var wg sync.WaitGroup
			var reads, stale atomic.Int64
			for w := range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; time.Now().Before(deadline); i++ {
						k := (w + i) % nkeys
						wmu[k].Lock()
						ver := acked[k].Load() + 1
						var err error
						switch i % 3 {
						case 0:
							err = c.Set(ctx, keys[k], value(k, ver), nil)
						case 1:
							_, err = c.Do(ctx, "SET", keys[k], value(k, ver))
						default:
							// A multi-key write: both keys are dropped.
							k2 := (k + 1) % nkeys
							if wmu[k2].TryLock() {
								ver2 := acked[k2].Load() + 1
								_, err = c.Do(ctx, "MSET", keys[k], value(k, ver), keys[k2], value(k2, ver2))
								if err == nil {
									acked[k2].Store(ver2)
								}
								wmu[k2].Unlock()
							} else {
								err = c.Set(ctx, keys[k], value(k, ver), nil)
							}
						}
						if err == nil {
							acked[k].Store(ver)
						}
						wmu[k].Unlock()
						if err != nil {
							t.Error(err)
							return
						}
					}
				}()
			}
			for r := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cached := c.Cached(time.Minute)
					for i := 0; time.Now().Before(deadline); i++ {
						k := (r + i) % nkeys
						floor := acked[k].Load()
						if i%4 == 3 {
							k2 := (k + 3) % nkeys
							floor2 := acked[k2].Load()
							vs, err := cached.MGet(ctx, keys[k], keys[k2])
							if !assert.NoError(t, err) || !assert.Len(t, vs, 2) {
								return
							}
							if parse(k, vs[0].V) < floor || parse(k2, vs[1].V) < floor2 {
								stale.Add(1)
							}
						} else {
							s, err := cached.Get(ctx, keys[k])
							if !assert.NoError(t, err) {
								return
							}
							if parse(k, s) < floor {
								stale.Add(1)
							}
						}
						reads.Add(1)
					}
				}()
			}
			wg.Wait()
			st := c.CacheStats()
			t.Logf("reads %d, stale %d, cache %+v", reads.Load(), stale.Load(), st)
			require.Zero(t, stale.Load(), "a read returned a value older than an acknowledged write")
			require.Positive(t, st.Hits)
		})
	}
}

// Writes from another connection: a read that starts after the write was
// acknowledged may still see the old value until the invalidation arrives
// on the tracking connection. Measure how often and for how long: after
// each acknowledged write, read through the cache until the new value
// shows.
func TestCacheStalenessFromOtherClient(t *testing.T) {
	for _, spin := range []bool{false, true} {
		t.Run(fmt.Sprintf("spin=%v", spin), func(t *testing.T) { testStaleness(t, spin) })
	}
}

func testStaleness(t *testing.T, spin bool) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	cached := c.Cached(0)
	const writes = 500
	var reads, stale, staleWrites int
	var ages []time.Duration
	for i := range writes {
		want := strconv.Itoa(i)
		require.NoError(t, other.Set(ctx, "x", want, nil))
		acked := time.Now()
		for n := 0; ; n++ {
			v, err := cached.Get(ctx, "x")
			require.NoError(t, err)
			reads++
			if v == want {
				if n > 0 {
					staleWrites++
					ages = append(ages, time.Since(acked))
				}
				break
			}
			stale++
			require.Less(t, time.Since(acked), 5*time.Second, "the invalidation never came")
			if !spin {
				// Do some I/O between reads, as an application does. A
				// goroutine that only spins on cache hits delays the
				// runtime's network poller (up to sysmon's 10 ms), and so
				// the reader goroutine that applies invalidations.
				_, err := other.Get(ctx, "unrelated")
				require.ErrorIs(t, err, respire.Nil)
			}
		}
		// Warm the entry again, so that the next write finds it cached.
		for range 20 {
			_, err := cached.Get(ctx, "x")
			require.NoError(t, err)
			reads++
		}
	}
	slices.Sort(ages)
	var p50, maxAge time.Duration
	if len(ages) > 0 {
		p50, maxAge = ages[len(ages)/2], ages[len(ages)-1]
	}
	t.Logf("writes %d: %d (%.1f%%) followed by stale reads; reads %d, stale %d (%.3f%%); stale window p50 %v, max %v",
		writes, staleWrites, 100*float64(staleWrites)/writes, reads, stale, 100*float64(stale)/float64(reads), p50, maxAge)
	if !spin {
		// About a millisecond on a quiet machine. The bound catches an
		// invalidation that waits for something else (a health check, a
		// later round trip), with a margin a loaded machine does not reach.
		assert.Less(t, maxAge, 2*time.Second)
	}
}

func TestCacheMemoryBound(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	const max = 256 << 10
	c := cacheClient(t, srv, respire.CacheOptions{MaxBytes: max})
	// Ten times the budget in values.
	val := strings.Repeat("v", 1000)
	const n = 10 * max / 1000
	var args []any
	args = append(args, "MSET")
	for i := range n {
		args = append(args, "big:"+strconv.Itoa(i), val)
	}
	_, err := c.Do(ctx, args...)
	require.NoError(t, err)
	cached := c.Cached(0)
	for round := range 2 {
		for i := range n {
			v, err := cached.Get(ctx, "big:"+strconv.Itoa(i))
			require.NoError(t, err)
			require.Equal(t, val, v)
			if i%50 == 0 {
				st := c.CacheStats()
				require.LessOrEqual(t, st.Bytes, int64(max), "round %d key %d", round, i)
			}
		}
	}
	st := c.CacheStats()
	t.Logf("%+v", st)
	assert.LessOrEqual(t, st.Bytes, int64(max))
	assert.Positive(t, st.Evictions)
	assert.Positive(t, st.Entries)
}

// A key that expires on the server is never served after its expiry, and
// a shortened TTL is seen at once.
func TestCacheServerTTL(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		ctx := ctxT(t)
		c := cacheClient(t, srv, respire.CacheOptions{})
		cached := c.Cached(time.Hour)
		const ttl = 150 * time.Millisecond
		pttl := ttl
		require.NoError(t, c.Set(ctx, "ttl", "alive", &respire.SetOptions{PX: pttl}))
		acked := time.Now()
		var hits int
		for {
			start := time.Now()
			v, err := cached.Get(ctx, "ttl")
			if errors.Is(err, respire.Nil) {
				break
			}
			require.NoError(t, err)
			require.Equal(t, "alive", v)
			// The server's expiry is at most ttl after the acknowledgement,
			// plus the millisecond of its clock's resolution.
			require.Less(t, start.Sub(acked), ttl+time.Millisecond, "served after the server-side expiry")
			hits++
		}
		require.Positive(t, hits)
		require.Positive(t, c.CacheStats().Hits)

		// PEXPIRE on a cached key is a change: the entry is dropped.
		other := connect(t, respire.Options{Addr: srv.Addr})
		require.NoError(t, c.Set(ctx, "ttl2", "v", nil))
		_, err := cached.Get(ctx, "ttl2")
		require.NoError(t, err)
		_, err = other.Do(ctx, "PEXPIRE", "ttl2", 1)
		require.NoError(t, err)
		_, err = c.Do(ctx, "PING")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			_, err := cached.Get(ctx, "ttl2")
			return errors.Is(err, respire.Nil)
		}, 5*time.Second, time.Millisecond)
	})
}

func TestCacheReconnectFlushes(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	cached := c.Cached(0)
	require.NoError(t, c.Set(ctx, "r", "1", nil))
	_, err := cached.Get(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, int64(1), c.CacheStats().Entries)

	ids := trackingClients(t, srv)
	require.Len(t, ids, 1)
	_, err = srv.Do(ctx, "CLIENT", "KILL", "ID", ids[0])
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.CacheStats().Entries == 0 }, 5*time.Second, time.Millisecond)
	assert.Positive(t, c.CacheStats().Flushes)
	// A write while the tracking connection is down is seen afterwards.
	_, err = srv.Do(ctx, "SET", "r", "2")
	require.NoError(t, err)
	v, err := cached.Get(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, "2", v)
	// The new connection tracks again.
	require.Len(t, trackingClients(t, srv), 1)
	_, err = srv.Do(ctx, "SET", "r", "3")
	require.NoError(t, err)
	_, err = c.Do(ctx, "PING")
	require.NoError(t, err)
	v, err = cached.Get(ctx, "r")
	require.NoError(t, err)
	require.Equal(t, "3", v)
}

func TestCacheCloseReleasesTracking(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
	require.NoError(t, err)
	_, err = c.Cached(0).Get(ctx, "k")
	require.ErrorIs(t, err, respire.Nil)
	require.Len(t, trackingClients(t, srv), 1)
	require.NoError(t, c.Close())
	require.Eventually(t, func() bool { return len(trackingClients(t, srv)) == 0 }, 5*time.Second, time.Millisecond)
	_, err = c.Cached(0).Get(ctx, "k")
	require.ErrorIs(t, err, respire.ErrClosed)
}

func TestCacheNeedsRESP3(t *testing.T) {
	_, err := respire.NewClient(respire.Options{Protocol: 2, ClientCache: &respire.CacheOptions{}})
	require.ErrorIs(t, err, respire.ErrInvalidOption)
	require.Contains(t, err.Error(), "RESP3")

	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	_, err = c.Cached(0).Get(ctxT(t), "k")
	require.ErrorIs(t, err, respire.ErrCacheDisabled)
}

// BenchmarkCachedGetHit is the hit path of a cached GET returning a string,
// through the public API.
func BenchmarkCachedGetHit(b *testing.B) {
	srv := harness.Start(b, harness.Config{})
	ctx := context.Background()
	c := connect(b, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
	val := strings.Repeat("x", 64)
	require.NoError(b, c.Set(ctx, "bench:hit", val, nil))
	cached := c.Cached(time.Hour)
	_, err := cached.Get(ctx, "bench:hit")
	require.NoError(b, err)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, err := cached.Get(ctx, "bench:hit")
			if err != nil || len(v) != len(val) {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				v, err := c.Cached(time.Hour).Get(ctx, "bench:hit")
				if err != nil || len(v) != len(val) {
					b.Error(v, err)
					return
				}
			}
		})
	})
	st := c.CacheStats()
	require.Equal(b, int64(1), st.Misses, "every read but the first is a hit")
}

// Invalidations do not wait for the client's other traffic: with a
// subscription nobody reads and the main connection stuck behind a command
// that blocks on the server, cached reads still see another client's
// writes.
func TestCacheNotHeldBackByOtherTraffic(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	ctx := ctxT(t)
	c := cacheClient(t, srv, respire.CacheOptions{})
	other := connect(t, respire.Options{Addr: srv.Addr})
	cached := c.Cached(0)
	require.NoError(t, other.Set(ctx, "k", "old", nil))
	v, err := cached.Get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, "old", v)

	sub, err := c.Subscribe(ctx, "chat")
	require.NoError(t, err)
	defer sub.Close()
	for i := range 2000 {
		_, err := other.Do(ctx, "PUBLISH", "chat", i)
		require.NoError(t, err)
	}

	// Raw Do does not know BLPOP blocks: it holds the main connection.
	done := make(chan error, 1)
	go func() {
		_, err := c.Do(ctx, "BLPOP", "hold", 0)
		done <- err
	}()
	require.Eventually(t, func() bool {
		r, err := srv.Do(ctx, "INFO", "clients")
		return err == nil && strings.Contains(fmt.Sprint(r), "blocked_clients:1")
	}, 5*time.Second, time.Millisecond)

	require.NoError(t, other.Set(ctx, "k", "new", nil))
	require.Eventually(t, func() bool {
		v, err := cached.Get(ctx, "k")
		return err == nil && v == "new"
	}, 5*time.Second, 100*time.Microsecond)
	select {
	case err := <-done:
		t.Fatalf("BLPOP returned early: %v", err)
	default:
	}
	_, err = other.Do(ctx, "LPUSH", "hold", "x")
	require.NoError(t, err)
	require.NoError(t, <-done)
}
