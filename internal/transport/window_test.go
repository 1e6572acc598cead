package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A read whose connection the peer closes under it, more often than its
// Retries, is sent again as long as its context's deadline allows; under
// a context without a deadline, only Retries times.
func TestReadRetriedWithinDeadline(t *testing.T) {
	const closes = 6
	var gets atomic.Int32
	var p *peer
	p = newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "GET":
			if gets.Add(1) <= closes {
				p.CloseConns()
				return ""
			}
			return "+" + args[1] + "\r\n"
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := newCountReq(1, "GET", "a")
	require.NoError(t, m.Do(ctx, &r.Request))
	assert.Equal(t, []string{"a"}, r.got)
	assert.Equal(t, int32(closes+1), gets.Load(), "sent again after each close")

	gets.Store(0)
	r = newCountReq(1, "GET", "a")
	err := m.Do(context.Background(), &r.Request)
	var ce *ConnError
	require.ErrorAs(t, err, &ce)
	assert.NotErrorIs(t, err, ErrNotSent)
	assert.Equal(t, int32(2), gets.Load(), "without a deadline: once, and once again (Retries 1)")
}

// A read whose reply breaks the connection (a protocol error: the client,
// not the network, gave up on it) is sent again only Retries times, even
// within a deadline: it would break the connection each time.
func TestReadRetryCountedAfterProtocolError(t *testing.T) {
	var gets atomic.Int32
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "GET":
			gets.Add(1)
			return "$-7\r\n"
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := newCountReq(2, "GET", "a")
	err := m.Do(ctx, &r.Request)
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "protocol"), "%v", err)
	assert.Equal(t, int32(3), gets.Load(), "once, and Retries (2) times again")
}

// At most two large writes of 1 MiB, or four of 128 KiB, are written and
// unanswered on a connection; the others wait unwritten. When the
// connection breaks, the ones written fail with their outcome unknown and
// the others are sent on the next connection.
func TestWriteWindowBoundsUnknownOutcomes(t *testing.T) {
	for _, tc := range []struct {
		size, inFlight int
	}{
		{size: 1 << 20, inFlight: 2},
		{size: 128 << 10, inFlight: 4},
	} {
		t.Run(fmt.Sprintf("%dKiB", tc.size>>10), func(t *testing.T) {
			testWindowBound(t, tc.size, tc.inFlight)
		})
	}
}

func testWindowBound(t *testing.T, size, inFlight int) {
	var held atomic.Bool
	held.Store(true)
	var read atomic.Int32 // SETs the peer read while holding replies
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "SET":
			if held.Load() {
				read.Add(1)
				return ""
			}
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	const callers = 7
	value := strings.Repeat("v", size)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = m.Do(ctx, &newTestReq("SET", "k", value).Request)
		}()
	}
	w := &m.slots[0].win
	queued := func() int {
		w.mu.Lock()
		defer w.mu.Unlock()
		return len(w.queue)
	}
	require.Eventually(t, func() bool { return queued() == callers-inFlight && read.Load() == int32(inFlight) },
		10*time.Second, time.Millisecond, "%d written, the others waiting", inFlight)
	held.Store(false)
	p.CloseConns()
	wg.Wait()
	unknown := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		unknown++
		var ce *ConnError
		assert.ErrorAs(t, err, &ce)
		assert.NotErrorIs(t, err, ErrNotSent)
	}
	assert.Equal(t, inFlight, unknown, "the writes caught by the break: %v", errs)
}

// The window admits waiting callers in order, a batch of more than
// windowMax alone, and one whose context ends while waiting leaves without
// taking room.
func TestWindowOrderAndCancel(t *testing.T) {
	var w window
	bg := context.Background()
	// Two huge writes fill the window.
	require.NoError(t, w.acquire(bg, bg, windowMax/2))
	require.NoError(t, w.acquire(bg, bg, windowMax/2))

	ctx, cancel := context.WithCancel(bg)
	gave := make(chan error, 1)
	go func() { gave <- w.acquire(ctx, bg, 1) }()
	waiting := func(n int) func() bool {
		return func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.queue) == n }
	}
	require.Eventually(t, waiting(1), 5*time.Second, time.Millisecond)
	batch := make(chan error, 1)
	go func() { batch <- w.acquire(bg, bg, windowMax+1) }()
	require.Eventually(t, waiting(2), 5*time.Second, time.Millisecond)
	single := make(chan error, 1)
	go func() { single <- w.acquire(bg, bg, 1) }()
	require.Eventually(t, waiting(3), 5*time.Second, time.Millisecond)

	cancel()
	err := <-gave
	assert.ErrorIs(t, err, ErrNotSent)
	assert.True(t, errors.Is(err, context.Canceled), "%v", err)
	w.release(windowMax / 2)
	select {
	case <-batch:
		t.Fatal("a batch heavier than the window admitted beside another large write")
	case <-single:
		t.Fatal("a later caller admitted before the batch waiting")
	default:
	}
	w.release(windowMax / 2)
	require.NoError(t, <-batch, "alone")
	w.release(windowMax + 1)
	require.NoError(t, <-single)
	w.release(1)
	assert.Zero(t, w.n)
	assert.Empty(t, w.queue)
}

// A handshake that the network breaks is dialed again at once: with a
// backoff of an hour, the caller still gets its reply after the first
// connection was closed in the middle of its HELLO.
func TestHandshakeCutRedialedAtOnce(t *testing.T) {
	var hellos atomic.Int32
	var p *peer
	p = newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			if hellos.Add(1) == 1 {
				p.CloseConns()
				return ""
			}
			return helloReply
		case "GET":
			return "+" + args[1] + "\r\n"
		}
		return "+OK\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Hour, MaxBackoff: time.Hour})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r := newTestReq("GET", "a")
	require.NoError(t, m.Do(ctx, &r.Request))
	assert.Equal(t, "a", r.got)
	assert.Equal(t, int32(2), hellos.Load())
}

// Which dial failures hold the redial delay: handshakes the network broke,
// not refused dials, timeouts or the server's error replies.
func TestCutShort(t *testing.T) {
	reset := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{&HandshakeError{Step: "HELLO", Err: reset}, true},
		{&HandshakeError{Step: "HELLO", Err: io.EOF}, true},
		{&HandshakeError{Step: "CLIENT SETINFO", Err: io.ErrUnexpectedEOF}, true},
		{&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}, false},
		{&HandshakeError{Step: "HELLO", Err: os.ErrDeadlineExceeded}, false},
		{&HandshakeError{Step: "HELLO", Err: NewServerError("LOADING Redis is loading")}, false},
		{&HandshakeError{Step: "AUTH", Err: NewServerError("WRONGPASS invalid password")}, false},
	} {
		assert.Equal(t, c.want, cutShort(c.err), "%v", c.err)
	}
}
