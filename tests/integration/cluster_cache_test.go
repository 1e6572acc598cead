package integration

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nodeCalls returns how many times node ran cmd (INFO commandstats).
func nodeCalls(t *testing.T, n *harness.ClusterNode, cmd string) int64 {
	t.Helper()
	r, err := n.Do(ctxT(t), "INFO", "commandstats")
	require.NoError(t, err)
	var calls int64
	for _, line := range strings.Split(fmt.Sprint(r), "\n") {
		if f, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
			_, _ = fmt.Sscanf(f, "%d", &calls)
		}
	}
	return calls
}

// mastersGets sums the GETs the masters ran.
func mastersGets(t *testing.T, hc *harness.Cluster) int64 {
	var total int64
	for _, m := range hc.Masters() {
		total += nodeCalls(t, m, "get")
	}
	return total
}

// keyOn returns a key with prefix whose slot master is m.
func keyOn(hc *harness.Cluster, m *harness.ClusterNode, prefix string) string {
	for i := 0; ; i++ {
		k := fmt.Sprintf("%s%d", prefix, i)
		if hc.MasterOf(harness.SlotOf(k)).ID == m.ID {
			return k
		}
	}
}

// The client-side cache on a cluster: each master tracks the keys read
// from it and reports their changes; hits cost the cluster nothing; a
// node's entries are dropped when its tracking connection breaks, and
// only that node's.
func TestClusterCache(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		hc := sharedMasters(t, f)
		ctx := ctxT(t)
		c := clusterClient(t, hc, respire.Options{ClientCache: &respire.CacheOptions{}})
		other := clusterClient(t, hc, respire.Options{})
		cached := c.Cached(0)
		masters := hc.Masters()
		require.Len(t, masters, 3)
		keys := make([]string, len(masters))
		for i, m := range masters {
			keys[i] = keyOn(hc, m, fmt.Sprintf("cc%d:", i))
			require.NoError(t, other.Set(ctx, keys[i], "v1", nil))
		}
		for _, k := range keys {
			v, err := cached.Get(ctx, k)
			require.NoError(t, err)
			require.Equal(t, "v1", v)
		}
		// Every master tracks for the client: one tracking connection each.
		for _, m := range masters {
			assert.Len(t, trackingClients(t, m), 1, "tracking clients of %s", m.Addr)
		}

		// Hits: nothing reaches the cluster.
		before := mastersGets(t, hc)
		for range 100 {
			for _, k := range keys {
				v, err := cached.Get(ctx, k)
				require.NoError(t, err)
				require.Equal(t, "v1", v)
			}
		}
		assert.Equal(t, before, mastersGets(t, hc))

		// Writes from another client: each node reports its own keys. A
		// PING through the cached client waits for every tracker.
		for _, k := range keys {
			require.NoError(t, other.Set(ctx, k, "v2", nil))
		}
		_, err := c.Do(ctx, "PING")
		require.NoError(t, err)
		for _, k := range keys {
			v, err := cached.Get(ctx, k)
			require.NoError(t, err)
			require.Equal(t, "v2", v)
		}

		// Writes through the client drop the key before they return.
		require.NoError(t, c.Set(ctx, keys[0], "v3", nil))
		v, err := cached.Get(ctx, keys[0])
		require.NoError(t, err)
		require.Equal(t, "v3", v)

		// Misses are cached and invalidated by the node too.
		miss := keyOn(hc, masters[1], "ccmiss:")
		_, err = cached.Get(ctx, miss)
		require.ErrorIs(t, err, respire.Nil)
		before = mastersGets(t, hc)
		_, err = cached.Get(ctx, miss)
		require.ErrorIs(t, err, respire.Nil)
		assert.Equal(t, before, mastersGets(t, hc))
		require.NoError(t, other.Set(ctx, miss, "now", nil))
		_, err = c.Do(ctx, "PING")
		require.NoError(t, err)
		v, err = cached.Get(ctx, miss)
		require.NoError(t, err)
		require.Equal(t, "now", v)

		// Hash reads and MGET across slots.
		_, err = other.Do(ctx, "HSET", keys[2]+"h", "f", "hv")
		require.NoError(t, err)
		hv, err := cached.HGet(ctx, keys[2]+"h", "f")
		require.NoError(t, err)
		require.Equal(t, "hv", hv)
		mg, err := cached.MGet(ctx, keys[0], keys[1], keys[2], "ccnone")
		require.NoError(t, err)
		require.Equal(t, []respire.Null[string]{{V: "v3", Valid: true}, {V: "v2", Valid: true}, {V: "v2", Valid: true}, {}}, mg)

		// A node's tracking connection breaks: its entries go, the other
		// nodes' stay.
		for _, k := range keys {
			_, err := cached.Get(ctx, k)
			require.NoError(t, err)
		}
		ids := trackingClients(t, masters[0])
		require.Len(t, ids, 1)
		_, err = masters[0].Do(ctx, "CLIENT", "KILL", "ID", ids[0])
		require.NoError(t, err)
		gets0 := nodeCalls(t, masters[0], "get")
		require.Eventually(t, func() bool {
			_, err := cached.Get(ctx, keys[0])
			return err == nil && nodeCalls(t, masters[0], "get") > gets0
		}, 5*time.Second, time.Millisecond, "the entry of the node whose connection broke is read again")
		gets12 := nodeCalls(t, masters[1], "get") + nodeCalls(t, masters[2], "get")
		for _, k := range keys[1:] {
			_, err := cached.Get(ctx, k)
			require.NoError(t, err)
		}
		assert.Equal(t, gets12, nodeCalls(t, masters[1], "get")+nodeCalls(t, masters[2], "get"), "other nodes' entries stay")
		// The node tracks again.
		require.Eventually(t, func() bool { return len(trackingClients(t, masters[0])) == 1 }, 5*time.Second, time.Millisecond)
		require.NoError(t, other.Set(ctx, keys[0], "v4", nil))
		_, err = c.Do(ctx, "PING")
		require.NoError(t, err)
		v, err = cached.Get(ctx, keys[0])
		require.NoError(t, err)
		require.Equal(t, "v4", v)

		// Close ends the tracking on every node.
		require.NoError(t, c.Close())
		for _, m := range masters {
			require.Eventually(t, func() bool { return len(trackingClients(t, m)) == 0 }, 5*time.Second, time.Millisecond)
		}
		_, err = cached.Get(ctx, keys[1])
		require.ErrorIs(t, err, respire.ErrClosed)
	})
}

