package transport

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// These tests use a scripted peer on loopback to produce what a real
// server will not: malformed bytes, unsolicited replies, pushes between
// replies. Behaviour against real servers is tested in the tests module.

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// peer is a scripted peer; see internal/testpeer.
type peer = testpeer.Peer

func newPeer(t *testing.T, reply func(args []string) string) *peer {
	return testpeer.Start(t, reply)
}

const helloReply = "%2\r\n+server\r\n+peer\r\n+proto\r\n:3\r\n"

// testReq is a Request whose handler records the reply.
type testReq struct {
	Request
	got      string
	recycled int
}

func newTestReq(args ...string) *testReq {
	r := &testReq{}
	r.Init(r)
	r.SetPayload(resp.AppendCommand(nil, args...))
	return r
}

func (r *testReq) HandleReply(m resp.Msg) { r.got = m.Tree().Str }
func (r *testReq) Recycle()               { r.recycled++ }

func TestPushFramesRoutedAside(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		// A push before every reply: it must not take the reply's place.
		return ">2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n" + "+" + args[1] + "\r\n"
	})
	var mu sync.Mutex
	var pushes int
	m := NewMux(Config{Addr: p.Addr(), OnPush: func(resp.Msg) { mu.Lock(); pushes++; mu.Unlock() }})
	defer m.Close()
	ctx := context.Background()
	for _, w := range []string{"a", "b", "c"} {
		r := newTestReq("ECHO", w)
		require.NoError(t, m.Do(ctx, &r.Request))
		assert.Equal(t, w, r.got)
	}
	mu.Lock()
	assert.Equal(t, 3, pushes)
	mu.Unlock()
}

func TestGarbageFailsCallersAndReconnects(t *testing.T) {
	var mu sync.Mutex
	bad := true
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		mu.Lock()
		defer mu.Unlock()
		if bad {
			bad = false
			return "$-7\r\n"
		}
		return "+ok\r\n"
	})
	for _, filler := range []bool{false, true} {
		mu.Lock()
		bad = true
		mu.Unlock()
		m := NewMux(Config{Addr: p.Addr(), Filler: filler, MinBackoff: time.Millisecond})
		r := newTestReq("GET", "k")
		err := m.Do(context.Background(), &r.Request)
		require.ErrorIs(t, err, resp.ErrProtocol)
		var ce *ConnError
		require.ErrorAs(t, err, &ce)
		assert.Equal(t, 1, r.recycled, "a failed request is given back once")

		r2 := newTestReq("GET", "k")
		require.NoError(t, m.Do(context.Background(), &r2.Request))
		assert.Equal(t, "ok", r2.got)
		require.NoError(t, m.Close())
	}
}

func TestUnsolicitedReplyIsProtocolError(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "+one\r\n+two\r\n" // two replies to one command
	})
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond, FailFast: true})
	defer m.Close()
	r := newTestReq("PING")
	require.NoError(t, m.Do(context.Background(), &r.Request))
	// The extra reply breaks the connection; the next call either fails
	// on the broken connection or succeeds on a new one, never gets "two".
	r2 := newTestReq("PING")
	if err := m.Do(context.Background(), &r2.Request); err == nil {
		assert.Equal(t, "one", r2.got)
	}
}

func TestAbandonedRequestRecycledAfterLateReply(t *testing.T) {
	release := make(chan struct{})
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		if args[0] == "SLOW" {
			<-release
		}
		return "+" + args[0] + "\r\n"
	})
	m := NewMux(Config{Addr: p.Addr()})
	defer m.Close()
	require.NoError(t, m.Connect(context.Background()))
	slow := newTestReq("SLOW")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- m.Do(ctx, &slow.Request) }()
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	close(release)
	fast := newTestReq("FAST")
	require.NoError(t, m.Do(context.Background(), &fast.Request))
	assert.Equal(t, "FAST", fast.got)
	// The abandoned request was recycled (immediately, if it was never
	// sent, or when its late reply was read, before FAST's).
	assert.Equal(t, 1, slow.recycled)
	assert.Empty(t, slow.got)
}

func TestDialFailureFailFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	m := NewMux(Config{Addr: addr, FailFast: true, MinBackoff: time.Millisecond})
	defer m.Close()
	r := newTestReq("PING")
	err = m.Do(context.Background(), &r.Request)
	require.ErrorIs(t, err, ErrUnavailable)
	assert.Equal(t, 1, r.recycled)
	err = m.Connect(context.Background())
	require.Error(t, err)
}

func TestHelloRefusedFallsBack(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return "-ERR unknown command 'HELLO'\r\n"
		case "AUTH":
			if args[1] != "pw" {
				return "-WRONGPASS invalid password\r\n"
			}
			return "+OK\r\n"
		}
		return "+" + args[0] + "\r\n"
	})
	infos := make(chan ConnInfo, 1)
	m := NewMux(Config{Addr: p.Addr(), Password: "pw", OnConnect: func(ci ConnInfo) { infos <- ci }})
	require.NoError(t, m.Connect(context.Background()))
	assert.Equal(t, 2, (<-infos).Protocol)
	m.Close()

	m = NewMux(Config{Addr: p.Addr(), Password: "bad"})
	err := m.Connect(context.Background())
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "WRONGPASS", se.Prefix)
	m.Close()

	m = NewMux(Config{Addr: p.Addr(), Protocol: 3})
	err = m.Connect(context.Background())
	var he *HandshakeError
	require.True(t, errors.As(err, &he) && he.Step == "HELLO", "%v", err)
	m.Close()
}

