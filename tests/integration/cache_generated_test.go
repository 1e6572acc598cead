package integration

import (
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// TestCachedGeneratedReads: the generated cached forms of read-only
// commands serve repeated reads locally (the server's call counts stay
// put) and see a write from another client after it is acknowledged.
func TestCachedGeneratedReads(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
		other := connect(t, respire.Options{Addr: srv.Addr})
		ctx := ctxT(t)
		_, err := other.Do(ctx, "RPUSH", "cg:list", "a", "b", "c")
		require.NoError(t, err)
		_, err = other.Do(ctx, "ZADD", "cg:z", 1, "x", 2, "y")
		require.NoError(t, err)

		cached := c.Cached(time.Minute)
		for range 3 {
			items, err := cached.LRange(ctx, "cg:list", 0, -1)
			require.NoError(t, err)
			require.Equal(t, []string{"a", "b", "c"}, items)
			n, err := cached.ZCard(ctx, "cg:z")
			require.NoError(t, err)
			require.Equal(t, int64(2), n)
			s, err := cached.ZScore(ctx, "cg:z", "y")
			require.NoError(t, err)
			require.Equal(t, 2.0, s)
		}
		lrange, zcard := cmdCalls(t, srv, "lrange"), cmdCalls(t, srv, "zcard")
		for range 100 {
			_, err := cached.LRange(ctx, "cg:list", 0, -1)
			require.NoError(t, err)
			_, err = cached.ZCard(ctx, "cg:z")
			require.NoError(t, err)
		}
		require.Equal(t, lrange, cmdCalls(t, srv, "lrange"), "hits must not reach the server")
		require.Equal(t, zcard, cmdCalls(t, srv, "zcard"))

		// A write by another client is seen once the invalidation arrives.
		_, err = other.Do(ctx, "RPUSH", "cg:list", "d")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			items, err := cached.LRange(ctx, "cg:list", 0, -1)
			return err == nil && len(items) == 4
		}, 5*time.Second, time.Millisecond)
		// A write through this client is seen at once.
		_, err = c.ZAdd(ctx, "cg:z", []respire.ScoredMember{{Member: "z", Score: 3}}, nil)
		require.NoError(t, err)
		n, err := cached.ZCard(ctx, "cg:z")
		require.NoError(t, err)
		require.Equal(t, int64(3), n)
	})
}