// warm sets k to val through other and caches it, and caches m as missing.
func warm(t *testing.T, ctx context.Context, other *respire.Client, cached respire.Cached, k, val, m string) {
	t.Helper()
	require.NoError(t, other.Set(ctx, k, val, nil))
	v, err := cached.Get(ctx, k)
	require.NoError(t, err)
	require.Equal(t, val, v)
	_, err = cached.Get(ctx, m)
	require.ErrorIs(t, err, respire.Nil)
}

// readUntil reads key through cached until it returns want, and fails if
// that takes longer than bound after the call; then every read must keep
// returning want.
func readUntil(t *testing.T, ctx context.Context, cached respire.Cached, key, want string, bound time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		v, err := cached.Get(ctx, key)
		if want == "" {
			if err != nil {
				require.ErrorIs(t, err, respire.Nil)
			}
		} else if err != nil {
			require.ErrorIs(t, err, respire.Nil) // not there yet
		}
		if v == want && (want != "" || err != nil) {
			break
		}
		require.Less(t, time.Since(start), bound, "%s still %q, want %q", key, v, want)
	}
	for range 100 {
		v, err := cached.Get(ctx, key)
		require.NoError(t, err)
		require.Equal(t, want, v, "%s went back to an older value", key)
	}
}

// Slots that move to another node, live (MoveSlots) and by a failover: no
// entry of a moved slot is served, and a write acknowledged by the new
// owner is seen within the invalidation delay. Cached misses are the hard
// case: moving a slot migrates its keys, which the old owner reports as
// invalidations, but a missing key has nothing to migrate, and the new
// owner never tracked it.
func TestClusterCacheSlotsMove(t *testing.T) {
	t.Parallel() // waits for servers of its own: see main_test.go
	hc := harness.StartCluster(t, harness.ClusterConfig{})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{ClientCache: &respire.CacheOptions{}})
	other := clusterClient(t, hc, respire.Options{})
	cached := c.Cached(0)
	masters := hc.Masters()
	require.Len(t, masters, 3)
	// Within a round trip or two on a quiet machine; a stale entry would
	// be served for ever (no TTL): a margin no slow machine reaches.
	const bound = 10 * time.Second

	// A live slot move from masters[0] to masters[1].
	from, to := masters[0], masters[1]
	k := keyOn(hc, from, "mv:")
	m := keyOn(hc, from, "mvmiss:")
	warm(t, ctx, other, cached, k, "old", m)
	slots := []int{harness.SlotOf(k)}
	if s := harness.SlotOf(m); s != slots[0] {
		slots = append(slots, s)
	}
	require.NoError(t, hc.MoveSlots(ctx, from, to, slots))
	require.NoError(t, other.Set(ctx, k, "new", nil))
	require.NoError(t, other.Set(ctx, m, "created", nil))
	readUntil(t, ctx, cached, k, "new", bound)
	readUntil(t, ctx, cached, m, "created", bound)
	// The new owner tracks them now.
	require.NoError(t, other.Set(ctx, k, "newer", nil))
	readUntil(t, ctx, cached, k, "newer", bound)

	// A failover: masters[2]'s replica takes over; the old master is a
	// replica now and its tracking connection stays up.
	old := masters[2]
	k2 := keyOn(hc, old, "fo:")
	m2 := keyOn(hc, old, "fomiss:")
	warm(t, ctx, other, cached, k2, "before", m2)
	reps := hc.ReplicasOf(old)
	require.NotEmpty(t, reps)
	require.NoError(t, hc.Failover(ctx, reps[0], ""))
	require.NoError(t, hc.WaitStable(ctx))
	require.NoError(t, other.Set(ctx, k2, "after", nil))
	require.NoError(t, other.Set(ctx, m2, "created", nil))
	readUntil(t, ctx, cached, k2, "after", bound)
	readUntil(t, ctx, cached, m2, "created", bound)
	require.NoError(t, other.Set(ctx, k2, "later", nil))
	readUntil(t, ctx, cached, k2, "later", bound)
}

