package helpers

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/ratelimit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeClock is a settable clock for Options.Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (f *fakeClock) now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.t
}

func (f *fakeClock) set(t time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.t = t
}

func testRateLimit(t *testing.T, tp topology) {
	t.Run("edges", func(t *testing.T) { testRateEdges(t, tp) })
	t.Run("server-clock", func(t *testing.T) { testRateServerClock(t, tp) })
}

// res is a Result in milliseconds, for compact expectations.
func res(allowed bool, remaining int, retryMs, resetMs int64) ratelimit.Result {
	return ratelimit.Result{Allowed: allowed, Remaining: remaining,
		RetryAfter: time.Duration(retryMs) * time.Millisecond, ResetAfter: time.Duration(resetMs) * time.Millisecond}
}

// Exact decisions on a clock of the test's own: a burst, the refill of one
// interval, a second boundary, costs above one.
func testRateEdges(t *testing.T, tp topology) {
	ctx := ctxT(t)
	clock := &fakeClock{}
	t0 := time.Unix(1_700_000_000, 0)
	l, err := ratelimit.New(connect(t, tp.opts()), ratelimit.Options{Prefix: prefix(t), Now: clock.now})
	require.NoError(t, err)
	lim := ratelimit.PerSecond(10, 5) // one every 100ms, 5 at once
	at := func(ms int64, key string, n int, want ratelimit.Result) {
		t.Helper()
		clock.set(t0.Add(time.Duration(ms) * time.Millisecond))
		got, err := l.AllowN(ctx, key, lim, n)
		require.NoError(t, err)
		assert.Equal(t, want, got, "%s at %dms, cost %d", key, ms, n)
	}

	// The burst: 5 allowed at once, the 6th refused for one interval.
	for i := range 5 {
		at(0, "a", 1, res(true, 4-i, 0, int64(100*(i+1))))
	}
	at(0, "a", 1, res(false, 0, 100, 500))
	at(99, "a", 1, res(false, 0, 1, 401))
	// Refill: one interval later, exactly one more.
	at(100, "a", 1, res(true, 0, 0, 500))
	at(100, "a", 1, res(false, 0, 100, 500))
	at(250, "a", 1, res(true, 0, 0, 450))
	// Peek without consuming.
	at(250, "a", 0, res(true, 0, 0, 450))
	// Idle for the whole burst: full again.
	at(2000, "a", 1, res(true, 4, 0, 100))

	// Crossing a second: a burst spent at 999ms is not renewed at 1001ms,
	// as a fixed one-second window would renew it.
	for i := range 5 {
		at(999, "b", 1, res(true, 4-i, 0, int64(100*(i+1))))
	}
	at(1001, "b", 1, res(false, 0, 98, 498))
	at(1099, "b", 1, res(true, 0, 0, 500))

	// Costs: 3 of 5, then 3 more refused (2 remain) until one interval.
	at(0, "c", 3, res(true, 2, 0, 300))
	at(0, "c", 3, res(false, 2, 100, 300))
	at(100, "c", 3, res(true, 0, 0, 500))

	// Keys are independent (on a cluster, spread over the slots).
	for i := range 8 {
		at(5000, fmt.Sprint("k", i), 5, res(true, 0, 0, 500))
		at(5000, fmt.Sprint("k", i), 1, res(false, 0, 100, 500))
	}
}

// The server's clock: a burst, then a refusal for about one interval, and
// the key expires when the limit is full again.
func testRateServerClock(t *testing.T, tp topology) {
	ctx := ctxT(t)
	c := connect(t, tp.opts())
	l, err := ratelimit.New(c, ratelimit.Options{Prefix: prefix(t)})
	require.NoError(t, err)
	lim := ratelimit.PerMinute(3, 3) // one every 20s
	for i := range 3 {
		r, err := l.Allow(ctx, "s", lim)
		require.NoError(t, err)
		require.True(t, r.Allowed)
		assert.Equal(t, 2-i, r.Remaining)
	}
	r, err := l.Allow(ctx, "s", lim)
	require.NoError(t, err)
	assert.False(t, r.Allowed)
	assert.InDelta(t, float64(20*time.Second), float64(r.RetryAfter), float64(time.Second))
	assert.InDelta(t, float64(60*time.Second), float64(r.ResetAfter), float64(time.Second))
	pttl, err := c.PTTL(ctx, l.Key("s"))
	require.NoError(t, err)
	assert.InDelta(t, float64(60*time.Second), float64(pttl), float64(time.Second))
}
