package transport

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"

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

// A goroutine that holds the read role and loses its processor (here it
// yields; the runtime preempts a goroutine that ran 10 ms, wherever it
// is) waits in the run queue behind goroutines that only call Poll, as
// hits do. Those yield once they find the role held for longer than a
// drain takes, so the holder runs again and lets go at once instead of
// after every spinner's 10 ms time slice (20 spinners, 1 processor: about
// 200 ms before).
func TestPollYieldsToStuckHolder(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), Tracking: &Tracking{}})
	defer m.Close()
	require.NoError(t, m.Connect(context.Background()))
	c := m.slots[0].cur.Load()
	require.NotNil(t, c)
	if c.poll == nil {
		t.Skip("no polling on this platform")
	}

	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	// The holder takes the role, starts the spinners, loses its
	// processor once (it is then queued behind them), then lets go.
	for !c.poll.tryTake() {
		runtime.Gosched()
	}
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for !stop.Load() {
				m.Poll()
			}
		}()
	}
	start := time.Now()
	runtime.Gosched()
	held := time.Since(start)
	c.poll.release()
	stop.Store(true)
	wg.Wait()
	t.Logf("the holder ran again after %v", held)
	assert.Less(t, held, 50*time.Millisecond)
}
