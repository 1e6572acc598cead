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

// TestCachedGeneratedTypedReads: generated cached reads whose values are
// slices of structs, numbers or pointers are served locally too (the
// server's call counts stay put), and every hit is the caller's own copy:
// changing what one read returned does not change what the next returns.
func TestCachedGeneratedTypedReads(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
		other := connect(t, respire.Options{Addr: srv.Addr})
		ctx := ctxT(t)
		for _, args := range [][]any{
			{"ZADD", "ct:z", 1, "x", 2, "y"},
			{"XADD", "ct:s", "1-0", "f", "v", "g", "w"},
			{"XADD", "ct:s", "2-0", "f", "v2"},
			{"RPUSH", "ct:l", "a", "b", "a", "c", "a"},
			{"GEOADD", "ct:g", 13.361389, 38.115556, "palermo", 15.087269, 37.502669, "catania"},
			{"SADD", "ct:set", "m"},
		} {
			_, err := other.Do(ctx, args...)
			require.NoError(t, err)
		}
		cached := c.Cached(time.Minute)
		near := respire.GeoSearchBy{ByRadius: &respire.GeoCircle{Radius: 200, Unit: respire.UnitKM}}
		from := respire.GeoSearchFrom{FromMember: "palermo"}

		type check struct {
			cmd  string // as INFO commandstats names it
			read func(t *testing.T) any
			// mutate changes the value a read returned, in place.
			mutate func(v any)
		}
		checks := []check{
			{"zrange", func(t *testing.T) any {
				v, err := cached.ZRangeWithScores(ctx, "ct:z", 0, -1, nil)
				require.NoError(t, err)
				require.Equal(t, []respire.ScoredMember{{Member: "x", Score: 1}, {Member: "y", Score: 2}}, v)
				return v
			}, func(v any) { v.([]respire.ScoredMember)[0].Member = "changed" }},
			{"xrange", func(t *testing.T) any {
				v, err := cached.XRange(ctx, "ct:s", "-", "+", nil)
				require.NoError(t, err)
				require.Equal(t, []respire.StreamEntry{
					{ID: "1-0", Fields: []respire.FieldValue{{Field: "f", Value: "v"}, {Field: "g", Value: "w"}}},
					{ID: "2-0", Fields: []respire.FieldValue{{Field: "f", Value: "v2"}}},
				}, v)
				return v
			}, func(v any) { v.([]respire.StreamEntry)[0].Fields[0].Value = "changed" }},
			{"lpos", func(t *testing.T) any {
				v, err := cached.LPosCount(ctx, "ct:l", "a", 0, nil)
				require.NoError(t, err)
				require.Equal(t, []int64{0, 2, 4}, v)
				return v
			}, func(v any) { v.([]int64)[0] = 99 }},
			{"geopos", func(t *testing.T) any {
				v, err := cached.GeoPos(ctx, "ct:g", "palermo", "nowhere")
				require.NoError(t, err)
				require.Len(t, v, 2)
				require.NotNil(t, v[0])
				require.InDelta(t, 13.361389, v[0].Longitude, 1e-5)
				require.Nil(t, v[1])
				return v
			}, func(v any) { v.([]*respire.GeoPos)[0].Longitude = 0 }},
			{"geosearch", func(t *testing.T) any {
				v, err := cached.GeoSearchLocations(ctx, "ct:g", from, near, &respire.GeoSearchLocationsOptions{Order: respire.OrderAsc, WithCoord: true, WithDist: true, WithHash: true})
				require.NoError(t, err)
				require.Len(t, v, 2)
				require.Equal(t, "palermo", v[0].Member)
				return v
			}, func(v any) { v.([]respire.GeoLocation)[0].Member = "changed" }},
			{"zmscore", func(t *testing.T) any {
				v, err := cached.ZMScore(ctx, "ct:z", "y", "nope")
				require.NoError(t, err)
				require.Equal(t, []respire.Null[float64]{{V: 2, Valid: true}, {}}, v)
				return v
			}, func(v any) { v.([]respire.Null[float64])[0].V = 99 }},
			{"smismember", func(t *testing.T) any {
				v, err := cached.SMIsMember(ctx, "ct:set", "m", "n")
				require.NoError(t, err)
				require.Equal(t, []bool{true, false}, v)
				return v
			}, func(v any) { v.([]bool)[0] = false }},
		}
		for _, ck := range checks {
			t.Run(ck.cmd, func(t *testing.T) {
				ck.mutate(ck.read(t)) // the miss: fills the cache
				calls := cmdCalls(t, srv, ck.cmd)
				hits := c.CacheStats().Hits
				for range 20 {
					ck.mutate(ck.read(t))
				}
				require.Equal(t, calls, cmdCalls(t, srv, ck.cmd), "hits must not reach the server")
				require.EqualValues(t, 20, c.CacheStats().Hits-hits)
			})
		}

		// A write through this client is seen at once; one by another
		// client once its invalidation arrives.
		_, err := c.XAdd(ctx, "ct:s", "3-0", []respire.FieldValue{{Field: "h", Value: "x"}}, nil)
		require.NoError(t, err)
		entries, err := cached.XRange(ctx, "ct:s", "-", "+", nil)
		require.NoError(t, err)
		require.Len(t, entries, 3)
		_, err = other.Do(ctx, "ZADD", "ct:z", 3, "z")
		require.NoError(t, err)
		require.Eventually(t, func() bool {
			v, err := cached.ZRangeWithScores(ctx, "ct:z", 0, -1, nil)
			return err == nil && len(v) == 3
		}, 5*time.Second, time.Millisecond)
	})
}
