package ecosystem

import (
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// go-redis's PubSub through the adapter: confirmations, messages of
// channels, patterns and sharded channels, Channel, unsubscribing, and
// messages again after the server dropped the subscriber connection.
func TestGoRedisAdapterPubSub(t *testing.T) {
	addr := standalone(t)
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := ctxT(t)
			rdb, _ := adapter(t, respire.Options{Addr: addr, Protocol: proto})
			p := fmt.Sprintf("ps%d:", proto)

			sub := rdb.Subscribe(ctx, p+"a", p+"b")
			defer sub.Close()
			for i, ch := range []string{p + "a", p + "b"} {
				m, err := sub.Receive(ctx)
				require.NoError(t, err)
				assert.Equal(t, &redis.Subscription{Kind: "subscribe", Channel: ch, Count: i + 1}, m)
			}
			require.NoError(t, sub.PSubscribe(ctx, p+"pat:*"))
			m, err := sub.Receive(ctx)
			require.NoError(t, err)
			assert.Equal(t, &redis.Subscription{Kind: "psubscribe", Channel: p + "pat:*", Count: 3}, m)
			require.NoError(t, sub.Ping(ctx, "hi"))
			m, err = sub.Receive(ctx)
			require.NoError(t, err)
			if proto == 2 {
				assert.Equal(t, &redis.Pong{Payload: "hi"}, m)
			}

			n, err := rdb.Publish(ctx, p+"a", "one").Result()
			require.NoError(t, err)
			assert.Equal(t, int64(1), n)
			msg, err := sub.ReceiveMessage(ctx)
			require.NoError(t, err)
			assert.Equal(t, p+"a", msg.Channel)
			assert.Equal(t, "one", msg.Payload)
			require.NoError(t, rdb.Publish(ctx, p+"pat:x", "two").Err())
			msg, err = sub.ReceiveMessage(ctx)
			require.NoError(t, err)
			assert.Equal(t, p+"pat:*", msg.Pattern)
			assert.Equal(t, p+"pat:x", msg.Channel)
			assert.Equal(t, "two", msg.Payload)

			require.NoError(t, sub.Unsubscribe(ctx, p+"a"))
			m, err = sub.Receive(ctx)
			require.NoError(t, err)
			assert.Equal(t, &redis.Subscription{Kind: "unsubscribe", Channel: p + "a", Count: 2}, m)
			require.NoError(t, rdb.Publish(ctx, p+"a", "gone").Err())

			// Channel, and the server dropping the subscriber: Respire's hub
			// subscribes again, and go-redis's PubSub never notices.
			msgs := sub.Channel()
			require.NoError(t, rdb.Publish(ctx, p+"b", "three").Err())
			got := <-msgs
			assert.Equal(t, "three", got.Payload, "nothing of an unsubscribed channel")
			killed, err := rdb.ClientKillByFilter(ctx, "TYPE", "pubsub").Result()
			require.NoError(t, err)
			require.Positive(t, killed)
			for {
				// Publish until the resubscribed connection receives.
				n, err := rdb.Publish(ctx, p+"b", "four").Result()
				require.NoError(t, err)
				if n > 0 {
					break
				}
				select {
				case <-ctx.Done():
					t.Fatal("no subscriber came back")
				default:
				}
			}
			got = <-msgs
			assert.Equal(t, "four", got.Payload)
			require.NoError(t, sub.Close())

			ssub := rdb.SSubscribe(ctx, p+"s")
			defer ssub.Close()
			m, err = ssub.Receive(ctx)
			require.NoError(t, err)
			assert.Equal(t, &redis.Subscription{Kind: "ssubscribe", Channel: p + "s", Count: 1}, m)
			require.NoError(t, rdb.SPublish(ctx, p+"s", "five").Err())
			msg, err = ssub.ReceiveMessage(ctx)
			require.NoError(t, err)
			assert.Equal(t, "five", msg.Payload)
		})
	}
}