func TestFifoWraps(t *testing.T) {
	var q fifo
	var rs [200]Request
	next := 0
	for round := 0; round < 5; round++ {
		for i := 0; i < 70; i++ {
			q.push(&rs[(round*70+i)%200])
		}
		for i := 0; i < 70; i++ {
			require.Same(t, &rs[next%200], q.pop())
			next++
		}
	}
	assert.Nil(t, q.pop())
}

// TestDirectReadStress mixes sequential and concurrent callers, some of
// whose contexts end early, over both read modes: every answered caller
// gets its own reply and nobody hangs.
func TestDirectReadStress(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "$" + strconv.Itoa(len(args[1])) + "\r\n" + args[1] + "\r\n"
	})
	for _, noDirect := range []bool{false, true} {
		m := NewMux(Config{Addr: p.Addr(), NoDirectRead: noDirect})
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 300 {
					want := strconv.Itoa(g) + ":" + strconv.Itoa(i)
					ctx := context.Background()
					var cancel context.CancelFunc = func() {}
					switch i % 7 {
					case 3:
						ctx, cancel = context.WithTimeout(ctx, time.Duration(i%5)*time.Microsecond)
					case 5:
						ctx, cancel = context.WithCancel(ctx)
					}
					r := newTestReq("ECHO", want)
					err := m.Do(ctx, &r.Request)
					cancel()
					if err != nil {
						if !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
							t.Errorf("unexpected error %v", err)
							return
						}
						continue
					}
					if r.got != want {
						t.Errorf("got %q, want %q", r.got, want)
						return
					}
				}
			}()
		}
		wg.Wait()
		// Batches read directly too.
		rs := []*Request{}
		var trs []*testReq
		for i := range 50 {
			tr := newTestReq("ECHO", strconv.Itoa(i))
			trs = append(trs, tr)
			rs = append(rs, &tr.Request)
		}
		require.NoError(t, m.DoMulti(context.Background(), rs))
		for i, tr := range trs {
			require.Equal(t, strconv.Itoa(i), tr.got)
		}
		require.NoError(t, m.Close())
	}
}

// A pub/sub push on a multiplexed connection means a command changed the
// connection's state behind the FIFO's back (RESP3 answers UNSUBSCRIBE on
// a connection without subscriptions with a push, so its request would
// take the next caller's reply). The connection must be closed and its
// callers failed, never answered with a reply that is not theirs.
func TestPubSubPushBreaksConnection(t *testing.T) {
	for _, kind := range []string{"unsubscribe", "subscribe", "message", "smessage", "psubscribe"} {
		t.Run(kind, func(t *testing.T) {
			p := newPeer(t, func(args []string) string {
				switch args[0] {
				case "HELLO":
					return helloReply
				case "UNSUB":
					return ">3\r\n$" + strconv.Itoa(len(kind)) + "\r\n" + kind + "\r\n_\r\n:0\r\n"
				}
				return "+" + args[1] + "\r\n"
			})
			m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond, NoDirectRead: true})
			defer m.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			// Queue both in one write so that the GET is pending behind the
			// push's request when the push arrives.
			un, get := newTestReq("UNSUB"), newTestReq("ECHO", "mine")
			err := m.DoMulti(ctx, []*Request{&un.Request, &get.Request})
			require.Error(t, err)
			assert.ErrorIs(t, err, resp.ErrProtocol)
			assert.Empty(t, get.got, "no reply may be handed to the GET")
			// The Mux reconnects and serves the next caller its own reply.
			r := newTestReq("ECHO", "after")
			require.NoError(t, m.Do(ctx, &r.Request))
			assert.Equal(t, "after", r.got)
		})
	}
}

// TestBreakExcept: the connections to the address kept stay (a Sentinel
// client keeps those dialed to the new master when it breaks the old
// one's), the others break and are dialed again.
func TestBreakExcept(t *testing.T) {
	p := newPeer(t, func(args []string) string {
		if args[0] == "HELLO" {
			return helloReply
		}
		return "+ok\r\n"
	})
	m := NewMux(Config{Addr: "sentinel master m", Resolve: p.Addr, MinBackoff: time.Millisecond})
	defer m.Close()
	ctx := context.Background()
	ping := func() {
		t.Helper()
		r := newTestReq("PING")
		require.NoError(t, m.Do(ctx, &r.Request))
	}
	ping()
	first := p.Last()
	m.BreakExcept(errors.New("moved"), p.Addr())
	ping()
	assert.Same(t, first, p.Last(), "the connection to the address kept stays")
	m.BreakExcept(errors.New("moved"), "127.0.0.1:1")
	ping()
	assert.NotSame(t, first, p.Last(), "a connection elsewhere is broken and dialed again")
}
