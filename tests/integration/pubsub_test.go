package integration

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publishSeq publishes the numbers from..to (inclusive) to channel, in
// order, from a server-side loop: one command, no round trip per message.
func publishSeq(t *testing.T, c *respire.Client, command, channel string, from, to int) {
	t.Helper()
	const script = "for i = tonumber(ARGV[1]), tonumber(ARGV[2]) do redis.call(ARGV[3], KEYS[1], i) end return 0"
	_, err := c.Do(ctxT(t), "EVAL", script, 1, channel, from, to, command)
	require.NoError(t, err)
}

// next reads one event, failing the test after a while.
func next(t *testing.T, s *respire.Subscription) respire.Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m, err := s.Next(ctx)
	require.NoError(t, err)
	return m
}

// expectSeq reads the numbers from..to as payloads of channel, in order.
func expectSeq(t *testing.T, s *respire.Subscription, channel string, from, to int) {
	t.Helper()
	for i := from; i <= to; i++ {
		m := next(t, s)
		if m.Gap != nil {
			t.Fatalf("gap instead of message %d: %+v", i, *m.Gap)
		}
		if m.Channel != channel || m.Payload != strconv.Itoa(i) {
			t.Fatalf("got %q on %q, want %d on %q", m.Payload, m.Channel, i, channel)
		}
	}
}

// protocols are the wire protocols the pub/sub tests run with.
var protocols = []int{2, 3}

// TestPubSubInOrder: 30,000 messages, published in bursts of 10,000,
// arrive in order, in RESP2 and RESP3. (100,000 took 15-30s of the suite
// with -race; each burst of 10,000 spans many reads of the socket already.)
func TestPubSubInOrder(t *testing.T) {
	// In parallel with the other tests that wait on servers of their own:
	// nothing here depends on how fast calls come back.
	t.Parallel()
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		const total = 30_000
		for _, proto := range protocols {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				ctx := ctxT(t)
				// Room for every message, by count and by bytes: this test
				// is about order, and under -race on a busy machine the
				// reader can fall the whole burst behind (the burst and
				// slow-consumer tests cover the default bound).
				sub := c.NewSubscription(&respire.SubscriptionOptions{Buffer: total + 1, BufferBytes: 256 << 20})
				defer sub.Close()
				require.NoError(t, sub.Subscribe(ctx, "order"))

				start := time.Now()
				done := make(chan struct{})
				go func() {
					defer close(done)
					const batch = 10_000
					for from := 1; from <= total; from += batch {
						publishSeq(t, c, "PUBLISH", "order", from, min(from+batch-1, total))
					}
				}()
				expectSeq(t, sub, "order", 1, total)
				<-done
				t.Logf("%d messages in %v", total, time.Since(start))
			})
		}
	})
}

// TestPubSubSlowConsumer: a subscriber that does not read loses what its
// buffer cannot hold and is told how much, while another subscriber of the
// same channel on the same connection loses nothing, and other commands go
// on.
func TestPubSubSlowConsumer(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range protocols {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				ctx := ctxT(t)
				const buffer, total = 10, 5000
				slow := c.NewSubscription(&respire.SubscriptionOptions{Buffer: buffer})
				defer slow.Close()
				fast := c.NewSubscription(&respire.SubscriptionOptions{Buffer: total + 1})
				defer fast.Close()
				require.NoError(t, slow.Subscribe(ctx, "slow"))
				require.NoError(t, fast.Subscribe(ctx, "slow"))

				publishSeq(t, c, "PUBLISH", "slow", 1, total)
				require.NoError(t, c.Set(ctx, "slow:k", "v", nil))
				expectSeq(t, fast, "slow", 1, total)

				// The slow one kept the first messages, then a gap with
				// the exact count, then what comes next.
				expectSeq(t, slow, "slow", 1, buffer)
				m := next(t, slow)
				require.NotNil(t, m.Gap, "want a gap, got %+v", m)
				assert.Equal(t, respire.GapOverflow, m.Gap.Reason)
				assert.Equal(t, int64(total-buffer), m.Gap.Dropped)
				assert.False(t, m.Gap.Until.Before(m.Gap.Since))
				assert.Zero(t, slow.Buffered())

				publishSeq(t, c, "PUBLISH", "slow", total+1, total+1)
				expectSeq(t, slow, "slow", total+1, total+1)
				expectSeq(t, fast, "slow", total+1, total+1)
			})
		}
	})
}

