package ecosystem

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// contend has workers goroutines take the lock rounds times each through
// lock, and checks that no two of them were ever inside together. lock
// returns the function that releases what it took.
func contend(t *testing.T, workers, rounds int, lock func(ctx context.Context) (func() error, error)) {
	t.Helper()
	ctx := ctxT(t)
	var inside, maxInside atomic.Int32
	counter := 0 // guarded by the lock alone: the race detector checks it too
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := 0; r < rounds; r++ {
				unlock, err := lock(ctx)
				if err != nil {
					errs <- err
					return
				}
				n := inside.Add(1)
				for {
					m := maxInside.Load()
					if n <= m || maxInside.CompareAndSwap(m, n) {
						break
					}
				}
				counter++
				inside.Add(-1)
				if err := unlock(); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Equal(t, int32(1), maxInside.Load(), "holders at once")
	assert.Equal(t, workers*rounds, counter)
}

func redislockSuite(t *testing.T, rc *respire.Client, locker *redislock.Client, p string) {
	t.Run("contended", func(t *testing.T) {
		retry := &redislock.Options{RetryStrategy: redislock.LinearBackoff(time.Millisecond)}
		contend(t, 16, 8, func(ctx context.Context) (func() error, error) {
			l, err := locker.Obtain(ctx, p+"contended", 10*time.Second, retry)
			if err != nil {
				return nil, err
			}
			return func() error { return l.Release(ctx) }, nil
		})
	})

	t.Run("held", func(t *testing.T) {
		ctx := ctxT(t)
		l, err := locker.Obtain(ctx, p+"held", time.Minute, &redislock.Options{Metadata: "owner-1"})
		require.NoError(t, err)
		assert.Equal(t, "owner-1", l.Metadata())
		_, err = locker.Obtain(ctx, p+"held", time.Minute, nil)
		require.ErrorIs(t, err, redislock.ErrNotObtained)

		// A retrying Obtain gives up when its context ends.
		short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		defer cancel()
		_, err = locker.Obtain(short, p+"held", time.Minute,
			&redislock.Options{RetryStrategy: redislock.LinearBackoff(5 * time.Millisecond)})
		require.ErrorIs(t, err, context.DeadlineExceeded)
		require.NoError(t, l.Release(ctx))
	})

	t.Run("expiry", func(t *testing.T) {
		ctx := ctxT(t)
		l, err := locker.Obtain(ctx, p+"exp", 150*time.Millisecond, nil)
		require.NoError(t, err)
		ttl, err := l.TTL(ctx)
		require.NoError(t, err)
		assert.Greater(t, ttl, time.Duration(0))
		assert.LessOrEqual(t, ttl, 150*time.Millisecond)

		// The server lets the lock go: another owner gets it.
		other, err := locker.Obtain(ctx, p+"exp", time.Minute,
			&redislock.Options{RetryStrategy: redislock.LinearBackoff(10 * time.Millisecond)})
		require.NoError(t, err)
		ttl, err = l.TTL(ctx)
		require.NoError(t, err)
		assert.Zero(t, ttl, "an expired lock's TTL, now that someone else holds the key")
		require.ErrorIs(t, l.Release(ctx), redislock.ErrLockNotHeld)
		require.ErrorIs(t, l.Refresh(ctx, time.Minute, nil), redislock.ErrNotObtained)
		v, err := rc.Get(ctx, p+"exp")
		require.NoError(t, err)
		assert.Equal(t, other.Token(), v, "the old owner's release left the new lock alone")
		require.NoError(t, other.Release(ctx))
	})

	t.Run("refresh", func(t *testing.T) {
		ctx := ctxT(t)
		l, err := locker.Obtain(ctx, p+"ref", 200*time.Millisecond, nil)
		require.NoError(t, err)
		require.NoError(t, l.Refresh(ctx, 30*time.Second, nil))
		ttl, err := l.TTL(ctx)
		require.NoError(t, err)
		assert.Greater(t, ttl, 20*time.Second)
		pttl, err := rc.PTTL(ctx, p+"ref")
		require.NoError(t, err)
		assert.Greater(t, pttl, 20*time.Second)
		require.NoError(t, l.Release(ctx))
	})

	t.Run("release", func(t *testing.T) {
		ctx := ctxT(t)
		l, err := locker.Obtain(ctx, p+"rel", time.Minute, nil)
		require.NoError(t, err)
		require.NoError(t, l.Release(ctx))
		n, err := rc.Exists(ctx, p+"rel")
		require.NoError(t, err)
		assert.Zero(t, n)
		require.ErrorIs(t, l.Release(ctx), redislock.ErrLockNotHeld)
		again, err := locker.Obtain(ctx, p+"rel", time.Minute, nil)
		require.NoError(t, err)
		require.NoError(t, again.Release(ctx))
	})
}

func TestRedislock(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			rdb, rc := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			require.NoError(t, rc.ScriptFlush(ctxT(t), nil))
			redislockSuite(t, rc, redislock.New(rdb), fmt.Sprintf("lock%d:", proto))
		})
	}
}

// On a cluster each lock is one key, so one slot: the scripts run on the
// key's owner, loaded there on first use (EVALSHA's NOSCRIPT, then EVAL).
func TestRedislockCluster(t *testing.T) {
	rdb, rc := onCluster(t)
	locker := redislock.New(rdb)
	p := unique("clock")
	redislockSuite(t, rc, locker, p)

	t.Run("keys on every node", func(t *testing.T) {
		ctx := ctxT(t)
		var locks []*redislock.Lock
		for i := 0; i < 32; i++ {
			l, err := locker.Obtain(ctx, fmt.Sprintf("%smany:%d", p, i), time.Minute, nil)
			require.NoError(t, err)
			locks = append(locks, l)
		}
		for _, l := range locks {
			_, err := locker.Obtain(ctx, l.Key(), time.Minute, nil)
			require.True(t, errors.Is(err, redislock.ErrNotObtained), "%s: %v", l.Key(), err)
			require.NoError(t, l.Release(ctx))
		}
	})
}
