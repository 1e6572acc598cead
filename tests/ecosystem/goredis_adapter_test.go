package ecosystem

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/goredis"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The adapter's replies, errors and nulls, as go-redis code reads them,
// on RESP2 and RESP3.
func TestGoRedisAdapterReplies(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := ctxT(t)
			rdb, _ := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			p := fmt.Sprintf("adapter%d:", proto)

			t.Run("strings and nulls", func(t *testing.T) {
				_, err := rdb.Get(ctx, p+"missing").Result()
				assert.True(t, err == redis.Nil, "GET of a missing key: %v, want redis.Nil itself", err)
				require.NoError(t, rdb.Set(ctx, p+"s", "v1", 0).Err())
				v, err := rdb.Get(ctx, p+"s").Result()
				require.NoError(t, err)
				assert.Equal(t, "v1", v)

				ok, err := rdb.SetNX(ctx, p+"s", "v2", time.Minute).Result()
				require.NoError(t, err)
				assert.False(t, ok, "SET NX on an existing key")
				ok, err = rdb.SetXX(ctx, p+"absent", "v", time.Minute).Result()
				require.NoError(t, err)
				assert.False(t, ok, "SET XX on a missing key")
				ok, err = rdb.SetNX(ctx, p+"new", "v", 1500*time.Millisecond).Result()
				require.NoError(t, err)
				assert.True(t, ok)

				pttl, err := rdb.PTTL(ctx, p+"new").Result()
				require.NoError(t, err)
				assert.Greater(t, pttl, time.Second, "sub-second TTL sent as PX")
				assert.LessOrEqual(t, pttl, 1500*time.Millisecond)
				ttl, err := rdb.TTL(ctx, p+"s").Result()
				require.NoError(t, err)
				assert.Equal(t, time.Duration(-1), ttl, "no expiry")
				ttl, err = rdb.TTL(ctx, p+"missing").Result()
				require.NoError(t, err)
				assert.Equal(t, time.Duration(-2), ttl, "no key")

				n, err := rdb.Del(ctx, p+"s", p+"new", p+"missing").Result()
				require.NoError(t, err)
				assert.Equal(t, int64(2), n)
			})

			t.Run("typed replies", func(t *testing.T) {
				require.NoError(t, rdb.HSet(ctx, p+"h", "a", "1", "b", "2").Err())
				m, err := rdb.HGetAll(ctx, p+"h").Result()
				require.NoError(t, err)
				assert.Equal(t, map[string]string{"a": "1", "b": "2"}, m)
				vals, err := rdb.HMGet(ctx, p+"h", "a", "nope").Result()
				require.NoError(t, err)
				assert.Equal(t, []any{"1", nil}, vals)

				require.NoError(t, rdb.ZAdd(ctx, p+"z", redis.Z{Score: 1.5, Member: "x"}, redis.Z{Score: 2, Member: "y"}).Err())
				zs, err := rdb.ZRangeWithScores(ctx, p+"z", 0, -1).Result()
				require.NoError(t, err)
				assert.Equal(t, []redis.Z{{Score: 1.5, Member: "x"}, {Score: 2, Member: "y"}}, zs)
				score, err := rdb.ZScore(ctx, p+"z", "x").Result()
				require.NoError(t, err)
				assert.Equal(t, 1.5, score)

				n, err := rdb.IncrBy(ctx, p+"n", 41).Result()
				require.NoError(t, err)
				assert.Equal(t, int64(41), n)
				f, err := rdb.IncrByFloat(ctx, p+"f", 0.25).Result()
				require.NoError(t, err)
				assert.Equal(t, 0.25, f)

				require.NoError(t, rdb.RPush(ctx, p+"l", "a", "b", "c").Err())
				l, err := rdb.LRange(ctx, p+"l", 0, -1).Result()
				require.NoError(t, err)
				assert.Equal(t, []string{"a", "b", "c"}, l)

				keys, cursor, err := rdb.Scan(ctx, 0, p+"*", 1000).Result()
				require.NoError(t, err)
				assert.Subset(t, keys, []string{p + "h", p + "z", p + "n", p + "l"})
				_ = cursor

				now, err := rdb.Time(ctx).Result()
				require.NoError(t, err)
				assert.WithinDuration(t, time.Now(), now, time.Minute)

				ex, err := rdb.ScriptExists(ctx, "0000000000000000000000000000000000000000").Result()
				require.NoError(t, err)
				assert.Equal(t, []bool{false}, ex)
			})

			t.Run("generic Do", func(t *testing.T) {
				v, err := rdb.Do(ctx, "hgetall", p+"h").Result()
				require.NoError(t, err)
				if proto == 3 {
					assert.Equal(t, map[any]any{"a": "1", "b": "2"}, v)
				} else {
					assert.ElementsMatch(t, []any{"a", "1", "b", "2"}, v)
				}
				_, err = rdb.Do(ctx, "get", p+"missing").Result()
				assert.True(t, err == redis.Nil)
				v, err = rdb.Do(ctx, "set", p+"px", "v", "px", 60000).Result()
				require.NoError(t, err)
				assert.Equal(t, "OK", v)
			})

			t.Run("error replies", func(t *testing.T) {
				err := rdb.LPush(ctx, p+"h", "x").Err()
				require.Error(t, err)
				var re redis.Error
				require.True(t, errors.As(err, &re), "%T is a redis.Error", err)
				assert.True(t, redis.HasErrorPrefix(err, "WRONGTYPE"), err.Error())
				var e *respire.Error
				require.True(t, errors.As(err, &e))
				assert.Equal(t, "WRONGTYPE", e.Prefix)
				err = rdb.Get(ctx, p+"h").Err() // GET has a path of its own (Respire's typed Get)
				require.True(t, errors.As(err, &re), "GET of a hash: %T is a redis.Error", err)
				assert.True(t, redis.HasErrorPrefix(err, "WRONGTYPE"), err.Error())

				err = rdb.EvalSha(ctx, "ffffffffffffffffffffffffffffffffffffffff", nil).Err()
				assert.True(t, redis.HasErrorPrefix(err, "NOSCRIPT"), "%v", err)
			})

			t.Run("scripts", func(t *testing.T) {
				s := redis.NewScript(`return redis.call("INCRBY", KEYS[1], ARGV[1])`)
				require.NoError(t, rdb.ScriptFlush(ctx).Err())
				n, err := s.Run(ctx, rdb, []string{p + "sc"}, 5).Int64()
				require.NoError(t, err, "EVALSHA falls back to EVAL on NOSCRIPT")
				assert.Equal(t, int64(5), n)
				loaded, err := s.Exists(ctx, rdb).Result()
				require.NoError(t, err)
				assert.Equal(t, []bool{true}, loaded)
				n, err = s.EvalSha(ctx, rdb, []string{p + "sc"}, 2).Int64()
				require.NoError(t, err)
				assert.Equal(t, int64(7), n)

				ro := redis.NewScript(`return redis.call("GET", KEYS[1])`)
				v, err := ro.RunRO(ctx, rdb, []string{p + "sc"}).Text()
				require.NoError(t, err)
				assert.Equal(t, "7", v)
				_, err = ro.RunRO(ctx, rdb, []string{p + "nothing"}).Result()
				assert.True(t, err == redis.Nil, "a script's nil is redis.Nil: %v", err)

				v2, err := rdb.Eval(ctx, `return {1, "two", false, {err="boom"}}`, nil).Result()
				require.NoError(t, err)
				arr := v2.([]any)
				require.Len(t, arr, 4)
				assert.Equal(t, []any{int64(1), "two", nil}, arr[:3])
				var re redis.Error
				require.ErrorAs(t, arr[3].(error), &re)
				assert.Equal(t, "boom", re.Error())
			})

			t.Run("pipelines", func(t *testing.T) {
				var get, missing *redis.StringCmd
				var incr *redis.IntCmd
				cmds, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
					pipe.Set(ctx, p+"pa", "1", 0)
					incr = pipe.Incr(ctx, p+"pa")
					get = pipe.Get(ctx, p+"pa")
					missing = pipe.Get(ctx, p+"pmissing")
					return nil
				})
				assert.True(t, err == redis.Nil, "Exec returns the first error, as go-redis does: %v", err)
				require.Len(t, cmds, 4)
				assert.Equal(t, int64(2), incr.Val())
				assert.Equal(t, "2", get.Val())
				assert.True(t, missing.Err() == redis.Nil)

				var a, b *redis.IntCmd
				cmds, err = rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					a = pipe.Incr(ctx, p+"tx")
					b = pipe.Incr(ctx, p+"tx")
					return nil
				})
				require.NoError(t, err)
				require.Len(t, cmds, 2)
				assert.Equal(t, int64(1), a.Val())
				assert.Equal(t, int64(2), b.Val())

				// Reply types go-redis reads itself (replayed) in a
				// pipeline and a transaction, beside the ones the adapter
				// fills.
				var xr *redis.XMessageSliceCmd
				var xi *redis.XInfoStreamCmd
				_, err = rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					pipe.XAdd(ctx, &redis.XAddArgs{Stream: p + "stream", ID: "1-1", Values: []any{"a", "1"}})
					xr = pipe.XRange(ctx, p+"stream", "-", "+")
					pipe.Incr(ctx, p+"tx")
					return nil
				})
				require.NoError(t, err)
				assert.Equal(t, []redis.XMessage{{ID: "1-1", Values: map[string]any{"a": "1"}}}, xr.Val())
				cmds, err = rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
					xi = pipe.XInfoStream(ctx, p+"stream")
					pipe.XInfoStream(ctx, p+"nostream")
					pipe.Incr(ctx, p+"tx")
					return nil
				})
				require.EqualError(t, err, "ERR no such key")
				assert.Equal(t, int64(1), xi.Val().Length)
				assert.Equal(t, int64(4), cmds[2].(*redis.IntCmd).Val())
			})

			t.Run("refused", func(t *testing.T) {
				err := rdb.Do(ctx, "select", 1).Err()
				var ae *respire.ArgError
				require.ErrorAs(t, err, &ae, "Respire refuses what would change the shared connection")

				err = rdb.Set(ctx, p+"bad", struct{}{}, 0).Err()
				require.ErrorIs(t, err, goredis.ErrNotSupported)
			})

			t.Run("context", func(t *testing.T) {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				err := rdb.Get(cctx, p+"s").Err()
				require.ErrorIs(t, err, context.Canceled)
			})
		})
	}
}

