package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/hist"
	"github.com/respire-go/respire/respire"
)

// Pub/sub under pressure (issue 14): a burst that a counting subscriber
// must absorb, and a slow subscription beside a prompt one on one client.
// Each iteration runs the whole scenario once; run with -benchtime 1x and
// a -count of a few rounds. The figures are custom metrics: ns/op is the
// length of the scenario and means little.

// burstN is the number of PUBLISH of BenchmarkPubSubBurst, sent in
// pipelines of burstPipe on one connection.
const (
	burstN    = 100_000
	burstPipe = 1000
)

// slowN is the number of messages of BenchmarkPubSubSlowConsumer; the slow
// subscription sleeps slowDelay per message.
const (
	slowN     = 20_000
	slowDelay = time.Millisecond
)

// counter counts what one subscription receives: messages, the drops its
// gap markers report, and when the last message arrived.
type counter struct {
	got, dropped, gaps atomic.Int64
	last               atomic.Int64 // UnixNano of the last message
	want               int64
	done               chan struct{}
	once               sync.Once
	delay              time.Duration
}

func newCounter(want int64, delay time.Duration) *counter {
	return &counter{want: want, done: make(chan struct{}), delay: delay}
}

func (c *counter) onMsg(string) {
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	c.last.Store(time.Now().UnixNano())
	c.got.Add(1)
	c.check()
}

func (c *counter) onGap(dropped int64) {
	c.gaps.Add(1)
	c.dropped.Add(dropped)
	c.check()
}

func (c *counter) check() {
	if c.got.Load()+c.dropped.Load() >= c.want {
		c.once.Do(func() { close(c.done) })
	}
}

// await waits until every message was received or reported dropped, or
// until quiet passes without progress.
func (c *counter) await(quiet time.Duration) {
	seen := int64(-1)
	for {
		select {
		case <-c.done:
			return
		case <-time.After(quiet):
			n := c.got.Load() + c.dropped.Load()
			if n == seen {
				return
			}
			seen = n
		}
	}
}

// publishAll sends n messages to ch in pipelines of pipe, as fast as one
// connection goes, and returns when the last reply arrived.
func publishAll(ctx context.Context, pub psClient, ch string, n, pipe int, receivers int64) error {
	msgs := make([]string, 0, pipe)
	for sent := 0; sent < n; {
		msgs = msgs[:0]
		for i := 0; i < pipe && sent < n; i++ {
			msgs = append(msgs, fmt.Sprintf("m:%d", sent))
			sent++
		}
		if err := pub.publishPipe(ctx, ch, msgs, receivers); err != nil {
			return err
		}
	}
	return nil
}

// BenchmarkPubSubBurst: burstN PUBLISH pipelined as fast as one connection
// goes to one subscriber client that only counts. "lost" is what never
// arrived (for Respire, the sum its gap markers report).
func BenchmarkPubSubBurst(b *testing.B) {
	for _, name := range pubsubClients {
		b.Run("client="+name, func(b *testing.B) {
			ctx := context.Background()
			addr := benchServer(b).Addr
			var lost, gaps float64
			for range b.N {
				sc, err := newPSClient(ctx, name, addr)
				if err != nil {
					b.Fatal(err)
				}
				pub, err := newPSClient(ctx, name, addr)
				if err != nil {
					b.Fatal(err)
				}
				ch := newChannel("burst", name)
				cnt := newCounter(burstN, 0)
				stop, err := sc.subscribe(ctx, ch, cnt.onMsg, cnt.onGap)
				if err != nil {
					b.Fatal(err)
				}
				if err := waitSubscribersAt(ctx, addr, ch, 1); err != nil {
					b.Fatal(err)
				}
				if err := publishAll(ctx, pub, ch, burstN, burstPipe, 1); err != nil {
					b.Fatal(err)
				}
				cnt.await(2 * time.Second)
				lost += float64(burstN - cnt.got.Load())
				gaps += float64(cnt.gaps.Load())
				stop()
				sc.close()
				pub.close()
			}
			b.ReportMetric(lost/float64(b.N), "lost")
			b.ReportMetric(gaps/float64(b.N), "gaps")
		})
	}
}

// BenchmarkPubSubSlowConsumer: two subscriptions to one channel on one
// client, one prompt and one sleeping slowDelay per message; slowN
// messages pipelined by another client. While they are delivered, one
// goroutine sends GETs on the subscribers' client. Metrics:
// prompt-lost, prompt-late-ms (its last delivery after the publisher's
// last reply), slow-got, slow-dropped (reported by gaps; slow-got plus
// slow-dropped is slowN when the losses are reported exactly),
// slow-late-s, get-idle-p99-µs (before publishing) and get-busy-p99-µs
// (2000 GETs right after the publisher's end, while the slow one drains).
func BenchmarkPubSubSlowConsumer(b *testing.B) {
	for _, name := range pubsubClients {
		b.Run("client="+name, func(b *testing.B) {
			ctx := context.Background()
			addr := benchServer(b).Addr
			var m slowMetrics
			for range b.N {
				m.add(slowRound(b, ctx, name, addr))
			}
			m.report(b, float64(b.N))
		})
	}
}

