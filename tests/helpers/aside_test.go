package helpers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/aside"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func testAside(t *testing.T, tp topology) {
	t.Run("stampede", func(t *testing.T) { testAsideStampede(t, tp) })
	t.Run("invalidated", func(t *testing.T) { testAsideInvalidated(t, tp) })
	t.Run("errors", func(t *testing.T) { testAsideErrors(t, tp) })
	t.Run("no-cache", func(t *testing.T) {
		_, err := aside.New(connect(t, tp.opts()), aside.Options{TTL: time.Minute})
		require.ErrorIs(t, err, aside.ErrInvalidOption)
		require.ErrorIs(t, err, respire.ErrCacheDisabled)
		assert.Contains(t, err.Error(), "Options.ClientCache")
	})
}

// newAside returns a Cache on a client of its own with a client-side cache.
func newAside(t *testing.T, tp topology, cc *commandCounter) (*aside.Cache, *respire.Client) {
	t.Helper()
	opts := tp.opts()
	opts.ClientCache = &respire.CacheOptions{}
	if cc != nil {
		opts.Interceptors = []respire.Interceptor{cc.interceptor()}
	}
	c := connect(t, opts)
	a, err := aside.New(c, aside.Options{TTL: time.Minute})
	require.NoError(t, err)
	return a, c
}

// 1,000 goroutines miss one key at once: the loader runs once, everyone
// gets its value, and later reads are served from memory.
func testAsideStampede(t *testing.T, tp topology) {
	ctx := ctxT(t)
	cc := newCounter()
	a, c := newAside(t, tp, cc)
	key := prefix(t) + "k"
	var calls atomic.Int32
	load := func(ctx context.Context, k string) (string, error) {
		calls.Add(1)
		return "v:" + k, nil
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	vals := make([]string, 1000)
	errs := make([]error, 1000)
	for i := range 1000 {
		wg.Go(func() {
			<-start
			vals[i], errs[i] = a.Get(ctx, key, load)
		})
	}
	close(start)
	wg.Wait()
	for i := range vals {
		require.NoError(t, errs[i])
		require.Equal(t, "v:"+key, vals[i])
	}
	assert.Equal(t, int32(1), calls.Load(), "loader calls")
	assert.Equal(t, 1, cc.count("SET"), "SETs")

	hits := c.CacheStats().Hits
	for range 100 {
		v, err := a.Get(ctx, key, load)
		require.NoError(t, err)
		require.Equal(t, "v:"+key, v)
	}
	assert.Equal(t, int32(1), calls.Load(), "loader calls after the stampede")
	assert.GreaterOrEqual(t, c.CacheStats().Hits-hits, int64(99), "reads served from memory")
}

// A write by another client reaches the cached copy: the next Get returns
// the new value without calling the loader; a Delete makes it load again.
func testAsideInvalidated(t *testing.T, tp topology) {
	ctx := ctxT(t)
	a, _ := newAside(t, tp, nil)
	b, _ := newAside(t, tp, nil)
	other := connect(t, tp.opts())
	key := prefix(t) + "k"
	var calls atomic.Int32
	load := func(context.Context, string) (string, error) {
		calls.Add(1)
		return "loaded", nil
	}
	v, err := a.Get(ctx, key, load)
	require.NoError(t, err)
	require.Equal(t, "loaded", v)
	v, err = a.Get(ctx, key, load) // served from memory now
	require.NoError(t, err)
	require.Equal(t, "loaded", v)

	require.NoError(t, other.Set(ctx, key, "written", nil))
	require.Eventually(t, func() bool {
		v, err := a.Get(ctx, key, load)
		return err == nil && v == "written"
	}, 5*time.Second, time.Millisecond, "the write never reached the cached copy")
	assert.Equal(t, int32(1), calls.Load())

	v, err = b.Get(ctx, key, load) // another process's cache
	require.NoError(t, err)
	require.Equal(t, "written", v)
	require.NoError(t, b.Delete(ctx, key)) // b's write drops a's copy
	require.Eventually(t, func() bool {
		v, err := a.Get(ctx, key, load)
		return err == nil && v == "loaded"
	}, 5*time.Second, time.Millisecond, "the delete never reached the cached copy")
	assert.Equal(t, int32(2), calls.Load())
}

// A loader's error goes to every caller of its flight and is not cached.
func testAsideErrors(t *testing.T, tp topology) {
	ctx := ctxT(t)
	a, c := newAside(t, tp, nil)
	key := prefix(t) + "k"
	boom := errors.New("source down")
	var calls atomic.Int32
	release := make(chan struct{})
	failing := func(context.Context, string) (string, error) {
		calls.Add(1)
		<-release
		return "", boom
	}
	var wg sync.WaitGroup
	errs := make([]error, 20)
	for i := range errs {
		wg.Go(func() { _, errs[i] = a.Get(ctx, key, failing) })
	}
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	close(release)
	wg.Wait()
	for _, err := range errs {
		assert.ErrorIs(t, err, boom)
	}
	// Callers that arrived after the failed flight ran a second one; none
	// was served the error from a cache.
	n := calls.Load()
	_, err := c.Get(ctx, key)
	require.ErrorIs(t, err, respire.Nil, "an error was stored")
	v, err := a.Get(ctx, key, func(context.Context, string) (string, error) { calls.Add(1); return "ok", nil })
	require.NoError(t, err)
	assert.Equal(t, "ok", v)
	assert.Equal(t, n+1, calls.Load(), "the loader runs again after an error")

	// A caller that gives up does not cancel the load the others wait for.
	key2 := prefix(t) + "k2"
	started, slow := make(chan struct{}), make(chan struct{})
	short, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := a.Get(short, key2, func(context.Context, string) (string, error) {
			close(started)
			<-slow
			return "late", nil
		})
		done <- err
	}()
	<-started
	cancel()
	assert.ErrorIs(t, <-done, context.Canceled)
	close(slow)
	require.Eventually(t, func() bool {
		v, err := c.Get(ctx, key2)
		return err == nil && v == "late"
	}, 5*time.Second, time.Millisecond, "the abandoned load was not stored")
}
