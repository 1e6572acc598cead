package transport

import (
	"context"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedPeer is blockingPeer whose HELLO waits while its gate is shut,
// and which counts the HELLOs waiting; the gates open when the test ends.
type gatedPeer struct {
	*peer
	mu      sync.Mutex
	hellos  chan struct{} // closed: HELLO is answered
	release chan struct{} // closed: WAKE is answered
	waiting atomic.Int32  // HELLOs waiting
	dials   atomic.Int32  // HELLOs received
}

func newGatedPeer(t *testing.T, hellosOpen bool) *gatedPeer {
	g := &gatedPeer{hellos: make(chan struct{}), release: make(chan struct{})}
	if hellosOpen {
		close(g.hellos)
	}
	g.peer = newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			g.dials.Add(1)
			g.waiting.Add(1)
			<-g.gate(&g.hellos)
			g.waiting.Add(-1)
			return helloReply
		case "BLOCK":
			return ""
		case "WAKE":
			<-g.gate(&g.release)
			return "_\r\n"
		}
		return "+" + args[0] + "\r\n"
	})
	// Registered after the peer's cleanup, so run before it.
	t.Cleanup(func() { g.open(); g.wake() })
	return g
}

func (g *gatedPeer) gate(ch *chan struct{}) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return *ch
}

func (g *gatedPeer) openGate(ch *chan struct{}) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-*ch:
	default:
		close(*ch)
	}
}

// open lets HELLOs through, shut stops them again; wake answers WAKEs.
func (g *gatedPeer) open() { g.openGate(&g.hellos) }
func (g *gatedPeer) wake() { g.openGate(&g.release) }
func (g *gatedPeer) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.hellos = make(chan struct{})
}

// claims returns the pool's claim count and line length.
func (p *BlockingPool) counts() (claims, dialing, waiters int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.claims, p.dialing, len(p.waiters)
}

// callAll starts n calls of cmd on pool and returns their errors' channel.
func callAll(ctx context.Context, pool *BlockingPool, n int, cmd string) <-chan error {
	errs := make(chan error, n)
	for range n {
		go func() { errs <- pool.Do(ctx, &newTestReq(cmd).Request) }()
	}
	return errs
}

// TestBlockingPoolGrowsAndShrinks: with the default bound, 300 calls
// blocked at once each get a connection; once they are done the pool
// keeps them idle for PoolIdle, then closes all but PoolKeepIdle, the
// ones used last, and works on. (The default PoolIdle, a minute, is
// shortened here; the mechanism is the same.)
func TestBlockingPoolGrowsAndShrinks(t *testing.T) {
	const n = 300
	g := newGatedPeer(t, true)
	// An idle time no caller reaches while the others finish; shortened
	// once they are all idle.
	pool := NewBlockingPool(Config{Addr: g.Addr(), PoolIdle: time.Hour}, 0)
	defer pool.Close()
	require.GreaterOrEqual(t, pool.Size(), minDefaultPoolSize)

	errs := callAll(context.Background(), pool, n, "WAKE")
	require.Eventually(t, func() bool { return pool.Stats().Busy == n }, 10*time.Second, time.Millisecond)
	g.wake()
	for range n {
		require.NoError(t, <-errs)
	}
	pool.mu.Lock()
	all := append([]*Dedicated(nil), pool.idle...)
	pool.mu.Unlock()
	require.Len(t, all, n)
	pool.mu.Lock()
	require.True(t, pool.reaping, "the reaper is armed")
	pool.cfg.PoolIdle = 20 * time.Millisecond
	pool.reaper.Stop()
	pool.reaping = false
	pool.armReaperLocked()
	pool.mu.Unlock()

	require.Eventually(t, func() bool { return pool.Stats().Idle == PoolKeepIdle }, 10*time.Second, time.Millisecond)
	claims, _, _ := pool.counts()
	assert.Equal(t, PoolKeepIdle, claims)
	assert.Equal(t, BlockingStats{Size: pool.Size(), Idle: PoolKeepIdle}, pool.Stats())
	pool.mu.Lock()
	kept := append([]*Dedicated(nil), pool.idle...)
	assert.LessOrEqual(t, cap(pool.idle), 64, "the idle list gave back its peak memory")
	pool.mu.Unlock()
	// The connections given back last are kept; the others are closed.
	last := make(map[*Dedicated]bool)
	for _, d := range all[n-PoolKeepIdle:] {
		last[d] = true
	}
	for _, d := range kept {
		assert.True(t, last[d], "a connection given back last is kept")
	}
	for _, d := range all[:n-PoolKeepIdle] {
		require.Eventually(t, func() bool { return errors.Is(d.nc.SetDeadline(time.Time{}), net.ErrClosed) },
			10*time.Second, time.Millisecond)
	}
	for range 2 {
		r := newTestReq("ECHO")
		require.NoError(t, pool.Do(context.Background(), &r.Request))
		assert.Equal(t, "ECHO", r.got)
	}
	assert.Equal(t, int32(n), g.dials.Load(), "the kept connections serve the next calls")
}

