package transport

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// blockingPeer answers HELLO, never answers BLOCK, answers WAKE only when
// released, and echoes anything else.
func blockingPeer(t *testing.T, release <-chan struct{}) *peer {
	return newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "BLOCK":
			return ""
		case "WAKE":
			<-release
			return "_\r\n"
		}
		return "+" + args[0] + "\r\n"
	})
}

func TestBlockingCancelDiscardsConnection(t *testing.T) {
	p := blockingPeer(t, nil)
	pool := NewBlockingPool(Config{Addr: p.Addr()}, 2)
	defer pool.Close()

	ctx, cancel := context.WithCancel(context.Background())
	r := newTestReq("BLOCK")
	done := make(chan error, 1)
	go func() { done <- pool.Do(ctx, &r.Request) }()
	require.Eventually(t, func() bool { return pool.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)
	start := time.Now()
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 100*time.Millisecond)
	assert.Equal(t, 1, r.recycled)
	assert.Equal(t, BlockingStats{Size: 2}, pool.Stats(), "the abandoned connection is closed, not kept")

	r2 := newTestReq("ECHO")
	require.NoError(t, pool.Do(context.Background(), &r2.Request))
	assert.Equal(t, "ECHO", r2.got)
	assert.Equal(t, BlockingStats{Size: 2, Idle: 1}, pool.Stats())
}

func TestBlockingCloseUnblocksCallers(t *testing.T) {
	p := blockingPeer(t, nil)
	pool := NewBlockingPool(Config{Addr: p.Addr()}, 1)
	r := newTestReq("BLOCK")
	done := make(chan error, 1)
	go func() { done <- pool.Do(context.Background(), &r.Request) }()
	require.Eventually(t, func() bool { return pool.Stats().Busy == 1 }, 5*time.Second, time.Millisecond)
	require.NoError(t, pool.Close())
	require.ErrorIs(t, <-done, ErrClosed)
	require.ErrorIs(t, pool.Do(context.Background(), &newTestReq("ECHO").Request), ErrClosed)
}

func TestBlockingIdleConnectionClosedByPeer(t *testing.T) {
	var dials atomic.Int32
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			dials.Add(1)
			return helloReply
		}
		return "+" + args[0] + "\r\n"
	})
	pool := NewBlockingPool(Config{Addr: p.Addr()}, 1)
	defer pool.Close()
	r := newTestReq("ONE")
	require.NoError(t, pool.Do(context.Background(), &r.Request))
	// The server drops the idle connection, as on a restart.
	p.CloseConns()
	require.Eventually(t, func() bool {
		pool.mu.Lock()
		defer pool.mu.Unlock()
		return len(pool.idle) == 1 && !alive(pool.idle[0].nc)
	}, 5*time.Second, time.Millisecond)
	r2 := newTestReq("TWO")
	require.NoError(t, pool.Do(context.Background(), &r2.Request))
	assert.Equal(t, "TWO", r2.got)
	assert.Equal(t, int32(2), dials.Load())
}

func TestBlockingDialFailure(t *testing.T) {
	pool := NewBlockingPool(Config{Addr: "127.0.0.1:1"}, 1)
	defer pool.Close()
	r := newTestReq("PING")
	err := pool.Do(context.Background(), &r.Request)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, 1, r.recycled)
}