// countHook counts what go-redis hands its hooks.
type countHook struct{ cmds, pipes atomic.Int64 }

func (h *countHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.cmds.Add(1)
		return next(ctx, cmd)
	}
}
func (h *countHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.pipes.Add(1)
		return next(ctx, cmds)
	}
}

func TestGoRedisAdapterHooks(t *testing.T) {
	ctx := ctxT(t)
	rdb, _ := adapter(t, respire.Options{Addr: standalone(t)})
	h := &countHook{}
	rdb.AddHook(h)
	require.NoError(t, rdb.Set(ctx, "hook:a", "1", 0).Err())
	require.True(t, rdb.Get(ctx, "hook:missing").Err() == redis.Nil)
	_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "hook:a"); return nil })
	require.NoError(t, err)
	_, err = rdb.TxPipelined(ctx, func(p redis.Pipeliner) error { p.Get(ctx, "hook:a"); return nil })
	require.NoError(t, err)
	assert.Equal(t, int64(2), h.cmds.Load())
	assert.Equal(t, int64(2), h.pipes.Load())
}

// On a cluster: a pipeline across nodes is split and reassembled in order;
// a transaction on one slot runs; scripts run on their keys' owner.
func TestGoRedisAdapterCluster(t *testing.T) {
	ctx := ctxT(t)
	rdb, _ := onCluster(t)
	p := unique("cadapter")
	cmds, err := rdb.Pipelined(ctx, func(pipe redis.Pipeliner) error {
		for i := 0; i < 20; i++ {
			pipe.Set(ctx, fmt.Sprintf("%s%d", p, i), i, time.Minute)
			pipe.Get(ctx, fmt.Sprintf("%s%d", p, i))
		}
		return nil
	})
	require.NoError(t, err)
	for i := 0; i < 20; i++ {
		assert.Equal(t, fmt.Sprint(i), cmds[2*i+1].(*redis.StringCmd).Val())
	}

	tag := "{" + p + "}"
	var a, b *redis.IntCmd
	_, err = rdb.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
		a = pipe.Incr(ctx, tag+"x")
		b = pipe.IncrBy(ctx, tag+"y", 5)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, int64(1), a.Val())
	assert.Equal(t, int64(5), b.Val())

	sum := redis.NewScript(`return redis.call("GET", KEYS[1]) + redis.call("GET", KEYS[2])`)
	n, err := sum.Run(ctx, rdb, []string{tag + "x", tag + "y"}).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(6), n)

	// SCAN would answer for one node: refused, never a part of the keys;
	// KEYS covers every primary.
	for i := 0; i < 8; i++ {
		require.NoError(t, rdb.Set(ctx, fmt.Sprintf("%sscan%d", p, i), i, time.Minute).Err())
	}
	_, _, err = rdb.Scan(ctx, 0, p+"scan*", 100).Result()
	require.ErrorIs(t, err, goredis.ErrNotSupported)
	assert.Contains(t, err.Error(), "every primary")
	keys, err := rdb.Keys(ctx, p+"scan*").Result()
	require.NoError(t, err)
	assert.Len(t, keys, 8)

	// Watch on the owner of its keys, and sharded pub/sub on the owner of
	// the channel.
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		n, err := tx.Get(ctx, tag+"x").Int()
		if err != nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, tag+"x", n+10, 0)
			return nil
		})
		return err
	}, tag+"x")
	require.NoError(t, err)
	assert.Equal(t, "11", rdb.Get(ctx, tag+"x").Val())
	ssub := rdb.SSubscribe(ctx, p+"news")
	defer ssub.Close()
	_, err = ssub.Receive(ctx)
	require.NoError(t, err)
	require.NoError(t, rdb.SPublish(ctx, p+"news", "hello").Err())
	msg, err := ssub.ReceiveMessage(ctx)
	require.NoError(t, err)
	assert.Equal(t, "hello", msg.Payload)
}
