package transport

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrSubscriptionClosed is returned by the methods of a Subscription after
// its Close.
var ErrSubscriptionClosed = errors.New("respire: subscription is closed")

// Message is one pub/sub event delivered to a Subscription: a message, or,
// when Gap is not nil, a marker saying that messages may have been lost at
// this point of the stream.
type Message struct {
	// Channel is the channel the message was published to.
	Channel string
	// Pattern is the pattern that matched Channel, for messages received
	// through a pattern subscription; empty otherwise.
	Pattern string
	// Payload is the published message.
	Payload string
	// Sharded is set for messages of a sharded channel (SSUBSCRIBE).
	Sharded bool
	// Gap, when not nil, makes this event a gap marker; the other fields
	// are empty.
	Gap *Gap
}

// GapReason says why messages may have been lost.
type GapReason uint8

const (
	// GapOverflow: the subscription's buffer was full, and Gap.Dropped
	// messages were dropped instead of being delivered.
	GapOverflow GapReason = iota + 1
	// GapDisconnect: the connection to the server was lost; messages
	// published between Gap.Since and Gap.Until were not received. The
	// subscriptions have been restored.
	GapDisconnect
)

func (r GapReason) String() string {
	switch r {
	case GapOverflow:
		return "overflow"
	case GapDisconnect:
		return "disconnect"
	}
	return "unknown"
}

// Gap describes messages that may have been lost.
type Gap struct {
	Reason GapReason
	// Dropped is the number of messages dropped (GapOverflow). For a
	// disconnect the number is unknown and Dropped is 0.
	Dropped int64
	// Since and Until bound the window: for an overflow, the first and the
	// last drop; for a disconnect, when the connection was found broken and
	// when the subscriptions were sent again on a new connection.
	Since, Until time.Time
	// Err is the cause of a disconnect.
	Err error
}

// Subscription receives the messages of the channels, patterns and sharded
// channels it subscribed to, in the order the server sent them, through a
// bounded buffer. A reader that falls behind loses messages, never holds up
// the connection: what does not fit is dropped and reported with a Gap.
type Subscription struct {
	hub   *PubSub
	limit int

	// Guarded by hub.mu.
	topics  map[topicKey]*topic
	lost    bool // the connection broke while subscribed
	lostAt  time.Time
	lostErr error
	removed bool

	mu      sync.Mutex
	q       ring[Message]
	msgs    int // messages, not gaps, in q
	waiting bool
	err     error // set when closed
	notify  chan struct{}
	done    chan struct{}
}

// NewSubscription returns a subscription with room for buffer messages
// (default 1024), subscribed to nothing yet.
func (h *PubSub) NewSubscription(buffer int) *Subscription {
	if buffer <= 0 {
		buffer = DefaultPubSubBuffer
	}
	return &Subscription{
		hub:    h,
		limit:  buffer,
		topics: make(map[topicKey]*topic),
		notify: make(chan struct{}, 1),
		done:   make(chan struct{}),
	}
}

// DefaultPubSubBuffer is the buffer of a subscription created with a size
// of zero or less.
const DefaultPubSubBuffer = 1024

// Next returns the next message or gap, waiting for one until ctx ends. It
// fails with ErrSubscriptionClosed after Close and with ErrClosed after
// the hub was closed.
func (s *Subscription) Next(ctx context.Context) (Message, error) {
	for {
		s.mu.Lock()
		if s.err != nil {
			err := s.err
			s.mu.Unlock()
			return Message{}, err
		}
		if m, ok := s.q.pop(); ok {
			if m.Gap == nil {
				s.msgs--
			}
			s.mu.Unlock()
			return m, nil
		}
		s.waiting = true
		s.mu.Unlock()
		select {
		case <-s.notify:
		case <-s.done:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Done is closed when the subscription is closed.
func (s *Subscription) Done() <-chan struct{} { return s.done }

// Buffered returns the number of messages and gaps waiting to be read.
func (s *Subscription) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.q.len()
}

// deliver queues m, or counts it in an overflow gap when the buffer is
// full. It never blocks on the reader.
func (s *Subscription) deliver(m Message) {
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if s.msgs >= s.limit {
		now := time.Now()
		if g := s.q.last(); g != nil && g.Gap != nil && g.Gap.Reason == GapOverflow {
			g.Gap.Dropped++
			g.Gap.Until = now
			defer s.gapOpened(*g.Gap, false)
			s.mu.Unlock()
			return
		}
		m = Message{Gap: &Gap{Reason: GapOverflow, Dropped: 1, Since: now, Until: now}}
		defer s.gapOpened(*m.Gap, true)
	} else {
		s.msgs++
	}
	s.q.push(m)
	s.wakeLocked()
	s.mu.Unlock()
}

// deliverGap queues a gap marker, which takes no room of the buffer.
func (s *Subscription) deliverGap(g *Gap) {
	s.mu.Lock()
	if s.err == nil {
		defer s.gapOpened(*g, true)
		s.q.push(Message{Gap: g})
		s.wakeLocked()
	}
	s.mu.Unlock()
}

func (s *Subscription) wakeLocked() {
	if s.waiting {
		s.waiting = false
		select {
		case s.notify <- struct{}{}:
		default:
		}
	}
}

// finish ends the subscription's delivery with err.
func (s *Subscription) finish(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return
	}
	s.err = err
	s.q = ring[Message]{}
	close(s.done)
}

// Subscribe adds channels (KindChannel), patterns (KindPattern) or sharded
// channels (KindShard) and waits until the server confirmed them, so that
// every message published after Subscribe returns is delivered. While the
// server cannot be reached it waits for the reconnect, until ctx ends. On
// error, none of the names given is added.
func (s *Subscription) Subscribe(ctx context.Context, kind Kind, names ...string) error {
	return s.hub.subscribe(ctx, s, kind, names)
}

// Unsubscribe removes names of the given kind, or all of that kind when
// none is given. Messages already buffered stay; no new ones arrive. The
// server is told when no other subscription wants a name any more.
func (s *Subscription) Unsubscribe(kind Kind, names ...string) error {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.removed {
		return ErrSubscriptionClosed
	}
	h.unsubscribeLocked(s, kind, names)
	return nil
}

// Close unsubscribes from everything and releases the subscription; Next
// then fails with ErrSubscriptionClosed. It is safe to call more than once.
func (s *Subscription) Close() error {
	h := s.hub
	h.mu.Lock()
	if !s.removed {
		s.removed = true
		for k := range kinds {
			h.unsubscribeLocked(s, Kind(k), nil)
		}
		delete(h.subs, s)
	}
	h.mu.Unlock()
	s.finish(ErrSubscriptionClosed)
	return nil
}
