package transport

import (
	"context"
	"errors"
	"sync"
	"time"
	"unsafe"
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
	// Gap, when not nil, makes this event a gap marker. Channel (and
	// Sharded) name the channel of a gap that concerns one channel only
	// (GapMoved); the other fields are empty.
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
	// GapMoved: a sharded channel (Message.Channel) left the node it was
	// subscribed on (its slot migrated, or the node failed and another took
	// its slots) and was subscribed again on the new owner; messages
	// published between Gap.Since and Gap.Until were not received.
	GapMoved
)

func (r GapReason) String() string {
	switch r {
	case GapOverflow:
		return "overflow"
	case GapDisconnect:
		return "disconnect"
	case GapMoved:
		return "moved"
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
// buffer bounded in bytes (and, optionally, in messages). A reader that
// falls behind loses its own messages, never holds up the connection or
// the other subscriptions on it: what does not fit is dropped and
// reported with a Gap.
//
// The memory a subscription holds is at most its byte bound: each
// buffered message counts the bytes of its strings plus MessageOverhead
// (its slot in the queue, which may be up to twice as long as the
// messages it holds).
type Subscription struct {
	hub      *PubSub
	limit    int   // messages; 0: no bound
	maxBytes int64 // bytes
	// sink, when set, receives what is delivered to this subscription
	// (see NewSubscriptionInto); its queue and bounds apply.
	sink *Subscription

	// Guarded by hub.mu.
	topics  map[topicKey]*topic
	owed    map[topicKey]*Gap // delivered when the topic is confirmed
	lost    bool              // the connection broke while subscribed
	lostAt  time.Time
	lostErr error
	removed bool

	mu      sync.Mutex
	q       ring[Message]
	msgs    int   // messages, not gaps, in q
	bytes   int64 // cost of the messages in q
	waiting bool
	err     error // set when closed
	notify  chan struct{}
	done    chan struct{}
}

// NewSubscription returns a subscription, subscribed to nothing yet, that
// holds at most buffer messages (no count bound when buffer is zero or
// less) and DefaultPubSubBytes bytes for its reader.
func (h *PubSub) NewSubscription(buffer int) *Subscription {
	return h.NewBoundedSubscription(buffer, 0)
}

// NewBoundedSubscription returns a subscription, subscribed to nothing yet,
// that holds at most maxMsgs messages (no count bound when zero or less)
// and maxBytes bytes (DefaultPubSubBytes when zero or less) for its
// reader.
func (h *PubSub) NewBoundedSubscription(maxMsgs int, maxBytes int64) *Subscription {
	if maxMsgs < 0 {
		maxMsgs = 0
	}
	if maxBytes <= 0 {
		maxBytes = DefaultPubSubBytes
	}
	return &Subscription{
		hub:      h,
		limit:    maxMsgs,
		maxBytes: maxBytes,
		topics:   make(map[topicKey]*topic),
		notify:   make(chan struct{}, 1),
		done:     make(chan struct{}),
	}
}

// NewSubscriptionInto returns a subscription of h, subscribed to nothing
// yet, whose messages and gaps are queued in sink (a subscription of any
// hub), under sink's bounds: one reader receives from several hubs, as a
// cluster client's subscription does from the nodes that own its sharded
// channels. Read from sink, not from the returned subscription; closing it
// leaves sink open.
func (h *PubSub) NewSubscriptionInto(sink *Subscription) *Subscription {
	s := h.NewBoundedSubscription(0, 0)
	s.sink = sink
	return s
}

// DefaultPubSubBuffer was the message bound of a subscription created with
// a size of zero or less. Subscriptions are now bounded in bytes
// (DefaultPubSubBytes) and have no message bound unless one is given.
const DefaultPubSubBuffer = 1024

// DefaultPubSubBytes is the byte bound of a subscription given none: 8 MiB,
// the soft limit Redis applies to the output buffer of its pub/sub clients
// by default (client-output-buffer-limit pubsub 32mb 8mb 60).
const DefaultPubSubBytes = 8 << 20

// MessageOverhead is what a buffered message counts beyond the bytes of
// its strings: its slot in the subscription's queue, which grows by
// doubling and so may be up to twice as long as what it holds.
const MessageOverhead = 2 * int64(unsafe.Sizeof(Message{}))

func cost(m *Message) int64 {
	return int64(len(m.Channel)+len(m.Pattern)+len(m.Payload)) + MessageOverhead
}

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
				s.bytes -= cost(&m)
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

// BufferedBytes returns what the buffered messages count against the
// subscription's byte bound (see MessageOverhead).
func (s *Subscription) BufferedBytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bytes
}

// deliver queues m, or counts it in an overflow gap when the buffer is
// full. It never blocks on the reader.
func (s *Subscription) deliver(m Message) {
	if s.sink != nil {
		s = s.sink
	}
	c := cost(&m)
	s.mu.Lock()
	if s.err != nil {
		s.mu.Unlock()
		return
	}
	if s.limit > 0 && s.msgs >= s.limit || s.bytes+c > s.maxBytes {
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
		s.bytes += c
	}
	s.q.push(m)
	s.wakeLocked()
	s.mu.Unlock()
}

// deliverGap queues a gap marker, which takes no room of the buffer.
func (s *Subscription) deliverGap(g *Gap) { s.deliverMarker(Message{Gap: g}) }

func (s *Subscription) deliverMarker(m Message) {
	if s.sink != nil {
		s = s.sink
	}
	s.mu.Lock()
	if s.err == nil {
		if m.Gap != nil {
			defer s.gapOpened(*m.Gap, true)
		}
		s.q.push(m)
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
	s.msgs, s.bytes = 0, 0
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

// Resubscribe subscribes to the sharded channels that are the keys of
// gaps, like Subscribe, and queues each channel's gap marker (Reason
// GapMoved, Channel set, Until filled in) when the server confirms it,
// before any message of it: for a channel moved here from another node.
// On error nothing is added and no gap is queued.
func (s *Subscription) Resubscribe(ctx context.Context, gaps map[string]*Gap) error {
	names := make([]string, 0, len(gaps))
	for n := range gaps {
		names = append(names, n)
	}
	return s.hub.subscribeOwed(ctx, s, KindShard, names, gaps)
}

// Lost returns, when the connection of s's hub broke while s was
// subscribed and its subscriptions have not been restored since, a
// GapDisconnect gap whose Since and Err say when and why; nil otherwise.
func (s *Subscription) Lost() *Gap {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	if !s.lost {
		return nil
	}
	return &Gap{Reason: GapDisconnect, Since: s.lostAt, Err: s.lostErr}
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
