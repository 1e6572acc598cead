package benchmarks

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/hist"
	"github.com/respire-go/respire/respire"
)

// Pub/sub: publish-to-consume latency (one subscriber) and fan-out
// throughput (fanoutSubs subscribers on one channel), for Respire, go-redis
// and rueidis. Every subscriber and the publisher is a client of its own
// (its own connections), each configured with its library's defaults, so
// that the server delivers every message once per subscriber for every
// library.
//
// Each payload is "SEQ:NANOS": the message's sequence number and its send
// time in monotonic nanoseconds since a start shared by publisher and
// subscribers (taken just before the PUBLISH is issued). A subscriber
// records now-NANOS in a hist.H and checks that the sequence numbers arrive
// in order, counting the messages it never saw ("lost"), the ones that came
// out of order ("reordered", which fails the benchmark) and, for Respire,
// its Gap markers ("gaps").

// pubsubClients are the clients of the pub/sub benchmarks, in order.
var pubsubClients = []string{"respire", "goredis", "rueidis"}

// fanoutSubs is the number of subscribers of BenchmarkPubSubFanout.
const fanoutSubs = 10

// fanoutPipe is the number of PUBLISH commands the fan-out publisher sends
// per pipeline; fanoutWindow bounds how far (in messages) it may run ahead
// of the slowest subscriber. The window is below Respire's default
// subscription buffer (1024), so a reader that keeps up never overflows
// it, and it keeps the server's pub/sub output buffers far from their
// limits for every client alike.
const (
	fanoutPipe   = 64
	fanoutWindow = 512
)

// psChan numbers the channels: each benchmark invocation publishes on a
// channel of its own, so that nothing left over from an earlier one can
// arrive.
var psChan atomic.Int64

func newChannel(kind, client string) string {
	return fmt.Sprintf("bench:ps:%s:%s:%d", kind, client, psChan.Add(1))
}

// psClient is what the pub/sub benchmarks do with a client.
type psClient interface {
	// publish sends one PUBLISH and checks that it reached receivers
	// subscribers.
	publish(ctx context.Context, ch, msg string, receivers int64) error
	// publishPipe sends one PUBLISH per message as one pipeline.
	publishPipe(ctx context.Context, ch string, msgs []string, receivers int64) error
	// subscribe subscribes to ch and calls onMsg for every message (and,
	// for Respire, onGap for every gap marker), on one goroutine at a
	// time, until stop. The subscription may not be confirmed yet when it
	// returns: see waitSubscribers.
	subscribe(ctx context.Context, ch string, onMsg func(payload string), onGap func(dropped int64)) (stop func(), err error)
	close()
}

func newPSClient(ctx context.Context, name, addr string) (psClient, error) {
	switch name {
	case "respire":
		c, err := respire.Connect(ctx, respire.Options{Addr: addr})
		if err != nil {
			return nil, err
		}
		return respirePS{c}, nil
	case "goredis":
		c := redis.NewClient(&redis.Options{Addr: addr})
		if err := c.Ping(ctx).Err(); err != nil {
			c.Close()
			return nil, err
		}
		return goredisPS{c}, nil
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			return nil, err
		}
		return rueidisPS{c}, nil
	}
	return nil, fmt.Errorf("unknown pub/sub client %q", name)
}

func checkReceivers(got, want int64) error {
	if got != want {
		return fmt.Errorf("PUBLISH reached %d subscribers, want %d", got, want)
	}
	return nil
}

type respirePS struct{ c *respire.Client }

func (r respirePS) publish(ctx context.Context, ch, msg string, receivers int64) error {
	n, err := r.c.Publish(ctx, ch, msg)
	if err != nil {
		return err
	}
	return checkReceivers(n, receivers)
}

func (r respirePS) publishPipe(ctx context.Context, ch string, msgs []string, receivers int64) error {
	b := r.c.NewBatch()
	futs := make([]*respire.Future[int64], len(msgs))
	for i, m := range msgs {
		futs[i] = b.Publish(ch, m)
	}
	if err := b.Exec(ctx); err != nil {
		return err
	}
	for _, f := range futs {
		n, err := f.Result()
		if err != nil {
			return err
		}
		if err := checkReceivers(n, receivers); err != nil {
			return err
		}
	}
	return nil
}

