package transport

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/respire-go/respire/transport/resp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Goroutines calling Poll while replies and invalidations arrive share
// the read role with the reader goroutine: every invalidation is applied
// once, before the reply that follows it, whoever reads it, and the FIFO
// of replies stays exact.
func TestTrackingPollShared(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "CLIENT":
			return "+OK\r\n"
		case "KEYS":
			k := args[1]
			return fmt.Sprintf(">2\r\n$10\r\ninvalidate\r\n*1\r\n$%d\r\n%s\r\n+%s\r\n", len(k), k, k)
		}
		return "+" + args[1] + "\r\n"
	})
	var mu sync.Mutex
	var events []string
	add := func(s string) { mu.Lock(); events = append(events, s); mu.Unlock() }
	tr := &Tracking{Invalidate: func(k []byte) { add("inv " + string(k)) }, Flush: func() { add("flush") }}
	m := NewMux(Config{Addr: p.Addr(), Tracking: tr})
	defer m.Close()
	ctx := context.Background()
	require.NoError(t, m.Connect(ctx))

	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m.Poll()
				// Spinning without a pause would starve the caller
				// of CPU on a small machine, which is not the point.
				runtime.Gosched()
			}
		}()
	}
	const n = 100
	var want []string
	for i := range n {
		k := fmt.Sprintf("k%d", i)
		r := &orderReq{add: add}
		r.Init(r)
		r.SetPayload(resp.AppendCommand(nil, "KEYS", k))
		require.NoError(t, m.Do(ctx, &r.Request))
		want = append(want, "inv "+k, "reply "+k)
	}
	stop.Store(true)
	wg.Wait()
	mu.Lock()
	assert.Equal(t, want, events)
	mu.Unlock()
}

// Poll on a Mux without tracking, or before it connected, does nothing.
func TestPollWithoutTracking(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "+" + args[len(args)-1] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr()})
	defer m.Close()
	m.Poll()
	require.NoError(t, m.Connect(context.Background()))
	m.Poll()
	r := &orderReq{add: func(string) {}}
	r.Init(r)
	r.SetPayload(resp.AppendCommand(nil, "ECHO", "x"))
	require.NoError(t, m.Do(context.Background(), &r.Request))
}
