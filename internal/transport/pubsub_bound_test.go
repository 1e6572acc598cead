package transport

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSubscriptionByteBound(t *testing.T) {
	h := NewPubSub(Config{})
	defer h.Close()
	msg := func(p string) Message { return Message{Channel: "c", Payload: p} }
	one := msg(strings.Repeat("x", 100))
	c := cost(&one)
	assert.Equal(t, int64(101)+MessageOverhead, c)
	s := h.NewBoundedSubscription(0, 3*c)
	for range 5 {
		s.deliver(one)
	}
	assert.Equal(t, 3*c, s.BufferedBytes(), "three fit, two are counted in a gap")
	assert.Equal(t, 4, s.Buffered())
	ctx := context.Background()
	for range 3 {
		m, err := s.Next(ctx)
		require.NoError(t, err)
		assert.Equal(t, one, m)
	}
	m, err := s.Next(ctx)
	require.NoError(t, err)
	require.NotNil(t, m.Gap)
	assert.Equal(t, int64(2), m.Gap.Dropped)
	assert.Zero(t, s.BufferedBytes())

	// A message larger than the whole bound is dropped, and reported.
	big := msg(strings.Repeat("y", int(3*c)))
	s.deliver(big)
	m, err = s.Next(ctx)
	require.NoError(t, err)
	require.NotNil(t, m.Gap)
	assert.Equal(t, int64(1), m.Gap.Dropped)

	// The default bound is in bytes only.
	d := h.NewSubscription(0)
	assert.Equal(t, int64(DefaultPubSubBytes), d.maxBytes)
	assert.Zero(t, d.limit)
}

func TestSubscriptionIntoSink(t *testing.T) {
	h1, h2 := NewPubSub(Config{}), NewPubSub(Config{})
	defer h1.Close()
	defer h2.Close()
	sink := h1.NewBoundedSubscription(2, 0)
	a, b := h1.NewSubscriptionInto(sink), h2.NewSubscriptionInto(sink)
	a.deliver(Message{Channel: "a", Payload: "1"})
	b.deliver(Message{Channel: "b", Payload: "2"})
	b.deliver(Message{Channel: "b", Payload: "3"}) // over the sink's bound of 2
	assert.Equal(t, 3, sink.Buffered())
	assert.Zero(t, a.Buffered())
	ctx := context.Background()
	for _, want := range []string{"1", "2"} {
		m, err := sink.Next(ctx)
		require.NoError(t, err)
		assert.Equal(t, want, m.Payload)
	}
	m, err := sink.Next(ctx)
	require.NoError(t, err)
	require.NotNil(t, m.Gap)

	require.NoError(t, a.Close())
	b.deliver(Message{Channel: "b", Payload: "4"})
	m, err = sink.Next(ctx)
	require.NoError(t, err, "closing a member leaves the sink open")
	assert.Equal(t, "4", m.Payload)
}

// shardPush writes an unsolicited sunsubscribe of channel, as a cluster
// node does when the channel's slot leaves it.
func (p *psPeer) shardPush(t *testing.T, channel string) {
	p.mu.Lock()
	c := p.last
	p.mu.Unlock()
	_, err := c.Write([]byte(">3\r\n$12\r\nsunsubscribe\r\n$" + itoa(len(channel)) + "\r\n" + channel + "\r\n:0\r\n"))
	require.NoError(t, err)
}

func (p *psPeer) spublish(t *testing.T, channel, payload string) {
	p.mu.Lock()
	c := p.last
	p.mu.Unlock()
	_, err := c.Write([]byte(">3\r\n$8\r\nsmessage\r\n$" + itoa(len(channel)) + "\r\n" + channel + "\r\n$" + itoa(len(payload)) + "\r\n" + payload + "\r\n"))
	require.NoError(t, err)
}

func TestPubSubShardDropped(t *testing.T) {
	ctx := context.Background()
	t.Run("no hook", func(t *testing.T) {
		p := newPSPeer(t)
		h := NewPubSub(Config{Addr: p.Addr()})
		defer h.Close()
		s := h.NewSubscription(0)
		require.NoError(t, s.Subscribe(ctx, KindShard, "x", "y"))
		p.shardPush(t, "x")
		m := nextT(t, s)
		require.NotNil(t, m.Gap)
		assert.Equal(t, GapMoved, m.Gap.Reason)
		assert.Equal(t, "x", m.Channel)
		assert.ErrorIs(t, m.Gap.Err, ErrShardDropped)
		// The connection stays in step and y still flows.
		p.spublish(t, "y", "1")
		assert.Equal(t, Message{Channel: "y", Payload: "1", Sharded: true}, nextT(t, s))
		h.mu.Lock()
		assert.NotContains(t, h.topics[KindShard], "x")
		h.mu.Unlock()
	})
	t.Run("hook and resubscribe", func(t *testing.T) {
		p := newPSPeer(t)
		h := NewPubSub(Config{Addr: p.Addr()})
		defer h.Close()
		type drop struct {
			s  *Subscription
			ch string
		}
		drops := make(chan drop, 1)
		var lost []string
		slots := []string{}
		h.SetHooks(PubSubHooks{
			ShardDropped: func(s *Subscription, ch string) { drops <- drop{s, ch} },
			Lost:         func(err error) { lost = append(lost, err.Error()) },
			ShardSlot:    func(ch string) uint16 { slots = append(slots, ch); return uint16(len(ch)) },
		})
		s := h.NewSubscription(0)
		require.NoError(t, s.Subscribe(ctx, KindShard, "x", "yy"))
		assert.Len(t, slots, 2, "one SSUBSCRIBE per slot")
		p.shardPush(t, "x")
		d := <-drops
		assert.Equal(t, s, d.s)
		assert.Equal(t, "x", d.ch)
		assert.Zero(t, s.Buffered(), "with a hook, the owner decides")

		// Resubscribed (here on the same node) after a gap.
		g := &Gap{Reason: GapMoved}
		require.NoError(t, s.Resubscribe(ctx, map[string]*Gap{"x": g}))
		m := nextT(t, s)
		require.Same(t, g, m.Gap)
		assert.Equal(t, "x", m.Channel)
		assert.True(t, m.Sharded)
		assert.False(t, m.Gap.Until.IsZero())
		p.spublish(t, "x", "after")
		assert.Equal(t, "after", nextT(t, s).Payload)

		// An already confirmed channel gets its gap at once.
		g2 := &Gap{Reason: GapMoved}
		require.NoError(t, s.Resubscribe(ctx, map[string]*Gap{"yy": g2}))
		m = nextT(t, s)
		require.Same(t, g2, m.Gap)
		assert.Empty(t, lost)
	})
}

func TestPubSubReconnect(t *testing.T) {
	p := newPSPeer(t)
	h := NewPubSub(Config{Addr: p.Addr()})
	defer h.Close()
	s := h.NewSubscription(0)
	require.NoError(t, s.Subscribe(context.Background(), KindChannel, "a"))
	<-p.subscribedCh
	cause := errors.New("new master")
	h.Reconnect(cause)
	assert.Equal(t, "a", <-p.subscribedCh, "subscribed again on a new connection")
	m := nextT(t, s)
	require.NotNil(t, m.Gap)
	assert.Equal(t, GapDisconnect, m.Gap.Reason)
	assert.ErrorIs(t, m.Gap.Err, cause)
	assert.Equal(t, int32(2), p.hellos.Load())
	p.publish(t, "a", "after")
	assert.Equal(t, "after", nextT(t, s).Payload)
	assert.Nil(t, s.Lost())
}
