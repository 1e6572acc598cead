package integration

import (
	"context"
	"fmt"
	"runtime"
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

// publishPipelined sends PUBLISH channel i for i in 1..total from pub, in
// pipelines of 1000, as fast as one connection goes, each one checked to
// have reached receivers subscribers.
func publishPipelined(t *testing.T, pub *respire.Client, channel string, total, receivers int, payload func(int) string) {
	t.Helper()
	ctx := ctxT(t)
	for from := 1; from <= total; from += 1000 {
		b := pub.NewBatch()
		var futs []*respire.Future[int64]
		for i := from; i <= min(from+999, total); i++ {
			futs = append(futs, b.Publish(channel, payload(i)))
		}
		require.NoError(t, b.Exec(ctx))
		for _, f := range futs {
			n, err := f.Result()
			require.NoError(t, err)
			require.EqualValues(t, receivers, n)
		}
	}
}

// TestPubSubBurst: 100,000 PUBLISH pipelined as fast as one connection
// goes reach a subscriber that only counts, with the default buffer: none
// is lost, in RESP2 and RESP3.
func TestPubSubBurst(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	const total = 100_000
	for _, proto := range protocols {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			pub := connect(t, respire.Options{Addr: srv.Addr})
			sub, err := c.Subscribe(ctx, "burst")
			require.NoError(t, err)
			defer sub.Close()

			got := make(chan int, 1)
			go func() {
				n := 0
				for n < total {
					m, err := sub.Next(ctx)
					if err != nil || m.Gap != nil {
						break
					}
					n++
				}
				got <- n
			}()
			publishPipelined(t, pub, "burst", total, 1, strconv.Itoa)
			assert.Equal(t, total, <-got, "messages received before a gap or an error")
		})
	}
}

// TestPubSubPromptBesideSlow: two subscriptions of one client to one
// channel, one prompt and one that sleeps 1ms per message with a small
// buffer. The prompt one receives all 20,000 messages in order; the slow
// one's gaps count exactly what it misses; GETs on the client go on.
func TestPubSubPromptBesideSlow(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	const total = 20_000
	ctx := ctxT(t)
	c := connect(t, respire.Options{Addr: srv.Addr})
	pub := connect(t, respire.Options{Addr: srv.Addr})
	prompt := c.NewSubscription(nil)
	defer prompt.Close()
	slow := c.NewSubscription(&respire.SubscriptionOptions{BufferBytes: 64 << 10})
	defer slow.Close()
	require.NoError(t, prompt.Subscribe(ctx, "twosubs"))
	require.NoError(t, slow.Subscribe(ctx, "twosubs"))

	var wg sync.WaitGroup
	wg.Add(1)
	var slowGot, slowDropped, slowGaps int
	go func() {
		defer wg.Done()
		last := 0
		for last < total {
			m, err := slow.Next(ctx)
			if !assert.NoError(t, err) {
				return
			}
			if m.Gap != nil {
				assert.Equal(t, respire.GapOverflow, m.Gap.Reason)
				slowGaps++
				slowDropped += int(m.Gap.Dropped)
				last += int(m.Gap.Dropped)
				continue
			}
			n, err := strconv.Atoi(m.Payload)
			if !assert.NoError(t, err) {
				return
			}
			// Exact accounting: the next message is the one after what
			// was delivered and what the gaps reported.
			if !assert.Equal(t, last+1, n, "slow subscription: message after %d delivered or dropped", last) {
				return
			}
			last = n
			slowGot++
			time.Sleep(time.Millisecond) // the slow consumer's work
		}
	}()
	publishPipelined(t, pub, "twosubs", total, 1, strconv.Itoa)
	v, err := c.Get(ctx, "twosubs:missing")
	assert.ErrorIs(t, err, respire.Nil, "GET beside the subscriptions: %q", v)
	expectSeq(t, prompt, "twosubs", 1, total)
	wg.Wait()
	t.Logf("slow subscription: %d received, %d dropped in %d gaps", slowGot, slowDropped, slowGaps)
	assert.Equal(t, total, slowGot+slowDropped)
	assert.Positive(t, slowDropped, "the slow subscription's bound was never reached")
}

// TestPubSubNeverReadingBound: a subscription that is never read holds at
// most its byte bound, however much is published, while another one of
// the same client receives everything; reading it then yields what it
// kept and one gap counting the rest.
func TestPubSubNeverReadingBound(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	const (
		bound = 1 << 20
		total = 20_000 // of 1 KiB: 20 MiB
	)
	ctx := ctxT(t)
	c := connect(t, respire.Options{Addr: srv.Addr})
	pub := connect(t, respire.Options{Addr: srv.Addr})
	idle := c.NewSubscription(&respire.SubscriptionOptions{BufferBytes: bound})
	defer idle.Close()
	reader := c.NewSubscription(&respire.SubscriptionOptions{BufferBytes: 64 << 20})
	defer reader.Close()
	require.NoError(t, idle.Subscribe(ctx, "idle"))
	require.NoError(t, reader.Subscribe(ctx, "idle"))

	pad := strings.Repeat("x", 1024)
	payload := func(i int) string { return strconv.Itoa(i) + ":" + pad }
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= total; i++ {
			m, err := reader.Next(ctx)
			if !assert.NoError(t, err) || !assert.Nil(t, m.Gap) {
				return
			}
		}
	}()
	publishPipelined(t, pub, "idle", total, 1, payload) // one connection: one subscriber for the server
	<-done                                              // every message went through the hub
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("never-read subscription holds %d bytes (bound %d); the heap grew by %d bytes while %d MiB were published",
		idle.BufferedBytes(), bound, grew, total*len(pad)>>20)
	assert.LessOrEqual(t, idle.BufferedBytes(), int64(bound))
	assert.Less(t, grew, int64(3*bound), "heap growth")

	kept := idle.Buffered() - 1 // the last is the gap
	for i := 1; i <= kept; i++ {
		m := next(t, idle)
		require.Nil(t, m.Gap, "message %d", i)
		require.Equal(t, payload(i), m.Payload)
	}
	m := next(t, idle)
	require.NotNil(t, m.Gap)
	assert.Equal(t, respire.GapOverflow, m.Gap.Reason)
	assert.EqualValues(t, total-kept, m.Gap.Dropped)
	expired, cancel := context.WithTimeout(ctx, 0)
	defer cancel()
	_, err := idle.Next(expired)
	assert.ErrorIs(t, err, context.DeadlineExceeded, "nothing after the gap")
}
