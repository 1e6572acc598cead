package transport

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A wrong password is permanent: a caller without a deadline gets it at
// once, not an endless wait, and it does not look like unavailability. The
// Mux keeps trying in the background and recovers once the server accepts.
func TestPermanentHandshakeErrorReturnedAtOnce(t *testing.T) {
	var accept atomic.Bool
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			if !accept.Load() {
				return "-WRONGPASS invalid username-password pair or user is disabled.\r\n"
			}
			return helloReply
		}
		return "+" + args[1] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), Password: "bad", MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	defer m.Close()
	for i := 0; i < 3; i++ {
		r := newTestReq("ECHO", "x")
		err := m.Do(context.Background(), &r.Request)
		var he *HandshakeError
		require.ErrorAs(t, err, &he)
		assert.True(t, he.Permanent())
		var se *ServerError
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "WRONGPASS", se.Prefix)
		assert.NotErrorIs(t, err, ErrUnavailable)
		assert.ErrorIs(t, err, ErrNotSent)
		assert.Equal(t, 1, strings.Count(err.Error(), "respire:"), "%q", err)
	}
	accept.Store(true)
	require.Eventually(t, func() bool {
		r := newTestReq("ECHO", "back")
		return m.Do(context.Background(), &r.Request) == nil && r.got == "back"
	}, 5*time.Second, time.Millisecond)
}

// RESP3 required and refused is permanent; a server that is full is not.
func TestHandshakePermanence(t *testing.T) {
	cases := []struct {
		step, reply string
		permanent   bool
	}{
		{"HELLO", "NOPROTO unsupported protocol version", true},
		{"HELLO", "ERR unknown command 'HELLO'", true},
		{"HELLO", "ERR max number of clients reached", false},
		{"HELLO", "LOADING Redis is loading the dataset in memory", false},
		{"HELLO", "NOAUTH HELLO must be called with the client already authenticated", true},
		{"AUTH", "ERR invalid password", true},
		{"SELECT", "ERR DB index is out of range", true},
		{"CLIENT SETNAME", "ERR Client names cannot contain spaces", false},
		{"HELLO", "NOPERM this user has no permissions to run the 'hello' command", true},
	}
	for _, c := range cases {
		he := &HandshakeError{Step: c.step, Err: NewServerError(c.reply)}
		assert.Equal(t, c.permanent, he.Permanent(), "%s: %s", c.step, c.reply)
	}
	assert.True(t, (&HandshakeError{Step: "CLIENT TRACKING", Err: ErrTrackingNeedsRESP3}).Permanent())
	assert.False(t, (&HandshakeError{Step: "HELLO", Err: errors.New("i/o timeout")}).Permanent())
}

// A refused port stays transient, but a Mux that never connected does not
// keep a caller without a deadline waiting: it returns after one attempt.
func TestNeverConnectedDoesNotHang(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	m := NewMux(Config{Addr: addr, MinBackoff: time.Millisecond})
	defer m.Close()
	r := newTestReq("PING")
	err = m.Do(context.Background(), &r.Request)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorIs(t, err, ErrNotSent)
	assert.Equal(t, 1, strings.Count(err.Error(), "respire:"), "%q", err)

	// With a deadline the caller waits for a reconnect within it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	start := time.Now()
	r = newTestReq("PING")
	err = m.Do(ctx, &r.Request)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.GreaterOrEqual(t, time.Since(start), 25*time.Millisecond)
}

// A request whose connection broke before its bytes were written fails
// with ErrNotSent (or is sent again); one that was written and then lost
// its connection is outcome-unknown and never resent unless Retries says so.
func TestNotSentVersusUnknown(t *testing.T) {
	var calls atomic.Int32
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		calls.Add(1)
		if args[0] == "DIE" {
			return "!!garbage\r\n"
		}
		return "+" + args[1] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond, NoDirectRead: true})
	defer m.Close()
	ctx := context.Background()
	r := newTestReq("DIE", "x")
	err := m.Do(ctx, &r.Request)
	var ce *ConnError
	require.ErrorAs(t, err, &ce)
	assert.NotErrorIs(t, err, ErrNotSent, "DIE was written: outcome unknown")
	assert.Equal(t, int32(1), calls.Load(), "not sent again")

	// With Retries, the same loss is retried on the next connection.
	n := calls.Load()
	r = newTestReq("DIE", "y")
	r.Retries = 2
	err = m.Do(ctx, &r.Request)
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, n+3, calls.Load(), "sent once and retried twice")
}

// A connection to a cluster node that answers with another node id is
// refused: another node or cluster now answers at that address.
func TestNodeIDChecked(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		switch {
		case args[0] == "HELLO":
			return helloReply
		case args[0] == "CLUSTER" && args[1] == "MYID":
			return "$5\r\nother\r\n"
		}
		return "+" + args[1] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr(), NodeID: "expected", MinBackoff: time.Millisecond})
	defer m.Close()
	r := newTestReq("ECHO", "x")
	err := m.Do(context.Background(), &r.Request)
	require.ErrorIs(t, err, ErrWrongNode)
	var he *HandshakeError
	require.ErrorAs(t, err, &he)
	assert.True(t, he.Permanent())
	assert.Empty(t, r.got)

	m2 := NewMux(Config{Addr: p.Addr(), NodeID: "other"})
	defer m2.Close()
	r = newTestReq("ECHO", "ok")
	require.NoError(t, m2.Do(context.Background(), &r.Request))
	assert.Equal(t, "ok", r.got)
}

// A batch whose connection breaks gives each request back exactly once:
// a request recycled twice would be handed to two callers at once.
func TestDoMultiRecyclesOnce(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "DIE":
			return "!!garbage\r\n"
		}
		return "+" + args[1] + "\r\n"
	})
	for _, direct := range []bool{true, false} {
		m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond, NoDirectRead: !direct})
		a, die, b := newTestReq("ECHO", "a"), newTestReq("DIE", "x"), newTestReq("ECHO", "b")
		err := m.DoMulti(context.Background(), []*Request{&a.Request, &die.Request, &b.Request})
		require.Error(t, err)
		assert.Equal(t, 1, a.recycled, "direct=%v", direct)
		assert.Equal(t, 1, die.recycled, "direct=%v", direct)
		assert.Equal(t, 1, b.recycled, "direct=%v", direct)
		m.Close()
	}
}
