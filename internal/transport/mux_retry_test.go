package transport

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countReq counts the replies its handler received.
type countReq struct {
	Request
	got      []string
	recycled int
}

func newCountReq(retries uint8, args ...string) *countReq {
	r := &countReq{}
	r.Init(r)
	r.SetPayload(resp.AppendCommand(nil, args...))
	r.Retries = retries
	return r
}

func (r *countReq) HandleReply(m resp.Msg) { r.got = append(r.got, m.Tree().Str) }
func (r *countReq) Recycle()               { r.recycled++ }

// cutAfterFirst is a peer that answers GET with the key, except that the
// first connection is closed when it reads the second GET: the first GET
// of a batch is answered, the rest are written and left without replies.
func cutAfterFirst(t *testing.T) (*peer, *atomic.Int32) {
	var gets atomic.Int32
	var p *peer
	p = newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "GET":
			if gets.Add(1) == 2 {
				p.CloseConns()
				return ""
			}
			return "+" + args[1] + "\r\n"
		}
		return "+OK\r\n"
	})
	return p, &gets
}

// A batch whose connection broke after its first reply: the unanswered
// tail, all allowed a retry, is sent again on a new connection; the
// answered request keeps its one reply.
func TestDoMultiRetriesUnansweredReads(t *testing.T) {
	p, _ := cutAfterFirst(t)
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, b, c := newCountReq(1, "GET", "a"), newCountReq(1, "GET", "b"), newCountReq(1, "GET", "c")
	require.NoError(t, m.DoMulti(ctx, []*Request{&a.Request, &b.Request, &c.Request}))
	assert.Equal(t, []string{"a"}, a.got, "the answered request is not sent again")
	assert.Equal(t, []string{"b"}, b.got)
	assert.Equal(t, []string{"c"}, c.got)
	assert.Zero(t, a.recycled+b.recycled+c.recycled, "on success the requests are the caller's")
}

// The same break with a request in the tail that allows no retry (a
// write): the batch fails with a ConnError, its outcome unknown, nothing
// is sent again, and every request is given back once.
func TestDoMultiNoRetryWithAWriteInTheTail(t *testing.T) {
	p, gets := cutAfterFirst(t)
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	a, b, w := newCountReq(1, "GET", "a"), newCountReq(1, "GET", "b"), newCountReq(0, "SET", "k", "v")
	err := m.DoMulti(ctx, []*Request{&a.Request, &b.Request, &w.Request})
	var ce *ConnError
	require.True(t, errors.As(err, &ce), "got %v", err)
	assert.False(t, errors.Is(err, ErrNotSent))
	assert.Equal(t, int32(2), gets.Load(), "nothing was sent again")
	assert.Equal(t, 1, a.recycled)
	assert.Equal(t, 1, b.recycled)
	assert.Equal(t, 1, w.recycled)
}

// BreakStalled fails the requests of a connection that has read nothing
// for the given time with requests in flight (a stopped node), and leaves
// a connection that answers alone.
func TestBreakStalled(t *testing.T) {
	release := make(chan struct{})
	p := newPeer(t, func(args []string) string {
		switch args[0] {
		case "HELLO":
			return helloReply
		case "GET":
			if args[1] == "stall" {
				<-release
			}
			return "+" + args[1] + "\r\n"
		}
		return "+OK\r\n"
	})
	defer close(release)
	m := NewMux(Config{Addr: p.Addr(), MinBackoff: time.Millisecond})
	defer m.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	// An answering connection is not broken, however long it was idle.
	r := newTestReq("GET", "a")
	require.NoError(t, m.Do(ctx, &r.Request))
	assert.Zero(t, m.BreakStalled(errors.New("x"), 0), "nothing in flight")

	cause := errors.New("stalled on purpose")
	const quiet = 100 * time.Millisecond
	s := newTestReq("GET", "stall")
	done := make(chan error, 1)
	sent := time.Now()
	go func() { done <- m.Do(ctx, &s.Request) }()
	// The request is in flight as soon as the connection counts it.
	require.Eventually(t, func() bool {
		n := int64(0)
		for _, sl := range m.slots {
			if c := sl.cur.Load(); c != nil {
				n += c.inflight.Load()
			}
		}
		return n == 1
	}, 5*time.Second, time.Millisecond)
	if time.Since(sent) < quiet/2 {
		assert.Zero(t, m.BreakStalled(cause, quiet), "a request just sent is not stalled")
	}
	// Once quiet has passed with nothing read, the connection is broken.
	require.Eventually(t, func() bool { return m.BreakStalled(cause, quiet) == 1 }, 5*time.Second, 5*time.Millisecond)
	err := <-done
	assert.ErrorIs(t, err, cause)
	assert.GreaterOrEqual(t, time.Since(sent), quiet, "not before quiet had passed")
}
