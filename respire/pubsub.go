package respire

import (
	"context"
	"errors"
	"sync"

	"github.com/respire-go/respire/transport"
)

// Message is a pub/sub event: a message published to a channel, or, when
// its Gap is not nil, a marker saying that messages may have been lost at
// this point (see Gap).
type Message = transport.Message

// Gap reports messages that may have been lost: dropped because the
// subscription's buffer was full (GapOverflow, with the count), or missed
// while the connection was down (GapDisconnect, with the window). A
// subscription is never left to lose messages silently.
type Gap = transport.Gap

// GapReason says why messages may have been lost.
type GapReason = transport.GapReason

// The reasons of a Gap.
const (
	GapOverflow   = transport.GapOverflow
	GapDisconnect = transport.GapDisconnect
)

// ErrSubscriptionClosed is returned by a Subscription after its Close.
var ErrSubscriptionClosed = transport.ErrSubscriptionClosed

// SubscriptionOptions configure one Subscription.
type SubscriptionOptions struct {
	// Buffer is the number of messages the subscription holds for its
	// reader; what does not fit is dropped and counted in a Gap. Default
	// Options.PubSubBuffer.
	Buffer int
}

// Subscription receives messages from the channels, patterns and sharded
// channels it subscribes to, in the order the server sent them. All the
// subscriptions of a client share one connection, which is used for nothing
// else; a reader that falls behind holds up neither other subscriptions nor
// other commands, and is told what it lost with a Gap. After a reconnect
// the subscriptions are restored by themselves and a Gap (GapDisconnect)
// marks the interruption.
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
	s *transport.Subscription

	once sync.Once
	ch   chan Message
}

// NewSubscription returns a subscription to nothing yet; add channels with
// its Subscribe, PSubscribe and SSubscribe methods. opts may be nil.
func (c *Client) NewSubscription(opts *SubscriptionOptions) *Subscription {
	buf := c.opts.PubSubBuffer
	if opts != nil && opts.Buffer > 0 {
		buf = opts.Buffer
	}
	return &Subscription{s: c.hub.NewSubscription(buf)}
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
// later), published to with SPUBLISH.
func (c *Client) SSubscribe(ctx context.Context, channels ...string) (*Subscription, error) {
	return c.newSubscription(ctx, transport.KindShard, channels)
}

// ErrShardedPubSubCluster is the error of SSubscribe on a cluster client,
// which does not route sharded channels to their slots' owners yet.
var ErrShardedPubSubCluster = errors.New("respire: SSUBSCRIBE is not supported on a cluster client yet")

func (c *Client) newSubscription(ctx context.Context, kind transport.Kind, names []string) (*Subscription, error) {
	if kind == transport.KindShard && c.cl != nil {
		return nil, ErrShardedPubSubCluster
	}
	if len(names) == 0 {
		return nil, newArgError(kindCommand(kind), "channel", "at least one is required")
	}
	s := c.NewSubscription(nil)
	if err := s.s.Subscribe(ctx, kind, names...); err != nil {
		s.Close()
		return nil, c.wrapErr(kindCommand(kind), err)
	}
	return s, nil
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
	if err := s.s.Subscribe(ctx, kind, names...); err != nil {
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
	return s.s.Unsubscribe(transport.KindShard, channels...)
}

// Next returns the next message or gap marker, waiting until one arrives
// or ctx ends. After Close it fails with ErrSubscriptionClosed, after the
// client's Close with ErrClosed.
func (s *Subscription) Next(ctx context.Context) (Message, error) {
	return s.s.Next(ctx)
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
		case s.ch <- m:
		case <-s.s.Done():
			return
		}
	}
}

// Buffered returns the number of messages and gap markers waiting to be
// read.
func (s *Subscription) Buffered() int { return s.s.Buffered() }

// Close unsubscribes from everything and releases the subscription. It is
// safe to call more than once.
func (s *Subscription) Close() error { return s.s.Close() }