type slowMetrics struct {
	promptLost, promptLate, slowGot, slowDropped, slowLate, idleP99, busyP99 float64
}

func (m *slowMetrics) add(o slowMetrics) {
	m.promptLost += o.promptLost
	m.promptLate += o.promptLate
	m.slowGot += o.slowGot
	m.slowDropped += o.slowDropped
	m.slowLate += o.slowLate
	m.idleP99 += o.idleP99
	m.busyP99 += o.busyP99
}

func (m *slowMetrics) report(b *testing.B, n float64) {
	b.ReportMetric(m.promptLost/n, "prompt-lost")
	b.ReportMetric(m.promptLate/n, "prompt-late-ms")
	b.ReportMetric(m.slowGot/n, "slow-got")
	b.ReportMetric(m.slowDropped/n, "slow-dropped")
	b.ReportMetric(m.slowLate/n, "slow-late-s")
	b.ReportMetric(m.idleP99/n, "get-idle-p99-µs")
	b.ReportMetric(m.busyP99/n, "get-busy-p99-µs")
}

func slowRound(b *testing.B, ctx context.Context, name, addr string) slowMetrics {
	sc, err := newPSClient(ctx, name, addr)
	if err != nil {
		b.Fatal(err)
	}
	defer sc.close()
	pub, err := newPSClient(ctx, name, addr)
	if err != nil {
		b.Fatal(err)
	}
	defer pub.close()
	get := getterOf(sc)
	ch := newChannel("slow", name)
	prompt, slow := newCounter(slowN, 0), newCounter(slowN, slowDelay)
	stop1, err := sc.subscribe(ctx, ch, prompt.onMsg, prompt.onGap)
	if err != nil {
		b.Fatal(err)
	}
	stop2, err := sc.subscribe(ctx, ch, slow.onMsg, slow.onGap)
	if err != nil {
		b.Fatal(err)
	}
	// go-redis has each subscription on a connection of its own: two
	// subscribers; Respire and rueidis share one connection.
	want := int64(1)
	if name == "goredis" {
		want = 2
	}
	if err := waitSubscribersAt(ctx, addr, ch, want); err != nil {
		b.Fatal(err)
	}
	if err := get(ctx); err != nil {
		b.Fatal(err)
	}
	var idle hist.H
	for range 2000 {
		t := time.Now()
		if err := get(ctx); err != nil {
			b.Fatal(err)
		}
		idle.Record(time.Since(t))
	}

	if err := publishAll(ctx, pub, ch, slowN, burstPipe, want); err != nil {
		b.Fatal(err)
	}
	end := time.Now()
	// GETs while the slow subscription drains (and the prompt one catches
	// up): what a slow reader costs the client's other work.
	var busy hist.H
	for range 2000 {
		t := time.Now()
		if err := get(ctx); err != nil {
			b.Fatal(err)
		}
		busy.Record(time.Since(t))
	}
	prompt.await(2 * time.Second)
	slow.await(3 * time.Second)
	stop1()
	stop2()
	m := slowMetrics{
		promptLost:  float64(slowN - prompt.got.Load()),
		promptLate:  float64(time.Unix(0, prompt.last.Load()).Sub(end)) / 1e6,
		slowGot:     float64(slow.got.Load()),
		slowDropped: float64(slow.dropped.Load()),
		slowLate:    time.Unix(0, slow.last.Load()).Sub(end).Seconds(),
		idleP99:     float64(idle.Quantile(0.99)) / 1e3,
		busyP99:     float64(busy.Quantile(0.99)) / 1e3,
	}
	return m
}

// getterOf returns a GET of a missing key on c's client.
func getterOf(c psClient) func(context.Context) error {
	const key = "bench:ps:get"
	switch c := c.(type) {
	case respirePS:
		return func(ctx context.Context) error {
			_, err := c.c.Get(ctx, key)
			if err != nil && !errors.Is(err, respire.Nil) {
				return err
			}
			return nil
		}
	case goredisPS:
		return func(ctx context.Context) error {
			err := c.c.Get(ctx, key).Err()
			if err != nil && err != redis.Nil {
				return err
			}
			return nil
		}
	case rueidisPS:
		return func(ctx context.Context) error {
			err := c.c.Do(ctx, c.c.B().Get().Key(key).Build()).Error()
			if err != nil && !rueidis.IsRedisNil(err) {
				return err
			}
			return nil
		}
	}
	panic("unknown client")
}

// waitSubscribersAt waits, through a Respire client of its own, until ch
// has n subscribers at addr.
func waitSubscribersAt(ctx context.Context, addr, ch string, n int64) error {
	obs, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		return err
	}
	defer obs.Close()
	return waitSubscribers(ctx, obs, ch, n)
}