func (r respirePS) subscribe(ctx context.Context, ch string, onMsg func(string), onGap func(int64)) (func(), error) {
	sub, err := r.c.Subscribe(ctx, ch)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := sub.Next(ctx)
			if err != nil {
				return
			}
			if m.Gap != nil {
				onGap(m.Gap.Dropped)
				continue
			}
			onMsg(m.Payload)
		}
	}()
	return func() { sub.Close(); <-done }, nil
}

func (r respirePS) close() { r.c.Close() }

type goredisPS struct{ c *redis.Client }

func (g goredisPS) publish(ctx context.Context, ch, msg string, receivers int64) error {
	n, err := g.c.Publish(ctx, ch, msg).Result()
	if err != nil {
		return err
	}
	return checkReceivers(n, receivers)
}

func (g goredisPS) publishPipe(ctx context.Context, ch string, msgs []string, receivers int64) error {
	p := g.c.Pipeline()
	cmds := make([]*redis.IntCmd, len(msgs))
	for i, m := range msgs {
		cmds[i] = p.Publish(ctx, ch, m)
	}
	if _, err := p.Exec(ctx); err != nil {
		return err
	}
	for _, c := range cmds {
		if err := checkReceivers(c.Val(), receivers); err != nil {
			return err
		}
	}
	return nil
}

// subscribe reads with ReceiveMessage, go-redis's direct counterpart of
// Respire's Next (its Channel adds a goroutine and a Go channel).
func (g goredisPS) subscribe(ctx context.Context, ch string, onMsg func(string), _ func(int64)) (func(), error) {
	ps := g.c.Subscribe(ctx, ch)
	if _, err := ps.Receive(ctx); err != nil { // the confirmation
		ps.Close()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			m, err := ps.ReceiveMessage(ctx)
			if err != nil {
				return
			}
			onMsg(m.Payload)
		}
	}()
	return func() { ps.Close(); <-done }, nil
}

func (g goredisPS) close() { g.c.Close() }

type rueidisPS struct{ c rueidis.Client }

func (r rueidisPS) publish(ctx context.Context, ch, msg string, receivers int64) error {
	n, err := r.c.Do(ctx, r.c.B().Publish().Channel(ch).Message(msg).Build()).AsInt64()
	if err != nil {
		return err
	}
	return checkReceivers(n, receivers)
}

func (r rueidisPS) publishPipe(ctx context.Context, ch string, msgs []string, receivers int64) error {
	cmds := make(rueidis.Commands, len(msgs))
	for i, m := range msgs {
		cmds[i] = r.c.B().Publish().Channel(ch).Message(m).Build()
	}
	for _, res := range r.c.DoMulti(ctx, cmds...) {
		n, err := res.AsInt64()
		if err != nil {
			return err
		}
		if err := checkReceivers(n, receivers); err != nil {
			return err
		}
	}
	return nil
}

// subscribe uses Receive, which calls fn on the connection's reading
// goroutine and returns when its context ends.
func (r rueidisPS) subscribe(ctx context.Context, ch string, onMsg func(string), _ func(int64)) (func(), error) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.c.Receive(ctx, r.c.B().Subscribe().Channel(ch).Build(), func(m rueidis.PubSubMessage) {
			onMsg(m.Message)
		})
	}()
	return func() { cancel(); <-done }, nil
}

func (r rueidisPS) close() { r.c.Close() }

// waitSubscribers polls PUBSUB NUMSUB until ch has n subscribers, the same
// confirmation for every library (rueidis's Receive does not say when its
// SUBSCRIBE was confirmed).
func waitSubscribers(ctx context.Context, c *respire.Client, ch string, n int64) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		v, err := c.Do(ctx, "PUBSUB", "NUMSUB", ch)
		if err != nil {
			return err
		}
		arr, err := v.Slice()
		if err != nil {
			return err
		}
		if len(arr) == 2 {
			got, err := arr[1].Int64()
			if err != nil {
				return err
			}
			if got == n {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("channel %s: subscribers not confirmed after 10s", ch)
		}
		time.Sleep(time.Millisecond)
	}
}