// TestBlockingPoolBoundFailsAtOnce: a call past the bound fails at once,
// whatever its context, naming the bound and the option; the calls within
// the bound are unaffected.
func TestBlockingPoolBoundFailsAtOnce(t *testing.T) {
	g := newGatedPeer(t, true)
	pool := NewBlockingPool(Config{Addr: g.Addr()}, 3)
	defer pool.Close()
	errs := callAll(context.Background(), pool, 3, "WAKE")
	require.Eventually(t, func() bool { return pool.Stats().Busy == 3 }, 5*time.Second, time.Millisecond)

	// No deadline: before, such a call waited for a connection forever.
	r := newTestReq("ECHO")
	err := pool.Do(context.Background(), &r.Request)
	require.ErrorIs(t, err, ErrPoolExhausted)
	require.ErrorIs(t, err, ErrNotSent)
	assert.Contains(t, err.Error(), "all 3 connections to "+g.Addr()+" busy")
	assert.Contains(t, err.Error(), "Options.BlockingPoolSize")
	assert.Equal(t, 1, r.recycled)
	_, err = pool.Hold(context.Background())
	require.ErrorIs(t, err, ErrPoolExhausted)

	g.wake()
	for range 3 {
		require.NoError(t, <-errs)
	}
	assert.Equal(t, BlockingStats{Size: 3, Idle: 3}, pool.Stats())
	h, err := pool.Hold(context.Background())
	require.NoError(t, err)
	h.Release()
}

// TestBlockingPoolDialsInLine: a thousand calls at once dial at most
// maxPoolDials connections at a time; the others wait in line and all get
// one.
func TestBlockingPoolDialsInLine(t *testing.T) {
	const n = 1000
	g := newGatedPeer(t, false)
	pool := NewBlockingPool(Config{Addr: g.Addr()}, n)
	defer pool.Close()
	errs := callAll(context.Background(), pool, n, "ECHO")
	require.Eventually(t, func() bool {
		claims, _, waiters := pool.counts()
		return claims == n && waiters == n-maxPoolDials
	}, 10*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return g.waiting.Load() == maxPoolDials }, 10*time.Second, time.Millisecond)
	_, dialing, _ := pool.counts()
	assert.Equal(t, maxPoolDials, dialing)
	// A call past the bound fails at once, those in line included.
	err := pool.Do(context.Background(), &newTestReq("ECHO").Request)
	require.ErrorIs(t, err, ErrPoolExhausted)

	g.open()
	for range n {
		require.NoError(t, <-errs)
	}
	assert.LessOrEqual(t, g.dials.Load(), int32(n))
	claims, dialing, waiters := pool.counts()
	assert.Equal(t, [3]int{pool.Stats().Idle, 0, 0}, [3]int{claims, dialing, waiters})
}

// TestBlockingPoolLineTakesGivenBack: a call waiting in line for a dial
// takes a connection another call gives back, without dialing.
func TestBlockingPoolLineTakesGivenBack(t *testing.T) {
	g := newGatedPeer(t, true)
	pool := NewBlockingPool(Config{Addr: g.Addr()}, 0)
	defer pool.Close()
	first := callAll(context.Background(), pool, 1, "WAKE")
	require.Eventually(t, func() bool { return pool.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)

	// Every dial hangs in HELLO; one more call waits in line.
	g.shut()
	dials := callAll(context.Background(), pool, maxPoolDials, "ECHO")
	require.Eventually(t, func() bool { return g.waiting.Load() == maxPoolDials }, 5*time.Second, time.Millisecond)
	r := newTestReq("ECHO")
	done := make(chan error, 1)
	go func() { done <- pool.Do(context.Background(), &r.Request) }()
	require.Eventually(t, func() bool { _, _, w := pool.counts(); return w == 1 }, 5*time.Second, time.Millisecond)

	g.wake()
	require.NoError(t, <-first)
	require.NoError(t, <-done)
	assert.Equal(t, "ECHO", r.got)
	g.open()
	for range maxPoolDials {
		require.NoError(t, <-dials)
	}
}

// TestBlockingPoolContextEndsInLine: calls whose context ends while they
// wait in line, or while their dial hangs, fail with the context's error
// and leave nothing behind.
func TestBlockingPoolContextEndsInLine(t *testing.T) {
	const n = 100
	g := newGatedPeer(t, false)
	pool := NewBlockingPool(Config{Addr: g.Addr()}, 0)
	defer pool.Close()
	for _, end := range []struct {
		name string
		ctx  func() (context.Context, context.CancelFunc)
	}{
		{"cancel", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
		{"deadline", func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 300*time.Millisecond)
		}},
	} {
		t.Run(end.name, func(t *testing.T) {
			ctx, cancel := end.ctx()
			defer cancel()
			errs := callAll(ctx, pool, n, "ECHO")
			if end.name == "cancel" {
				require.Eventually(t, func() bool { c, _, _ := pool.counts(); return c == n }, 10*time.Second, time.Millisecond)
				cancel()
			}
			for range n {
				err := <-errs
				require.ErrorIs(t, err, ctx.Err())
				require.ErrorIs(t, err, ErrNotSent)
			}
			claims, dialing, waiters := pool.counts()
			assert.Equal(t, [3]int{0, 0, 0}, [3]int{claims, dialing, waiters})
			assert.Equal(t, BlockingStats{Size: pool.Size()}, pool.Stats())
		})
	}
	g.open()
	r := newTestReq("ECHO")
	require.NoError(t, pool.Do(context.Background(), &r.Request))
	assert.Equal(t, "ECHO", r.got)
}

