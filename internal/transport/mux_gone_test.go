package transport

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A fail-fast Mux whose last dial failed fails a call at once, while the
// dial loop backs off, instead of waiting for the next attempt: a cluster
// node that is down must not hold its callers until their deadlines.
func TestFailFastDuringBackoff(t *testing.T) {
	var dials atomic.Int32
	refuse := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("refused on purpose")
	}
	// A backoff far longer than the test: a call that waited for the
	// next attempt would end only at its context's deadline.
	m := NewMux(Config{Addr: "127.0.0.1:1", Dialer: refuse, FailFast: true, MinBackoff: time.Hour, MaxBackoff: time.Hour})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	r := newTestReq("GET", "a")
	err := m.Do(ctx, &r.Request)
	require.ErrorIs(t, err, ErrUnavailable)
	require.Equal(t, int32(1), dials.Load(), "the first call waits for one attempt")

	for range 3 {
		r := newTestReq("GET", "a")
		err := m.Do(ctx, &r.Request)
		require.ErrorIs(t, err, ErrUnavailable)
		assert.ErrorIs(t, err, ErrNotSent)
		assert.NotErrorIs(t, err, context.DeadlineExceeded, "failed at once, not at the deadline")
		assert.Contains(t, err.Error(), "refused on purpose", "names the last dial error")
	}
	assert.Equal(t, int32(1), dials.Load(), "no attempt while backing off")
	require.NoError(t, ctx.Err())
}

// BreakStalled gives back the requests it fails, and those of callers
// waiting for a connection, to the caller to route anew: the Mux does not
// send them to its server again, even those allowed to retry.
func TestBreakStalledGivesBack(t *testing.T) {
	release := make(chan struct{})
	var stalls atomic.Int32
	hold := make(chan struct{}) // holds the handshake of new connections
	var conns atomic.Int32
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			if conns.Add(1) > 1 {
				<-hold
			}
			return helloReply
		case "GET":
			if args[1] == "stall" {
				stalls.Add(1)
				<-release
			}
			return "+" + args[1] + "\r\n"
		}
		return "+OK\r\n"
	})
	defer close(release)
	defer close(hold)
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, m.Connect(ctx))

	// A read allowed two retries, in flight on a connection that answers
	// nothing.
	s := newCountReq(2, "GET", "stall")
	done := make(chan error, 1)
	go func() { done <- m.Do(ctx, &s.Request) }()
	require.Eventually(t, func() bool { return stalls.Load() == 1 }, 5*time.Second, time.Millisecond)

	cause := errors.New("the slots went elsewhere")
	require.Equal(t, 1, m.BreakStalled(cause, 0))
	err := <-done
	require.ErrorIs(t, err, cause)
	assert.True(t, NotHere(err), "%v", err)
	var ce *ConnError
	assert.ErrorAs(t, err, &ce, "outcome unknown: it was written")
	assert.Equal(t, int32(1), stalls.Load(), "not sent again to the same server")

	// The Mux redials, and the handshake hangs: a caller waits for the
	// connection until the next BreakStalled gives it back, not sent.
	waiting := make(chan error, 1)
	w := newCountReq(2, "GET", "w")
	go func() { waiting <- m.Do(ctx, &w.Request) }()
	require.Eventually(t, func() bool { return conns.Load() == 2 }, 5*time.Second, time.Millisecond)
	select {
	case err := <-waiting:
		t.Fatalf("returned before the break: %v", err)
	default:
	}
	// The caller may not be waiting yet: break until it is given back
	// (each break gives back the callers waiting at that moment).
	for given := false; !given; {
		m.BreakStalled(cause, 0)
		select {
		case err = <-waiting:
			given = true
		case <-time.After(10 * time.Millisecond):
		}
	}
	require.ErrorIs(t, err, ErrNotSent)
	require.ErrorIs(t, err, cause)
	assert.True(t, NotHere(err))
	require.NoError(t, ctx.Err(), "given back before the deadline")
}
