package respire

import (
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// Message is a pub/sub event delivered by a Subscription: a message
// published to a channel, or, when its Gap is not nil, a marker saying
// that messages may have been lost at this point of the stream (see Gap).
type Message struct {
	// Channel is the channel the message was published to.
	Channel string
	// Pattern is the pattern that matched Channel, for a message received
	// through a pattern subscription (PSubscribe); "" otherwise.
	Pattern string
	// Payload is the published message.
	Payload string
	// Sharded is set for a message of a sharded channel (SSubscribe).
	Sharded bool
	// Gap, when not nil, makes this event a gap marker. Channel (and
	// Sharded) name the channel of a gap that concerns one channel only
	// (GapMoved); Pattern and Payload are empty.
	Gap *Gap
}

// Gap reports messages that may have been lost: dropped because the
// subscription's buffer was full (GapOverflow, with the count), missed
// while the connection was down (GapDisconnect, with the window), or
// missed while a sharded channel moved to another node (GapMoved). A
// subscription is never left to lose messages silently.
type Gap struct {
	// Reason says why messages may have been lost.
	Reason GapReason
	// Dropped is the number of messages dropped (GapOverflow); 0 where the
	// number is unknown (GapDisconnect, GapMoved).
	Dropped int64
	// Since and Until bound the window: for an overflow, the first and the
	// last drop; for a disconnect, when the connection was found broken
	// and when the subscriptions were sent again on a new connection; for
	// a move, when the channel was found moved and when it was subscribed
	// again on its new owner.
	Since, Until time.Time
	// Err is the cause of a disconnect or a move, nil for an overflow.
	Err error
}

// GapReason says why messages may have been lost.
type GapReason uint8

// The reasons of a Gap.
const (
	// GapOverflow: the subscription's buffer was full, and Gap.Dropped
	// messages were dropped instead of being delivered.
	GapOverflow GapReason = iota + 1
	// GapDisconnect: the connection to the server was lost; messages
	// published between Gap.Since and Gap.Until were not received. The
	// subscriptions have been restored. On a cluster they may have been
	// restored on another node, which receives each message over the
	// cluster bus at its own pace: a message delivered shortly before the
	// marker may be delivered again after it.
	GapDisconnect
	// GapMoved marks, on a cluster, a sharded channel (Message.Channel)
	// that moved to another node (slot migration, failover) and was
	// subscribed again there; messages published between Gap.Since and
	// Gap.Until were not received.
	GapMoved
)

// String returns "overflow", "disconnect" or "moved".
func (r GapReason) String() string { return transport.GapReason(r).String() }

// publicMessage converts a message of the transport, whose GapReasons have
// the same values (TestGapReason). A message is copied
// as it is (its strings are shared, not copied); only a gap marker, which
// is rare, allocates its Gap.
func publicMessage(m *transport.Message) Message {
	pm := Message{Channel: m.Channel, Pattern: m.Pattern, Payload: m.Payload, Sharded: m.Sharded}
	if g := m.Gap; g != nil {
		pm.Gap = &Gap{Reason: GapReason(g.Reason), Dropped: g.Dropped, Since: g.Since, Until: g.Until, Err: g.Err}
	}
	return pm
}