// payload formats a message: sequence number and send time.
func payload(buf []byte, seq int64, sent time.Duration) string {
	buf = strconv.AppendInt(buf[:0], seq, 10)
	buf = append(buf, ':')
	buf = strconv.AppendInt(buf, int64(sent), 10)
	return string(buf)
}

// subscriber is one subscriber's bookkeeping. onMsg and onGap run on one
// goroutine at a time; the others read the fields only after done is
// closed, except got, which the publisher polls.
type subscriber struct {
	start    time.Time
	target   int64         // number of messages published
	progress chan struct{} // shared, cap 1: "a subscriber advanced"

	next      int64 // the sequence number expected next
	lost      int64
	reordered int64
	malformed int64
	gaps      int64
	dropped   int64
	h         hist.H
	finished  bool

	got  atomic.Int64 // next, for the publisher
	done chan struct{}
}

func newSubscriber(start time.Time, target int64, progress chan struct{}) *subscriber {
	return &subscriber{start: start, target: target, progress: progress, done: make(chan struct{})}
}

func (s *subscriber) onMsg(p string) {
	now := time.Since(s.start)
	a, t, ok := strings.Cut(p, ":")
	seq, err1 := strconv.ParseInt(a, 10, 64)
	sent, err2 := strconv.ParseInt(t, 10, 64)
	if !ok || err1 != nil || err2 != nil {
		s.malformed++
		return
	}
	s.h.Record(now - time.Duration(sent))
	switch {
	case seq == s.next:
		s.next++
	case seq > s.next:
		s.lost += seq - s.next
		s.next = seq + 1
	default:
		s.reordered++
	}
	s.advance()
}

func (s *subscriber) onGap(dropped int64) {
	s.gaps++
	s.dropped += dropped
	// A gap can hide the last messages: those are not coming.
	if dropped > 0 && s.next+dropped >= s.target {
		s.lost += s.target - s.next
		s.next = s.target
		s.advance()
	}
}

func (s *subscriber) advance() {
	s.got.Store(s.next)
	if s.progress != nil && (s.next%16 == 0 || s.next >= s.target) {
		select {
		case s.progress <- struct{}{}:
		default:
		}
	}
	if s.next >= s.target && !s.finished {
		s.finished = true
		close(s.done)
	}
}

func (s *subscriber) wait(b *testing.B) {
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
		b.Fatalf("subscriber got %d of %d messages after 30s", s.got.Load(), s.target)
	}
}

// psSetup connects the publisher and subs subscribers of client name, all
// subscribed to a fresh channel and confirmed. cleanup stops and closes
// everything.
func psSetup(b *testing.B, name, kind string, n, subs int, start time.Time, progress chan struct{}) (
	pub psClient, ch string, ss []*subscriber, cleanup func()) {
	b.Helper()
	ctx := context.Background()
	addr := benchServer(b).Addr
	var closers []func()
	cleanup = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	fail := func(err error) {
		cleanup()
		b.Fatal(err)
	}
	ch = newChannel(kind, name)
	for range subs {
		c, err := newPSClient(ctx, name, addr)
		if err != nil {
			fail(err)
		}
		closers = append(closers, c.close)
		s := newSubscriber(start, int64(n), progress)
		stop, err := c.subscribe(ctx, ch, s.onMsg, s.onGap)
		if err != nil {
			fail(err)
		}
		closers = append(closers, stop)
		ss = append(ss, s)
	}
	pub, err := newPSClient(ctx, name, addr)
	if err != nil {
		fail(err)
	}
	closers = append(closers, pub.close)
	// The observer of the confirmations is a Respire client for every
	// library; it is closed before timing.
	obs, err := respire.Connect(ctx, respire.Options{Addr: addr})
	if err != nil {
		fail(err)
	}
	err = waitSubscribers(ctx, obs, ch, int64(subs))
	obs.Close()
	if err != nil {
		fail(err)
	}
	return pub, ch, ss, cleanup
}