// go-redis's Watch through the adapter: TxPipelined commits, a watched key
// changed by another client fails it with redis.TxFailedErr, and the
// go-redis retry loop counts exactly under contention.
func TestGoRedisAdapterWatch(t *testing.T) {
	ctx := ctxT(t)
	rdb, rc := adapter(t, respire.Options{Addr: standalone(t)})

	err := rdb.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.Get(ctx, "w:k").Int()
		if err != nil && err != redis.Nil {
			return err
		}
		_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			pipe.Set(ctx, "w:k", v+1, 0)
			return nil
		})
		return err
	}, "w:k")
	require.NoError(t, err)

	var setCmd *redis.StatusCmd
	err = rdb.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, tx.Watch(ctx, "w:other").Err())
		require.NoError(t, rc.Set(ctx, "w:other", "changed", nil), "another client writes")
		_, err := tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
			setCmd = pipe.Set(ctx, "w:k", "lost", 0)
			return nil
		})
		assert.True(t, err == redis.TxFailedErr, "TxPipelined: %v", err)
		return err
	}, "w:k")
	assert.True(t, err == redis.TxFailedErr, "Watch: %v", err)
	assert.True(t, setCmd.Err() == redis.TxFailedErr)
	v, err := rdb.Get(ctx, "w:k").Result()
	require.NoError(t, err)
	assert.Equal(t, "1", v, "nothing of the failed transaction ran")

	// go-redis's documented optimistic-locking loop.
	incr := func() error {
		for {
			err := rdb.Watch(ctx, func(tx *redis.Tx) error {
				n, err := tx.Get(ctx, "w:n").Int()
				if err != nil && err != redis.Nil {
					return err
				}
				_, err = tx.TxPipelined(ctx, func(pipe redis.Pipeliner) error {
					pipe.Set(ctx, "w:n", strconv.Itoa(n+1), 0)
					return nil
				})
				return err
			}, "w:n")
			if !errors.Is(err, redis.TxFailedErr) {
				return err
			}
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := incr(); err != nil {
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
	n, err := rdb.Get(ctx, "w:n").Int()
	require.NoError(t, err)
	assert.Equal(t, 80, n)
}

// go-redis's Conn through the adapter: its commands share one connection
// of their own, whose state (database, name) is its own, pipelines
// included; PoolStats and Options describe the Respire client.
func TestGoRedisAdapterConn(t *testing.T) {
	ctx := ctxT(t)
	srv := standalone(t)
	rdb, rc := adapter(t, respire.Options{Addr: srv, ClientName: "adapted"})

	opts := rdb.Options()
	assert.Equal(t, srv, opts.Addr)
	assert.Equal(t, "adapted", opts.ClientName)
	require.NoError(t, rdb.Ping(ctx).Err())
	st := rdb.PoolStats()
	assert.Positive(t, st.TotalConns)
	assert.Positive(t, st.Hits)
	assert.LessOrEqual(t, st.IdleConns, st.TotalConns)
	before := rc.PoolStats().BlockingBusy

	conn := rdb.Conn()
	require.NoError(t, conn.Select(ctx, 1).Err())
	require.NoError(t, conn.ClientSetName(ctx, "mine").Err())
	require.NoError(t, conn.Set(ctx, "conn:k", "db1", 0).Err())
	name, err := conn.ClientGetName(ctx).Result()
	require.NoError(t, err)
	assert.Equal(t, "mine", name)
	cmds, err := conn.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Get(ctx, "conn:k")
		p.XAdd(ctx, &redis.XAddArgs{Stream: "conn:s", ID: "1-1", Values: []any{"a", "b"}})
		p.XRange(ctx, "conn:s", "-", "+")
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, "db1", cmds[0].(*redis.StringCmd).Val())
	assert.Equal(t, []redis.XMessage{{ID: "1-1", Values: map[string]any{"a": "b"}}}, cmds[2].(*redis.XMessageSliceCmd).Val())
	assert.True(t, conn.Get(ctx, "conn:missing").Err() == redis.Nil)
	assert.True(t, rdb.Get(ctx, "conn:k").Err() == redis.Nil, "the client's own database is 0")
	assert.Equal(t, before+1, rc.PoolStats().BlockingBusy, "the Conn holds a connection")
	require.NoError(t, conn.Close())
	assert.Equal(t, before, rc.PoolStats().BlockingBusy, "and gives it back on Close")
}
