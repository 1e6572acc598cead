package respire_test

import (
	"context"
	"fmt"
	"log"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/respire"
)

// slowLog is a tracer of commands: it prints those slower than a bound.
// Its two methods go in a Tracer: the client tells it nothing else.
type slowLog struct {
	bound time.Duration
	slow  atomic.Int64
}

type startKey struct{}

type started struct {
	at   time.Time
	name string
}

func (s *slowLog) TraceCommandStart(ctx context.Context, _ *respire.Client, d respire.TraceCommandStartData) context.Context {
	return context.WithValue(ctx, startKey{}, started{at: time.Now(), name: d.Name})
}

func (s *slowLog) TraceCommandEnd(ctx context.Context, _ *respire.Client, d respire.TraceCommandEndData) {
	st, _ := ctx.Value(startKey{}).(started)
	if took := time.Since(st.at); took > s.bound {
		s.slow.Add(1)
		log.Printf("slow command %s: %v (err: %v)", st.name, took, d.Err)
	}
}

// A tracer goes in Options.Tracer, with the functions it needs set. Each
// Start returns the context that its End receives, so that a span or a
// start time travels from one to the other.
func ExampleTracer() {
	ctx := context.Background()
	slow := &slowLog{bound: 50 * time.Millisecond}
	tracer := &respire.Tracer{CommandStart: slow.TraceCommandStart, CommandEnd: slow.TraceCommandEnd}
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379", Tracer: tracer})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if _, err := c.Do(ctx, "DEBUG", "SLEEP", "0.1"); err != nil {
		fmt.Println(err)
	}
	fmt.Println("slow commands:", slow.slow.Load())
}

// outages counts how long connections were down.
type outages struct{ down atomic.Int64 }

type lostAt struct{}

func (o *outages) TraceReconnectStart(ctx context.Context, _ *respire.Client, d respire.TraceReconnectStartData) context.Context {
	log.Printf("connection to %s lost: %v", d.Addr, d.Cause)
	return context.WithValue(ctx, lostAt{}, time.Now())
}

func (o *outages) TraceReconnectEnd(ctx context.Context, _ *respire.Client, d respire.TraceReconnectEndData) {
	since, _ := ctx.Value(lostAt{}).(time.Time)
	o.down.Add(int64(time.Since(since)))
	log.Printf("connection to %s back after %d dials", d.Addr, d.Attempts)
}

func (o *outages) TracePubSubGap(_ context.Context, _ *respire.Client, d respire.TracePubSubGapData) {
	if d.Opened {
		log.Printf("pub/sub messages lost: %v", d.Reason)
	}
}

// One tracer may follow several kinds of events: here the outages of
// connections and the gaps of subscriptions; the others cost nothing.
func ExampleTracer_reconnects() {
	o := &outages{}
	tracer := &respire.Tracer{
		ReconnectStart: o.TraceReconnectStart,
		ReconnectEnd:   o.TraceReconnectEnd,
		PubSubGap:      o.TracePubSubGap,
	}
	c, err := respire.NewClient(respire.Options{Addr: "localhost:6379", Tracer: tracer})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	// ... use c; o.down holds the time spent reconnecting.
}
