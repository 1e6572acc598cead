package ecosystem

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/cache/v9"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type profile struct {
	Name  string
	Age   int
	Notes string
}

func TestGoRedisCache(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			rdb, rc := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			p := fmt.Sprintf("gcache%d:", proto)
			// No local cache: every Get and Set goes to the server.
			c := cache.New(&cache.Options{Redis: rdb})

			t.Run("set and get", func(t *testing.T) {
				ctx := ctxT(t)
				var got profile
				err := c.Get(ctx, p+"ann", &got)
				require.ErrorIs(t, err, cache.ErrCacheMiss)
				assert.False(t, c.Exists(ctx, p+"ann"))

				// Long enough to be compressed on its way in.
				ann := profile{Name: "Ann", Age: 41, Notes: strings.Repeat("likes cats. ", 40)}
				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "ann", Value: ann, TTL: time.Minute}))
				require.NoError(t, c.Get(ctx, p+"ann", &got))
				assert.Equal(t, ann, got)
				assert.True(t, c.Exists(ctx, p+"ann"))
				pttl, err := rc.PTTL(ctx, p+"ann")
				require.NoError(t, err)
				assert.Greater(t, pttl, 50*time.Second)

				require.NoError(t, c.Delete(ctx, p+"ann"))
				require.ErrorIs(t, c.Get(ctx, p+"ann", &got), cache.ErrCacheMiss)
				require.NoError(t, c.Delete(ctx, p+"ann"), "deleting a missing key is no error")
			})

			t.Run("NX and XX", func(t *testing.T) {
				ctx := ctxT(t)
				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "xx", Value: "v", SetXX: true}))
				require.ErrorIs(t, c.Get(ctx, p+"xx", new(string)), cache.ErrCacheMiss, "XX creates nothing")

				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "nx", Value: "first", SetNX: true}))
				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "nx", Value: "second", SetNX: true}))
				var s string
				require.NoError(t, c.Get(ctx, p+"nx", &s))
				assert.Equal(t, "first", s, "NX keeps the first value")
				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "nx", Value: "third", SetXX: true}))
				require.NoError(t, c.Get(ctx, p+"nx", &s))
				assert.Equal(t, "third", s, "XX replaces")
			})

			t.Run("Once computes once", func(t *testing.T) {
				ctx := ctxT(t)
				var calls atomic.Int32
				load := func(*cache.Item) (any, error) {
					calls.Add(1)
					return profile{Name: "Bob", Age: 7}, nil
				}
				var wg sync.WaitGroup
				for i := 0; i < 10; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var got profile
						err := c.Once(&cache.Item{Ctx: ctx, Key: p + "bob", Value: &got, TTL: time.Minute, Do: load})
						if assert.NoError(t, err) {
							assert.Equal(t, "Bob", got.Name)
						}
					}()
				}
				wg.Wait()
				assert.Equal(t, int32(1), calls.Load())

				// Another cache on the same server (another process, say)
				// finds the value there and computes nothing.
				other := cache.New(&cache.Options{Redis: rdb})
				var got profile
				require.NoError(t, other.Once(&cache.Item{Ctx: ctx, Key: p + "bob", Value: &got, Do: load}))
				assert.Equal(t, 7, got.Age)
				assert.Equal(t, int32(1), calls.Load(), "a hit in the server")

				// A failing loader caches nothing.
				boom := errors.New("boom")
				err := c.Once(&cache.Item{Ctx: ctx, Key: p + "fail", Value: &got,
					Do: func(*cache.Item) (any, error) { return nil, boom }})
				require.ErrorIs(t, err, boom)
				n, err := rc.Exists(ctx, p+"fail")
				require.NoError(t, err)
				assert.Zero(t, n)
			})

			t.Run("TTL expiry", func(t *testing.T) {
				ctx := ctxT(t)
				// go-redis/cache refuses TTLs under a second.
				require.NoError(t, c.Set(&cache.Item{Ctx: ctx, Key: p + "ttl", Value: 42, TTL: time.Second}))
				pttl, err := rc.PTTL(ctx, p+"ttl")
				require.NoError(t, err)
				assert.Greater(t, pttl, time.Duration(0))
				assert.LessOrEqual(t, pttl, time.Second)
				var n int
				require.NoError(t, c.Get(ctx, p+"ttl", &n))
				assert.Equal(t, 42, n)
				assert.Eventually(t, func() bool {
					return errors.Is(c.Get(ctx, p+"ttl", &n), cache.ErrCacheMiss)
				}, 3*time.Second, 20*time.Millisecond, "the server expires the item")
			})

			t.Run("local cache in front", func(t *testing.T) {
				ctx := ctxT(t)
				local := cache.New(&cache.Options{Redis: rdb, LocalCache: cache.NewTinyLFU(100, time.Minute)})
				require.NoError(t, local.Set(&cache.Item{Ctx: ctx, Key: p + "l", Value: "v"}))
				var s string
				require.NoError(t, local.GetSkippingLocalCache(ctx, p+"l", &s), "the server has it too")
				assert.Equal(t, "v", s)
			})
		})
	}
}