// TestPubSubRestart: a server restart while messages flow gives each
// subscription a disconnect gap, after which delivery resumes by itself,
// for channels, patterns and sharded channels.
func TestPubSubRestart(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range protocols {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto,
					MaxRetryBackoff: 100 * time.Millisecond})
				ctx := ctxT(t)
				chSub, err := c.Subscribe(ctx, "rs:ch")
				require.NoError(t, err)
				defer chSub.Close()
				patSub, err := c.PSubscribe(ctx, "rs:pat:*")
				require.NoError(t, err)
				defer patSub.Close()
				shSub, err := c.SSubscribe(ctx, "rs:{sh}")
				require.NoError(t, err)
				defer shSub.Close()

				// A publisher keeps going through the restart; its
				// failures while the server is down do not matter.
				pubCtx, stop := context.WithCancel(ctx)
				var wg sync.WaitGroup
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 1; pubCtx.Err() == nil; i++ {
						p := strconv.Itoa(i)
						c.Do(pubCtx, "PUBLISH", "rs:ch", p)
						c.Do(pubCtx, "PUBLISH", "rs:pat:x", p)
						c.Do(pubCtx, "SPUBLISH", "rs:{sh}", p)
					}
				}()
				defer func() { stop(); wg.Wait() }()

				// Before: messages flow.
				subs := []*respire.Subscription{chSub, patSub, shSub}
				last := make([]int, len(subs))
				for k, s := range subs {
					last[k] = readIncreasing(t, s, 0, 3)
				}
				srv.Restart(t)
				for k, s := range subs {
					// Messages sent before the restart may still be
					// buffered; then the gap; then new messages.
					var gap *respire.Gap
					for gap == nil {
						m := next(t, s)
						if m.Gap != nil {
							gap = m.Gap
							break
						}
						n, err := strconv.Atoi(m.Payload)
						require.NoError(t, err)
						require.Greater(t, n, last[k])
						last[k] = n
					}
					assert.Equal(t, respire.GapDisconnect, gap.Reason, "%+v", *gap)
					assert.Error(t, gap.Err)
					assert.False(t, gap.Until.Before(gap.Since))
					// The restarted server's publisher counts from where
					// it is; delivery resumes.
					readIncreasing(t, s, 0, 3)
				}
				// Each message has the kind of its subscription.
				m := next(t, patSub)
				assert.Equal(t, "rs:pat:*", m.Pattern)
				assert.Equal(t, "rs:pat:x", m.Channel)
				m = next(t, shSub)
				assert.True(t, m.Sharded)
			})
		}
	})
}

// readIncreasing reads n messages whose numbers increase from above after,
// and returns the last.
func readIncreasing(t *testing.T, s *respire.Subscription, after, n int) int {
	t.Helper()
	for range n {
		m := next(t, s)
		require.Nil(t, m.Gap, "unexpected gap %+v", m.Gap)
		v, err := strconv.Atoi(m.Payload)
		require.NoError(t, err)
		require.Greater(t, v, after)
		after = v
	}
	return after
}

// TestPubSubManyChannels: 1,000 channels with 10 subscribers each, all on
// one connection; the server sees one subscriber per channel, and closing
// the subscriptions releases everything.
func TestPubSubManyChannels(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range protocols {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				ctx := ctxT(t)
				require.NoError(t, c.Set(ctx, "many:k", "v", nil))
				clients := connectedClients(t, srv)
				const channels, subscribers = 1000, 10
				names := make([]string, channels)
				for i := range names {
					names[i] = fmt.Sprintf("many:%d", i)
				}
				subs := make([]*respire.Subscription, subscribers)
				var wg sync.WaitGroup
				for k := range subs {
					wg.Add(1)
					go func() {
						defer wg.Done()
						s, err := c.Subscribe(ctx, names...)
						assert.NoError(t, err)
						subs[k] = s
					}()
				}
				wg.Wait()
				for _, s := range subs {
					require.NotNil(t, s)
				}

				// PUBLISH reports one receiver: the hub's connection.
				r, err := c.Do(ctx, "PUBLISH", names[0], "first")
				require.NoError(t, err)
				n, _ := r.Int64()
				assert.Equal(t, int64(1), n)
				for i := 1; i < channels; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := c.Do(ctx, "PUBLISH", names[i], strconv.Itoa(i))
						assert.NoError(t, err)
					}()
				}
				wg.Wait()
				for _, s := range subs {
					seen := make(map[string]bool, channels)
					for range channels {
						m := next(t, s)
						require.Nil(t, m.Gap)
						require.False(t, seen[m.Channel], "twice on %s", m.Channel)
						seen[m.Channel] = true
					}
				}

				// Half the subscribers leave: the others still receive.
				for _, s := range subs[:subscribers/2] {
					require.NoError(t, s.Close())
				}
				_, err = c.Do(ctx, "PUBLISH", names[7], "after")
				require.NoError(t, err)
				for _, s := range subs[subscribers/2:] {
					m := next(t, s)
					assert.Equal(t, "after", m.Payload)
				}
				_, err = subs[0].Next(ctx)
				require.ErrorIs(t, err, respire.ErrSubscriptionClosed)

				// Unsubscribing a few channels from the rest stops them.
				for _, s := range subs[subscribers/2:] {
					require.NoError(t, s.Unsubscribe(names[:500]...))
				}
				require.Eventually(t, func() bool { return numSub(t, c, names[0]) == 0 }, 10*time.Second, time.Millisecond)
				assert.Equal(t, int64(1), numSub(t, c, names[999]))
				for _, s := range subs[subscribers/2:] {
					require.NoError(t, s.Close())
				}
				require.Eventually(t, func() bool {
					r, err := c.Do(ctx, "PUBSUB", "CHANNELS", "many:*")
					require.NoError(t, err)
					l, _ := r.Slice()
					return len(l) == 0
				}, 10*time.Second, time.Millisecond, "every channel is unsubscribed on the server")
				// With nothing subscribed, the hub's connection is closed.
				require.Eventually(t, func() bool { return connectedClients(t, srv) == clients },
					10*time.Second, time.Millisecond)
			})
		}
	})
}

