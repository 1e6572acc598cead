package ecosystem

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func redisRateSuite(t *testing.T, limiter *redis_rate.Limiter, p string) {
	t.Run("burst then refused", func(t *testing.T) {
		ctx := ctxT(t)
		limit := redis_rate.PerMinute(5) // burst 5, one more every 12s
		for i := 0; i < 5; i++ {
			res, err := limiter.Allow(ctx, p+"burst", limit)
			require.NoError(t, err)
			require.Equal(t, 1, res.Allowed, "request %d", i)
			assert.Equal(t, 4-i, res.Remaining)
			assert.Equal(t, time.Duration(-1), res.RetryAfter)
		}
		res, err := limiter.Allow(ctx, p+"burst", limit)
		require.NoError(t, err)
		assert.Equal(t, 0, res.Allowed)
		assert.Equal(t, 0, res.Remaining)
		assert.Greater(t, res.RetryAfter, 11*time.Second)
		assert.LessOrEqual(t, res.RetryAfter, 12*time.Second)
		assert.Greater(t, res.ResetAfter, 59*time.Second)

		require.NoError(t, limiter.Reset(ctx, p+"burst"))
		res, err = limiter.Allow(ctx, p+"burst", limit)
		require.NoError(t, err)
		assert.Equal(t, 1, res.Allowed)
		assert.Equal(t, 4, res.Remaining, "Reset gives the whole burst back")
	})

	t.Run("AllowN and AllowAtMost at the edge", func(t *testing.T) {
		ctx := ctxT(t)
		limit := redis_rate.Limit{Rate: 10, Burst: 10, Period: time.Hour}
		res, err := limiter.AllowN(ctx, p+"n", limit, 11)
		require.NoError(t, err)
		assert.Equal(t, 0, res.Allowed, "more than the burst at once")
		res, err = limiter.AllowN(ctx, p+"n", limit, 10)
		require.NoError(t, err)
		assert.Equal(t, 10, res.Allowed, "exactly the burst")
		assert.Equal(t, 0, res.Remaining)
		res, err = limiter.AllowN(ctx, p+"n", limit, 1)
		require.NoError(t, err)
		assert.Equal(t, 0, res.Allowed)

		require.NoError(t, limiter.Reset(ctx, p+"n"))
		res, err = limiter.AllowN(ctx, p+"n", limit, 7)
		require.NoError(t, err)
		require.Equal(t, 7, res.Allowed)
		res, err = limiter.AllowAtMost(ctx, p+"n", limit, 5)
		require.NoError(t, err)
		assert.Equal(t, 3, res.Allowed, "what is left")
		assert.Equal(t, 0, res.Remaining)
		res, err = limiter.AllowAtMost(ctx, p+"n", limit, 5)
		require.NoError(t, err)
		assert.Equal(t, 0, res.Allowed)
		assert.Greater(t, res.RetryAfter, time.Duration(0))
	})

	t.Run("refill after the period", func(t *testing.T) {
		ctx := ctxT(t)
		limit := redis_rate.Limit{Rate: 2, Burst: 2, Period: 800 * time.Millisecond} // a token each 400ms
		res, err := limiter.AllowN(ctx, p+"refill", limit, 2)
		require.NoError(t, err)
		require.Equal(t, 2, res.Allowed)
		res, err = limiter.Allow(ctx, p+"refill", limit)
		require.NoError(t, err)
		require.Equal(t, 0, res.Allowed)
		require.Greater(t, res.RetryAfter, time.Duration(0))
		require.LessOrEqual(t, res.RetryAfter, 400*time.Millisecond)

		// The limiter's own answer says when a token comes back: wait for
		// that moment (and a little, for rounding), then one request, and
		// only one, passes: the next token is 400ms away.
		<-time.After(res.RetryAfter + 20*time.Millisecond)
		res, err = limiter.Allow(ctx, p+"refill", limit)
		require.NoError(t, err)
		assert.Equal(t, 1, res.Allowed, "a token is back after RetryAfter")
		res, err = limiter.Allow(ctx, p+"refill", limit)
		require.NoError(t, err)
		assert.Equal(t, 0, res.Allowed, "only one")

		// After a whole period of quiet the burst is full again.
		<-time.After(limit.Period)
		res, err = limiter.AllowN(ctx, p+"refill", limit, 2)
		require.NoError(t, err)
		assert.Equal(t, 2, res.Allowed)
	})

	t.Run("concurrent callers share the limit", func(t *testing.T) {
		ctx := ctxT(t)
		limit := redis_rate.Limit{Rate: 20, Burst: 20, Period: time.Hour}
		var allowed, refused atomic.Int32
		var wg sync.WaitGroup
		for i := 0; i < 50; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := limiter.Allow(ctx, p+"conc", limit)
				if !assert.NoError(t, err) {
					return
				}
				if res.Allowed == 1 {
					allowed.Add(1)
				} else {
					refused.Add(1)
				}
			}()
		}
		wg.Wait()
		assert.Equal(t, int32(20), allowed.Load())
		assert.Equal(t, int32(30), refused.Load())
	})
}

func TestRedisRate(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			rdb, rc := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			require.NoError(t, rc.ScriptFlush(ctxT(t), nil))
			redisRateSuite(t, redis_rate.NewLimiter(rdb), fmt.Sprintf("rate%d:", proto))
		})
	}
}

func TestRedisRateCluster(t *testing.T) {
	rdb, _ := onCluster(t)
	limiter := redis_rate.NewLimiter(rdb)
	p := unique("crate")
	redisRateSuite(t, limiter, p)

	t.Run("keys on every node", func(t *testing.T) {
		ctx := ctxT(t)
		limit := redis_rate.PerHour(1)
		for i := 0; i < 32; i++ {
			key := fmt.Sprintf("%smany:%d", p, i)
			res, err := limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			require.Equal(t, 1, res.Allowed, key)
			res, err = limiter.Allow(ctx, key, limit)
			require.NoError(t, err)
			require.Equal(t, 0, res.Allowed, key)
		}
	})
}
