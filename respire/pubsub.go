package respire

import (
	"context"
	"sync"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// ErrSubscriptionClosed is returned by a Subscription after its Close.
var ErrSubscriptionClosed = transport.ErrSubscriptionClosed

// SubscriptionOptions configure one Subscription.
type SubscriptionOptions struct {
	// Buffer, when set, bounds the number of messages the subscription
	// holds for its reader; what does not fit is dropped and counted in a
	// Gap. Default Options.PubSubBuffer (no count bound).
	Buffer int
	// BufferBytes bounds the memory of the messages the subscription holds
	// for its reader (see Options.PubSubBufferBytes). Default
	// Options.PubSubBufferBytes (8 MiB).
	BufferBytes int
}

// Subscription receives messages from the channels, patterns and sharded
// channels it subscribes to, in the order the server sent them. All the
// subscriptions of a client share one connection, which is used for nothing
// else (on a cluster, sharded channels use one more per node that owns
// some of them); a reader that falls behind holds up neither other
// subscriptions nor other commands: its buffer, bounded in bytes
// (Options.PubSubBufferBytes), absorbs bursts, and what does not fit is
// dropped from this subscription alone and reported with a Gap
// (GapOverflow). After a reconnect the subscriptions are restored by
// themselves and a Gap (GapDisconnect) marks the interruption; on a
// cluster, a sharded channel whose slot moves is subscribed again on its
// new owner, after a Gap (GapMoved) naming it.
//
//	sub, err := client.Subscribe(ctx, "news")
//	if err != nil { ... }
//	defer sub.Close()
//	for {
//		m, err := sub.Next(ctx)
//		if err != nil { return err }
//		if m.Gap != nil { resync(); continue }
//		handle(m.Channel, m.Payload)
//	}
//
// A Subscription is safe for concurrent use.
type Subscription struct {
	s      *transport.Subscription
	shards *topology.ShardSet // sharded channels on a cluster; nil otherwise

	once sync.Once
	ch   chan Message
}

// NewSubscription returns a subscription to nothing yet; add channels with
// its Subscribe, PSubscribe and SSubscribe methods. opts may be nil.
func (c *Client) NewSubscription(opts *SubscriptionOptions) *Subscription {
	buf, bytes := c.opts.PubSubBuffer, c.opts.PubSubBufferBytes
	if opts != nil && opts.Buffer > 0 {
		buf = opts.Buffer
	}
	if opts != nil && opts.BufferBytes > 0 {
		bytes = opts.BufferBytes
	}
	s := &Subscription{s: c.hub.NewBoundedSubscription(buf, int64(bytes))}
	s.shards = c.be.shardSet(s.s)
	return s
}

// Subscribe subscribes to channels (SUBSCRIBE) and returns once the server
// confirmed them: every message published afterwards is delivered.
func (c *Client) Subscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.newSubscription(ctx, transport.KindChannel, channels)
}

// PSubscribe subscribes to glob-style patterns (PSUBSCRIBE); messages carry
// the pattern that matched.
func (c *Client) PSubscribe(ctx context.Context, patterns ...string) (*Subscription, error) {
	return c.newSubscription(ctx, transport.KindPattern, patterns)
}

// SSubscribe subscribes to sharded channels (SSUBSCRIBE, Redis 7 and
// later), published to with SPUBLISH. On a cluster each channel is
// subscribed on the primary that owns its slot, and follows the slot when
// it moves (see GapMoved).
func (c *Client) SSubscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.newSubscription(ctx, transport.KindShard, channels)
}

func (c *Client) newSubscription(ctx context.Context, kind transport.Kind, names []string) (*Subscription, error) {
	if len(names) == 0 {
		return nil, newArgError(kindCommand(kind), "channel", "at least one is required")
	}
	s := c.NewSubscription(nil)
	if err := s.subscribe(ctx, kind, names); err != nil {
		s.Close()
		return nil, c.wrapErr(ctx, kindCommand(kind), err)
	}
	return s, nil
}

// subscribe sends sharded channels of a cluster client to their owners,
// everything else to the client's hub.
func (s *Subscription) subscribe(ctx context.Context, kind transport.Kind, names []string) error {
	if kind == transport.KindShard && s.shards != nil {
		return s.shards.Subscribe(ctx, names)
	}
	return s.s.Subscribe(ctx, kind, names...)
}

func kindCommand(k transport.Kind) string { return k.String() }

// Subscribe adds channels and waits for the server's confirmation.
func (s *Subscription) Subscribe(ctx context.Context, channels ...string) error {
	return s.add(ctx, transport.KindChannel, channels)
}

// PSubscribe adds patterns and waits for the server's confirmation.
func (s *Subscription) PSubscribe(ctx context.Context, patterns ...string) error {
	return s.add(ctx, transport.KindPattern, patterns)
}

// SSubscribe adds sharded channels and waits for the server's confirmation.
func (s *Subscription) SSubscribe(ctx context.Context, channels ...string) error {
	return s.add(ctx, transport.KindShard, channels)
}

func (s *Subscription) add(ctx context.Context, kind transport.Kind, names []string) error {
	if err := s.subscribe(ctx, kind, names); err != nil {
		return &CommandError{Command: kindCommand(kind), Err: err}
	}
	return nil
}

// Unsubscribe removes channels, or every channel when none is given.
// Messages already buffered are still delivered; no new ones arrive.
func (s *Subscription) Unsubscribe(channels ...string) error {
	return s.s.Unsubscribe(transport.KindChannel, channels...)
}

// PUnsubscribe removes patterns, or every pattern when none is given.
func (s *Subscription) PUnsubscribe(patterns ...string) error {
	return s.s.Unsubscribe(transport.KindPattern, patterns...)
}

// SUnsubscribe removes sharded channels, or all of them when none is given.
func (s *Subscription) SUnsubscribe(channels ...string) error {
	if s.shards != nil {
		return s.shards.Unsubscribe(channels)
	}
	return s.s.Unsubscribe(transport.KindShard, channels...)
}

// Next returns the next message or gap marker, waiting until one arrives
// or ctx ends. After Close it fails with ErrSubscriptionClosed, after the
// client's Close with ErrClosed.
func (s *Subscription) Next(ctx context.Context) (Message, error) {
	m, err := s.s.Next(ctx)
	if err != nil {
		return Message{}, err
	}
	return publicMessage(&m), nil
}

// Messages returns a channel that delivers what Next would, for use in a
// select; it is closed when the subscription or the client is closed. Use
// either Messages or Next, not both.
func (s *Subscription) Messages() <-chan Message {
	s.once.Do(func() {
		s.ch = make(chan Message)
		go s.pump()
	})
	return s.ch
}

func (s *Subscription) pump() {
	defer close(s.ch)
	ctx := context.Background()
	for {
		m, err := s.s.Next(ctx)
		if err != nil {
			return
		}
		select {
		case s.ch <- publicMessage(&m):
		case <-s.s.Done():
			return
		}
	}
}

// Buffered returns the number of messages and gap markers waiting to be
// read.
func (s *Subscription) Buffered() int { return s.s.Buffered() }

// BufferedBytes returns what the messages waiting to be read count against
// the subscription's byte bound (BufferBytes).
func (s *Subscription) BufferedBytes() int64 { return s.s.BufferedBytes() }

// Close unsubscribes from everything and releases the subscription. It is
// safe to call more than once.
func (s *Subscription) Close() error {
	if s.shards != nil {
		s.shards.Close()
	}
	return s.s.Close()
}