// connectedClients reads connected_clients from INFO, counting the
// harness's own connection.
func connectedClients(t *testing.T, srv *harness.Server) int {
	t.Helper()
	v, err := srv.Do(ctxT(t), "INFO", "clients")
	require.NoError(t, err)
	for _, line := range strings.Split(v.(string), "\n") {
		if n, ok := strings.CutPrefix(strings.TrimSpace(line), "connected_clients:"); ok {
			k, err := strconv.Atoi(n)
			require.NoError(t, err)
			return k
		}
	}
	t.Fatal("INFO clients has no connected_clients")
	return 0
}

func numSub(t *testing.T, c *respire.Client, channel string) int64 {
	r, err := c.Do(ctxT(t), "PUBSUB", "NUMSUB", channel)
	require.NoError(t, err)
	l, err := r.Slice()
	require.NoError(t, err)
	require.Len(t, l, 2)
	n, _ := l[1].Int64()
	return n
}

// TestPubSubPatternAndSharded: pattern messages carry their pattern,
// sharded channels work on a standalone server, one subscription may mix
// kinds, and unsubscribing releases the server's side.
func TestPubSubPatternAndSharded(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range protocols {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				ctx := ctxT(t)
				sub, err := c.PSubscribe(ctx, "pat:*", "other:?")
				require.NoError(t, err)
				defer sub.Close()
				require.NoError(t, sub.SSubscribe(ctx, "shard:{a}", "shard:{b}"))
				require.NoError(t, sub.Subscribe(ctx, "plain"))

				_, err = c.Do(ctx, "PUBLISH", "pat:one", "p1")
				require.NoError(t, err)
				_, err = c.Do(ctx, "SPUBLISH", "shard:{b}", "s1")
				require.NoError(t, err)
				_, err = c.Do(ctx, "PUBLISH", "plain", "c1")
				require.NoError(t, err)
				_, err = c.Do(ctx, "PUBLISH", "other:x", "p2")
				require.NoError(t, err)

				want := []respire.Message{
					{Channel: "pat:one", Pattern: "pat:*", Payload: "p1"},
					{Channel: "shard:{b}", Payload: "s1", Sharded: true},
					{Channel: "plain", Payload: "c1"},
					{Channel: "other:x", Pattern: "other:?", Payload: "p2"},
				}
				msgs := sub.Messages()
				for _, w := range want {
					select {
					case m := <-msgs:
						assert.Equal(t, w, m)
					case <-ctx.Done():
						t.Fatal(ctx.Err())
					}
				}

				require.NoError(t, sub.PUnsubscribe("pat:*"))
				require.NoError(t, sub.SUnsubscribe())
				require.Eventually(t, func() bool {
					r, err := c.Do(ctx, "PUBSUB", "NUMPAT")
					require.NoError(t, err)
					n, _ := r.Int64()
					r, err = c.Do(ctx, "PUBSUB", "SHARDCHANNELS")
					require.NoError(t, err)
					l, _ := r.Slice()
					return n == 1 && len(l) == 0
				}, 10*time.Second, time.Millisecond)
				_, err = c.Do(ctx, "PUBLISH", "pat:two", "gone")
				require.NoError(t, err)
				_, err = c.Do(ctx, "PUBLISH", "other:y", "p3")
				require.NoError(t, err)
				m := <-msgs
				assert.Equal(t, "p3", m.Payload, "nothing from the dropped pattern")

				require.NoError(t, sub.Close())
				_, open := <-msgs
				assert.False(t, open, "Messages is closed with the subscription")
			})
		}
	})
}

// TestPubSubClientClose: closing the client ends every subscription.
func TestPubSubClientClose(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c, err := respire.Connect(ctxT(t), respire.Options{Addr: srv.Addr})
	require.NoError(t, err)
	sub, err := c.Subscribe(ctxT(t), "cc")
	require.NoError(t, err)
	errs := make(chan error, 1)
	go func() {
		_, err := sub.Next(context.Background())
		errs <- err
	}()
	require.NoError(t, c.Close())
	require.ErrorIs(t, <-errs, respire.ErrClosed)
	_, err = c.Subscribe(ctxT(t), "cc")
	require.ErrorIs(t, err, respire.ErrClosed)
}

// TestPubSubTLS: the hub's connection dials like the client, TLS included.
func TestPubSubTLS(t *testing.T) {
	srv := harness.Start(t, harness.Config{TLS: true})
	c := connect(t, respire.Options{Addr: srv.Addr, TLSConfig: srv.TLSConfig})
	ctx := ctxT(t)
	sub, err := c.Subscribe(ctx, "tls")
	require.NoError(t, err)
	defer sub.Close()
	publishSeq(t, c, "PUBLISH", "tls", 1, 1000)
	expectSeq(t, sub, "tls", 1, 1000)
}
