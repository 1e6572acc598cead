package respire

import (
	"context"
	"strings"
	"time"
)

// Tracing. Options.Tracer holds one value that implements any of the small
// interfaces below; the client calls the methods of those it implements and
// nothing else. A Start method returns the context that the matching End
// receives, so that a span begun in Start can be ended there. The data
// structs may grow new fields in later versions: read the fields you need,
// and never compare the structs as a whole.
//
// A client without a tracer pays one nil check per call. Tracer methods
// run on the caller's goroutine for commands and batches, and on the
// client's own goroutines for connection events (whose ctx is then
// context.Background()): they must be safe for concurrent use, return
// quickly and not call the client from a connection event.

// CommandTracer traces single commands: Do, DoBlocking and every typed
// method (Get, Set, HGetAll, ...), on a single server or a cluster.
// Commands queued in a Batch or a Tx are traced as their batch instead
// (BatchTracer); reads that Client.Cached serves from memory are not
// traced.
type CommandTracer interface {
	// TraceCommandStart runs before the command is sent; the context it
	// returns is used for the rest of the call and passed to
	// TraceCommandEnd.
	TraceCommandStart(ctx context.Context, c *Client, data TraceCommandStartData) context.Context
	// TraceCommandEnd runs once the command's reply was decoded or the
	// command failed.
	TraceCommandEnd(ctx context.Context, c *Client, data TraceCommandEndData)
}

// TraceCommandStartData describes a command about to be sent.
type TraceCommandStartData struct {
	// Name is the command's name in upper case, with its subcommand for
	// container commands: "GET", "CLIENT KILL". For Do, it is the name the
	// spec knows the words by, else the first word in upper case.
	Name string
	// Args are the command's words, the name included; valid only during
	// TraceCommandStart. They may hold secrets (AUTH-like arguments, user
	// data): record them only where that is acceptable.
	Args CommandArgs
	// ReadOnly and Blocking are the spec's flags of the command (both
	// false for a command the spec does not know).
	ReadOnly, Blocking bool
}

// TraceCommandEndData describes how a command ended.
type TraceCommandEndData struct {
	// Err is the command's error: nil, Nil for a null reply where a value
	// was asked for, an *Error reply of the server, a transport error.
	Err error
}

// BatchTracer traces Batch.Exec and Tx.Exec (within Watch and WatchRetry
// too): one span for the whole round trip.
type BatchTracer interface {
	TraceBatchStart(ctx context.Context, c *Client, data TraceBatchStartData) context.Context
	TraceBatchEnd(ctx context.Context, c *Client, data TraceBatchEndData)
}

// TraceBatchStartData describes a batch about to be sent.
type TraceBatchStartData struct {
	// Len is the number of commands queued.
	Len int
	// Tx is true for a transaction (MULTI/EXEC).
	Tx bool
}

// TraceBatchEndData describes how a batch ended.
type TraceBatchEndData struct {
	// Err is what Exec returned: the batch's error as a whole, not the
	// errors of its commands (those are in their Futures).
	Err error
}

// ConnectTracer traces the set-up of every connection the client opens
// (multiplexed, blocking pool, pub/sub, client-side cache): dialing, TLS
// and the handshake (HELLO, AUTH, SELECT, ...). Its ctx is
// context.Background().
type ConnectTracer interface {
	TraceConnectStart(ctx context.Context, c *Client, data TraceConnectStartData) context.Context
	TraceConnectEnd(ctx context.Context, c *Client, data TraceConnectEndData)
}

// TraceConnectStartData describes a connection about to be dialed.
type TraceConnectStartData struct {
	// Addr is the address dialed: host:port or a socket path.
	Addr string
}

// TraceConnectEndData describes the outcome of a connection's set-up.
type TraceConnectEndData struct {
	Addr string
	// Err is nil for a ready connection. Handshake tells that the socket
	// was connected and the error came from TLS or the handshake (then Err
	// matches *HandshakeError, or the connection broke during it).
	Err       error
	Handshake bool
	// Protocol (2 or 3), Server ("redis", "valkey") and Version describe
	// a ready connection.
	Protocol        int
	Server, Version string
}

// ReconnectTracer traces outages of multiplexed connections: Start when an
// established connection breaks, End when it was replaced or the client
// was closed first. Its ctx is context.Background().
type ReconnectTracer interface {
	TraceReconnectStart(ctx context.Context, c *Client, data TraceReconnectStartData) context.Context
	TraceReconnectEnd(ctx context.Context, c *Client, data TraceReconnectEndData)
}

// TraceReconnectStartData describes a connection that broke.
type TraceReconnectStartData struct {
	Addr string
	// Cause is why it broke; it wraps the network error, ErrStalled, ...
	Cause error
}

// TraceReconnectEndData describes the end of an outage.
type TraceReconnectEndData struct {
	Addr string
	// Attempts is the number of dials it took.
	Attempts int
	// Err is nil when a new connection is up, ErrClosed when the client
	// was closed before.
	Err error
}

// PubSubGapTracer is told about lost pub/sub messages as they are lost:
// the events are instants, so there is one method, not a Start/End pair.
// Its ctx is context.Background().
type PubSubGapTracer interface {
	TracePubSubGap(ctx context.Context, c *Client, data TracePubSubGapData)
}

// TracePubSubGapData describes lost messages of one Subscription.
type TracePubSubGapData struct {
	// Reason is GapOverflow or GapDisconnect.
	Reason GapReason
	// Opened is true for a new Gap marker in the subscription's stream,
	// false for one more message dropped into an open overflow Gap.
	Opened bool
	// Dropped is the number of messages this event adds to the count of
	// dropped ones: 1 for an overflow, 0 for a disconnect (whose lost
	// messages are not known).
	Dropped int
	// Since and Until bound the time in which messages were lost; for a
	// disconnect, Err is what broke the connection.
	Since, Until time.Time
	Err          error
}

// CacheTracer is told about invalidations of the client-side cache
// (Options.ClientCache) sent by the server. They are instants: one method.
// It runs on the connection's reader, before later replies are read, so
// it must be quick. Its ctx is context.Background().
type CacheTracer interface {
	TraceCacheInvalidate(ctx context.Context, c *Client, data TraceCacheInvalidateData)
}

// TraceCacheInvalidateData describes one invalidation.
type TraceCacheInvalidateData struct {
	// Key is the key the server invalidated, valid only during the call;
	// nil when Flush is set.
	Key []byte
	// Flush is set when the whole cache was dropped (FLUSHALL, a lost
	// tracking connection).
	Flush bool
}

// CommandArgs are a command's words as sent, for a tracer to read during
// its call without the client allocating when nobody reads them.
type CommandArgs struct {
	enc []byte // RESP bulk strings, back to back
	n   int
}

// Len is the number of words, the command's name included.
func (a CommandArgs) Len() int { return a.n }

// Strings returns the words as strings (numbers in the decimal form they
// are sent in).
func (a CommandArgs) Strings() []string {
	out := make([]string, 0, a.n)
	b := a.enc
	for len(b) > 0 && b[0] == '$' {
		i, n := 1, 0
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			n = n*10 + int(b[i]-'0')
			i++
		}
		i += 2 // CRLF
		if i+n > len(b) {
			break
		}
		out = append(out, string(b[i:i+n]))
		b = b[min(i+n+2, len(b)):]
	}
	return out
}

// String joins the words with spaces.
func (a CommandArgs) String() string { return strings.Join(a.Strings(), " ") }