// A master that stops answering (SIGSTOP: its connections stay open and
// silent) is failed over. It can report nothing, so the entries read from
// it must stop being served once the client routes their slot to the new
// master; the client learns of that by its topology refreshes, here every
// 200ms.
func TestClusterCacheSilentMaster(t *testing.T) {
	t.Parallel() // waits for servers of its own: see main_test.go
	hc := harness.StartCluster(t, harness.ClusterConfig{})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{ClientCache: &respire.CacheOptions{},
		Cluster: &respire.ClusterOptions{RefreshInterval: 200 * time.Millisecond}})
	other := clusterClient(t, hc, respire.Options{})
	cached := c.Cached(0)
	victim := hc.Masters()[0]
	k := keyOn(hc, victim, "silent:")
	m := keyOn(hc, victim, "silentmiss:")
	warm(t, ctx, other, cached, k, "before", m)

	require.NoError(t, hc.Pause(victim))
	// Entries are served from the cache meanwhile: the node can say
	// nothing, and nothing changed.
	v, err := cached.Get(ctx, k)
	require.NoError(t, err)
	require.Equal(t, "before", v)
	require.NoError(t, hc.WaitMasterFailed(ctx, victim))
	var last atomic.Value
	written := assert.Eventually(t, func() bool {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		err := other.Set(wctx, k, "after", nil)
		if err == nil {
			err = other.Set(wctx, m, "created", nil)
		}
		if err != nil {
			last.Store(fmt.Sprintf("%s: %v", time.Now().Format("15:04:05.000"), err))
		}
		return err == nil
	}, 20*time.Second, 10*time.Millisecond, "writes on the promoted replica")
	if !written {
		t.Fatalf("the last write's error, at %v", last.Load())
	}
	// The write is acknowledged by the new master: once the client's
	// topology says so (a refresh, 200ms), the old entries are not served.
	readUntil(t, ctx, cached, k, "after", 5*time.Second)
	readUntil(t, ctx, cached, m, "created", 5*time.Second)
	require.NoError(t, other.Set(ctx, k, "later", nil))
	readUntil(t, ctx, cached, k, "later", 10*time.Second)
	require.NoError(t, hc.Resume(victim))
}

// BenchmarkClusterCachedGetHit is the hit path of a cached GET on a
// cluster: the slot's route and its tracker's tag are checked on every hit.
func BenchmarkClusterCachedGetHit(b *testing.B) {
	hc := harness.StartCluster(b, harness.ClusterConfig{Replicas: -1})
	ctx := context.Background()
	opts := respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}, ClientCache: &respire.CacheOptions{}}
	c, err := respire.Connect(ctx, opts)
	require.NoError(b, err)
	defer c.Close()
	const key = "bench:hit"
	require.NoError(b, c.Set(ctx, key, strings.Repeat("v", 64), nil))
	cached := c.Cached(0)
	_, err = cached.Get(ctx, key)
	require.NoError(b, err)
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := cached.Get(ctx, key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := cached.Get(ctx, key); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