// TestBlockingPoolServerFull: a server that refuses connections for want of
// room ("max number of clients reached") fails no call: the dials are
// tried again after a backoff, even with FailFast. A call whose context
// ends meanwhile fails with an error that matches both the context's error
// and ErrUnavailable, naming the server's answer.
func TestBlockingPoolServerFull(t *testing.T) {
	var full atomic.Int32
	full.Store(1)
	var refused atomic.Int32
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			if full.Load() == 1 {
				refused.Add(1)
				return "-ERR max number of clients reached\r\n"
			}
			return helloReply
		}
		return "+" + args[0] + "\r\n"
	})
	pool := NewBlockingPool(Config{Addr: p.Addr(), FailFast: true}, 0)
	defer pool.Close()

	ctx, cancel := context.WithCancel(context.Background())
	err := make(chan error, 1)
	go func() { err <- pool.Do(ctx, &newTestReq("ECHO").Request) }()
	require.Eventually(t, func() bool { return refused.Load() >= 2 }, 10*time.Second, time.Millisecond)
	cancel()
	e := <-err
	require.ErrorIs(t, e, context.Canceled)
	require.ErrorIs(t, e, ErrUnavailable)
	assert.Contains(t, e.Error(), "max number of clients")

	errs := callAll(context.Background(), pool, 50, "ECHO")
	require.Eventually(t, func() bool { return refused.Load() >= 60 }, 10*time.Second, time.Millisecond)
	full.Store(0)
	for range 50 {
		require.NoError(t, <-errs)
	}
}

// TestBlockingPoolUnreachable: a server that cannot be reached fails calls
// at once with FailFast, and with no deadline before it was ever reached;
// a call with a deadline waits for it until then.
func TestBlockingPoolUnreachable(t *testing.T) {
	for _, failFast := range []bool{true, false} {
		pool := NewBlockingPool(Config{Addr: "127.0.0.1:1", FailFast: failFast, MaxBackoff: 10 * time.Millisecond}, 0)
		err := pool.Do(context.Background(), &newTestReq("PING").Request)
		require.ErrorIs(t, err, ErrUnavailable)
		require.ErrorIs(t, err, ErrNotSent)

		wait := 200 * time.Millisecond
		if failFast {
			wait = time.Minute
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		err = pool.Do(ctx, &newTestReq("PING").Request)
		require.ErrorIs(t, err, ErrUnavailable)
		if failFast {
			require.NoError(t, ctx.Err(), "FailFast: at once")
		} else {
			require.ErrorIs(t, err, context.DeadlineExceeded, "waited for the deadline")
		}
		cancel()
		claims, dialing, waiters := pool.counts()
		assert.Equal(t, [3]int{0, 0, 0}, [3]int{claims, dialing, waiters})
		pool.Close()
	}
}

// TestBlockingPoolCloseEndsLine: Close ends the calls waiting in line and
// those dialing with ErrClosed.
func TestBlockingPoolCloseEndsLine(t *testing.T) {
	g := newGatedPeer(t, false)
	pool := NewBlockingPool(Config{Addr: g.Addr()}, 0)
	errs := callAll(context.Background(), pool, maxPoolDials+10, "ECHO")
	require.Eventually(t, func() bool { _, _, w := pool.counts(); return w == 10 }, 10*time.Second, time.Millisecond)
	require.NoError(t, pool.Close())
	for range maxPoolDials + 10 {
		require.ErrorIs(t, <-errs, ErrClosed)
	}
	g.open()
	claims, dialing, waiters := pool.counts()
	assert.Equal(t, [3]int{0, 0, 0}, [3]int{claims, dialing, waiters})
}
