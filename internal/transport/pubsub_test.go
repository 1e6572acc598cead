package transport

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// psPeer is a scripted RESP3 pub/sub server: it confirms subscriptions,
// refuses SSUBSCRIBE when told to, answers PING unless told not to, and
// publishes to its latest connection on demand.
type psPeer struct {
	*peer
	silentPing   atomic.Bool
	refuseShard  atomic.Bool
	hellos       atomic.Int32
	pings        atomic.Int32
	mu           sync.Mutex
	last         net.Conn
	subscribedCh chan string
}

func newPSPeer(t *testing.T) *psPeer {
	p := &psPeer{subscribedCh: make(chan string, 100)}
	p.peer = newPeer(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			p.hellos.Add(1)
			p.mu.Lock()
			p.last = p.peer.Last()
			p.mu.Unlock()
			return helloReply
		case "PING":
			p.pings.Add(1)
			if p.silentPing.Load() {
				return ""
			}
			return "+PONG\r\n"
		case "SSUBSCRIBE":
			if p.refuseShard.Load() {
				return "-ERR unknown command 'SSUBSCRIBE'\r\n"
			}
		}
		word := strings.ToLower(args[0])
		if strings.HasSuffix(word, "subscribe") {
			var b strings.Builder
			for i, ch := range args[1:] {
				b.WriteString(">3\r\n$" + itoa(len(word)) + "\r\n" + word + "\r\n$" + itoa(len(ch)) + "\r\n" + ch + "\r\n:" + itoa(i+1) + "\r\n")
				if !strings.HasPrefix(word, "un") && !strings.HasPrefix(word, "sun") && !strings.HasPrefix(word, "pun") {
					p.subscribedCh <- ch
				}
			}
			return b.String()
		}
		return "-ERR unexpected\r\n"
	})
	return p
}

func itoa(n int) string { return strconv.Itoa(n) }

// publish sends a message frame on the latest connection.
func (p *psPeer) publish(t *testing.T, channel, payload string) {
	p.mu.Lock()
	c := p.last
	p.mu.Unlock()
	_, err := c.Write([]byte(">3\r\n$7\r\nmessage\r\n$" + itoa(len(channel)) + "\r\n" + channel + "\r\n$" + itoa(len(payload)) + "\r\n" + payload + "\r\n"))
	require.NoError(t, err)
}

func nextT(t *testing.T, s *Subscription) Message {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := s.Next(ctx)
	require.NoError(t, err)
	return m
}

func TestPubSubStalledConnectionIsReplaced(t *testing.T) {
	p := newPSPeer(t)
	h := NewPubSub(Config{Addr: p.Addr(), HealthCheck: 10 * time.Millisecond,
		StallTimeout: 30 * time.Millisecond, MinBackoff: time.Millisecond})
	defer h.Close()
	s := h.NewSubscription(10)
	require.NoError(t, s.Subscribe(context.Background(), KindChannel, "a"))
	<-p.subscribedCh
	p.publish(t, "a", "before")
	assert.Equal(t, "before", nextT(t, s).Payload)

	// Idle pings are answered: the connection stays.
	require.Eventually(t, func() bool { return p.pings.Load() >= 3 }, 5*time.Second, time.Millisecond)
	assert.Equal(t, int32(1), p.hellos.Load())

	p.silentPing.Store(true)
	m := nextT(t, s)
	require.NotNil(t, m.Gap)
	assert.Equal(t, GapDisconnect, m.Gap.Reason)
	assert.ErrorIs(t, m.Gap.Err, ErrStalled)
	assert.Equal(t, int32(2), p.hellos.Load())
	assert.Equal(t, "a", <-p.subscribedCh, "subscribed again on the new connection")
	p.silentPing.Store(false)
	p.publish(t, "a", "after")
	assert.Equal(t, "after", nextT(t, s).Payload)
}

func TestPubSubRefusedSubscription(t *testing.T) {
	p := newPSPeer(t)
	p.refuseShard.Store(true)
	h := NewPubSub(Config{Addr: p.Addr()})
	defer h.Close()
	s := h.NewSubscription(10)
	err := s.Subscribe(context.Background(), KindShard, "x", "y")
	var se *ServerError
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "ERR", se.Prefix)
	h.mu.Lock()
	assert.Empty(t, h.topics[KindShard])
	assert.Empty(t, s.topics)
	h.mu.Unlock()

	// The connection stays in step: the next subscription works.
	require.NoError(t, s.Subscribe(context.Background(), KindChannel, "c"))
	<-p.subscribedCh
	p.publish(t, "c", "ok")
	assert.Equal(t, Message{Channel: "c", Payload: "ok"}, nextT(t, s))
}

func TestPubSubSubscribeWhileUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	h := NewPubSub(Config{Addr: addr, MinBackoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	s := h.NewSubscription(1)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err = s.Subscribe(ctx, KindChannel, "a")
	require.ErrorIs(t, err, ErrUnavailable)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	h.mu.Lock()
	assert.Empty(t, h.topics[KindChannel], "a failed Subscribe leaves nothing behind")
	h.mu.Unlock()
	require.NoError(t, h.Close())
	_, err = s.Next(context.Background())
	require.ErrorIs(t, err, ErrClosed)
	require.ErrorIs(t, s.Subscribe(context.Background(), KindChannel, "a"), ErrClosed)
}

func TestSubscriptionOverflowGaps(t *testing.T) {
	h := NewPubSub(Config{})
	defer h.Close()
	s := h.NewSubscription(2)
	msg := func(p string) Message { return Message{Channel: "c", Payload: p} }
	for _, p := range []string{"1", "2", "3", "4", "5"} {
		s.deliver(msg(p))
	}
	ctx := context.Background()
	get := func() Message {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		return m
	}
	assert.Equal(t, msg("1"), get())
	// Room for one: it goes after the gap, which stays where the loss was.
	s.deliver(msg("6"))
	s.deliver(msg("7"))
	assert.Equal(t, msg("2"), get())
	g := get()
	require.NotNil(t, g.Gap)
	assert.Equal(t, int64(3), g.Gap.Dropped)
	assert.Equal(t, GapOverflow, g.Gap.Reason)
	assert.Equal(t, msg("6"), get())
	g = get()
	require.NotNil(t, g.Gap)
	assert.Equal(t, int64(1), g.Gap.Dropped, "7 was dropped while 2 and 6 filled the buffer")
	assert.Zero(t, s.Buffered())

	// Next waits for a delivery, and gives up with its context.
	done := make(chan Message)
	go func() {
		m, _ := s.Next(ctx)
		done <- m
	}()
	s.deliver(msg("8"))
	assert.Equal(t, msg("8"), <-done)
	short, cancel := context.WithTimeout(ctx, time.Millisecond)
	defer cancel()
	_, err := s.Next(short)
	require.ErrorIs(t, err, context.DeadlineExceeded)

	require.NoError(t, s.Close())
	_, err = s.Next(ctx)
	require.True(t, errors.Is(err, ErrSubscriptionClosed))
	require.ErrorIs(t, s.Unsubscribe(KindChannel), ErrSubscriptionClosed)
}

func TestRingWraps(t *testing.T) {
	var q ring[int]
	next, want := 0, 0
	for round := 0; round < 50; round++ {
		for range round % 7 {
			q.push(next)
			next++
		}
		for range round % 5 {
			if v, ok := q.pop(); ok {
				require.Equal(t, want, v)
				want++
			}
		}
	}
	for v, ok := q.pop(); ok; v, ok = q.pop() {
		require.Equal(t, want, v)
		want++
	}
	assert.Equal(t, next, want)
}

func TestPubSubConnectionClosedWhenIdle(t *testing.T) {
	p := newPSPeer(t)
	h := NewPubSub(Config{Addr: p.Addr()})
	defer h.Close()
	ctx := context.Background()
	s1 := h.NewSubscription(10)
	s2 := h.NewSubscription(10)
	require.NoError(t, s1.Subscribe(ctx, KindChannel, "a"))
	require.NoError(t, s2.Subscribe(ctx, KindPattern, "b*"))
	require.NoError(t, s1.Close())
	require.NoError(t, s2.Unsubscribe(KindPattern))
	h.mu.Lock()
	assert.Nil(t, h.cur, "no subscription left: the connection is closed")
	h.mu.Unlock()

	// The next subscription dials again.
	require.NoError(t, s2.Subscribe(ctx, KindChannel, "c"))
	assert.Equal(t, int32(2), p.hellos.Load())
	for len(p.subscribedCh) > 0 {
		<-p.subscribedCh
	}
	p.publish(t, "c", "x")
	assert.Equal(t, "x", nextT(t, s2).Payload)
}