// report checks the subscribers' order and losses and reports the metrics
// shared by both benchmarks.
func reportSubs(b *testing.B, ss []*subscriber, elapsed time.Duration) {
	var h hist.H
	var lost, gaps, delivered int64
	for i, s := range ss {
		if s.reordered > 0 || s.malformed > 0 {
			b.Errorf("subscriber %d: %d messages out of order, %d malformed", i, s.reordered, s.malformed)
		}
		h.Merge(&s.h)
		lost += s.lost
		gaps += s.gaps
		delivered += s.target - s.lost
	}
	b.ReportMetric(float64(h.Quantile(0.50))/1e3, "p50-µs")
	b.ReportMetric(float64(h.Quantile(0.99))/1e3, "p99-µs")
	b.ReportMetric(float64(delivered)/elapsed.Seconds(), "msgs/s")
	b.ReportMetric(float64(lost), "lost")
	b.ReportMetric(float64(gaps), "gaps")
}

// BenchmarkPubSubLatency: one publisher client publishes b.N messages one
// at a time (each PUBLISH waits for its reply, none waits for the
// subscriber) to one subscriber client. p50-µs and p99-µs are the
// publish-to-consume latencies, msgs/s the messages consumed per second.
func BenchmarkPubSubLatency(b *testing.B) {
	for _, name := range pubsubClients {
		b.Run("client="+name, func(b *testing.B) {
			ctx := context.Background()
			start := time.Now()
			pub, ch, ss, cleanup := psSetup(b, name, "lat", b.N, 1, start, nil)
			defer cleanup()
			buf := make([]byte, 0, 48)
			b.ReportAllocs()
			b.ResetTimer()
			t0 := time.Now()
			for i := range b.N {
				if err := pub.publish(ctx, ch, payload(buf, int64(i), time.Since(start)), 1); err != nil {
					b.Fatal(err)
				}
			}
			ss[0].wait(b)
			elapsed := time.Since(t0)
			b.StopTimer()
			reportSubs(b, ss, elapsed)
		})
	}
}

// BenchmarkPubSubFanout: one publisher client, fanoutSubs subscriber
// clients on one channel. The publisher sends b.N messages in pipelines of
// fanoutPipe PUBLISH commands, as fast as it can while staying within
// fanoutWindow messages of the slowest subscriber. msgs/s counts the
// messages delivered across all subscribers per second; ns/op is per
// published message.
func BenchmarkPubSubFanout(b *testing.B) {
	for _, name := range pubsubClients {
		b.Run("client="+name, func(b *testing.B) {
			ctx := context.Background()
			start := time.Now()
			progress := make(chan struct{}, 1)
			pub, ch, ss, cleanup := psSetup(b, name, "fan", b.N, fanoutSubs, start, progress)
			defer cleanup()
			slowest := func() int64 {
				m := ss[0].got.Load()
				for _, s := range ss[1:] {
					m = min(m, s.got.Load())
				}
				return m
			}
			msgs := make([]string, 0, fanoutPipe)
			buf := make([]byte, 0, 48)
			b.ReportAllocs()
			b.ResetTimer()
			t0 := time.Now()
			for sent := int64(0); sent < int64(b.N); {
				k := min(int64(fanoutPipe), int64(b.N)-sent)
				for slowest()+fanoutWindow < sent+k {
					select {
					case <-progress:
					case <-time.After(30 * time.Second):
						b.Fatalf("subscribers stuck at %d of %d messages sent", slowest(), sent)
					}
				}
				msgs = msgs[:0]
				now := time.Since(start)
				for i := range k {
					msgs = append(msgs, payload(buf, sent+i, now))
				}
				if err := pub.publishPipe(ctx, ch, msgs, fanoutSubs); err != nil {
					b.Fatal(err)
				}
				sent += k
			}
			for _, s := range ss {
				s.wait(b)
			}
			elapsed := time.Since(t0)
			b.StopTimer()
			reportSubs(b, ss, elapsed)
		})
	}
}
