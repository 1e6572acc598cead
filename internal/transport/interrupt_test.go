package transport

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// slowDeadline is a connection whose SetDeadline waits for the test, so
// that an interruption can be caught half way.
type slowDeadline struct {
	net.Conn
	entered, release chan struct{}
	set              atomic.Bool
}

func (s *slowDeadline) SetDeadline(t time.Time) error {
	close(s.entered)
	<-s.release
	s.set.Store(true)
	return s.Conn.SetDeadline(t)
}

// TestInterruptStopWaitsForTheDeadline: once the context ended, stop
// returns only after the interrupting deadline is set, so that a deadline
// cleared after stop stays cleared (a handshake that ended as its caller
// left must not hand on a connection that fails its next command).
func TestInterruptStopWaitsForTheDeadline(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	nc := &slowDeadline{Conn: a, entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	stop := interruptOn(ctx, nc)
	cancel()
	<-nc.entered
	stopped := make(chan bool, 1)
	go func() { stopped <- stop() }()
	select {
	case <-stopped:
		t.Fatal("stop returned before the interrupting deadline was set")
	case <-time.After(20 * time.Millisecond):
	}
	close(nc.release)
	require.False(t, <-stopped)
	assert.True(t, nc.set.Load())
	// Cleared now, the deadline stays cleared: the connection works.
	require.NoError(t, a.SetDeadline(time.Time{}))
	go func() { _, _ = b.Write([]byte("x")) }()
	one := make([]byte, 1)
	_, err := a.Read(one)
	assert.NoError(t, err)
}

// TestInterruptStopFirst: a stop before the context ends sets nothing.
func TestInterruptStopFirst(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	nc := &slowDeadline{Conn: a, entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	stop := interruptOn(ctx, nc)
	assert.True(t, stop())
	cancel()
	assert.False(t, nc.set.Load())
}
