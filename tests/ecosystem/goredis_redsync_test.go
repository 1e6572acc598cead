package ecosystem

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-redsync/redsync/v4"
	redsyncgoredis "github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fastRetry keeps contended tests short: redsync's default waits 50-250ms
// between tries.
var fastRetry = []redsync.Option{
	redsync.WithTries(100000),
	redsync.WithRetryDelayFunc(func(int) time.Duration { return time.Millisecond }),
}

func TestRedsync(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			rdb, rc := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			rs := redsync.New(redsyncgoredis.NewPool(rdb))
			p := fmt.Sprintf("redsync%d:", proto)

			t.Run("contended", func(t *testing.T) {
				contend(t, 16, 8, func(ctx context.Context) (func() error, error) {
					m := rs.NewMutex(p+"contended", append(fastRetry, redsync.WithExpiry(10*time.Second))...)
					if err := m.LockContext(ctx); err != nil {
						return nil, err
					}
					return func() error {
						ok, err := m.UnlockContext(ctx)
						if err == nil && !ok {
							err = fmt.Errorf("unlock of %s found it not held", m.Name())
						}
						return err
					}, nil
				})
			})

			t.Run("taken", func(t *testing.T) {
				ctx := ctxT(t)
				a := rs.NewMutex(p+"taken", redsync.WithExpiry(time.Minute))
				require.NoError(t, a.LockContext(ctx))
				b := rs.NewMutex(p + "taken")
				err := b.TryLockContext(ctx)
				var taken *redsync.ErrTaken
				require.ErrorAs(t, err, &taken)
				ok, err := a.ValidContext(ctx)
				require.NoError(t, err)
				assert.True(t, ok)
				ok, err = a.UnlockContext(ctx)
				require.NoError(t, err)
				assert.True(t, ok)
				require.NoError(t, b.TryLockContext(ctx), "free once unlocked")
				_, err = b.UnlockContext(ctx)
				require.NoError(t, err)
			})

			t.Run("extend", func(t *testing.T) {
				ctx := ctxT(t)
				m := rs.NewMutex(p+"ext", redsync.WithExpiry(2*time.Second))
				require.NoError(t, m.LockContext(ctx))
				before := m.Until()
				pttl, err := rc.PTTL(ctx, p+"ext")
				require.NoError(t, err)
				assert.LessOrEqual(t, pttl, 2*time.Second)

				ok, err := m.ExtendContext(ctx)
				require.NoError(t, err)
				assert.True(t, ok)
				assert.False(t, m.Until().Before(before))
				pttl, err = rc.PTTL(ctx, p+"ext")
				require.NoError(t, err)
				assert.Greater(t, pttl, time.Second)

				ok, err = m.UnlockContext(ctx)
				require.NoError(t, err)
				assert.True(t, ok)
				ok, err = m.UnlockContext(ctx)
				assert.False(t, ok, "a second unlock")
				require.ErrorIs(t, err, redsync.ErrLockAlreadyExpired)
				ok, err = m.ExtendContext(ctx)
				assert.False(t, ok, "extending a released lock")
				require.Error(t, err)
			})

			t.Run("expiry", func(t *testing.T) {
				ctx := ctxT(t)
				a := rs.NewMutex(p+"exp", redsync.WithExpiry(150*time.Millisecond))
				require.NoError(t, a.LockContext(ctx))
				// b retries until the server lets a's lock go.
				b := rs.NewMutex(p+"exp", append(fastRetry, redsync.WithExpiry(time.Minute))...)
				require.NoError(t, b.LockContext(ctx))
				ok, err := a.UnlockContext(ctx)
				assert.False(t, ok, "a's lock expired")
				var taken *redsync.ErrTaken
				require.ErrorAs(t, err, &taken, "b holds the key now")
				v, err := rc.Get(ctx, p+"exp")
				require.NoError(t, err)
				assert.Equal(t, b.Value(), v, "a's late unlock left b's lock alone")
				ok, err = b.UnlockContext(ctx)
				require.NoError(t, err)
				assert.True(t, ok)
			})
		})
	}
}
