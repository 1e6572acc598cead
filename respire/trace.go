package respire

import (
	"context"
	"strconv"
	"strings"
	"time"
)

// Tracer is told about what a Client does: commands, batches, connections,
// reconnects, pub/sub gaps and cache invalidations. Each field is optional:
// the client calls those that are set and nothing else, so a Tracer with
// only CommandStart and CommandEnd costs nothing on connection events. A
// Start function returns the context that the matching End receives, so
// that a span begun in Start can be ended there. The data structs may grow
// new fields in later versions: read the fields you need, and never
// compare the structs as a whole. Package respireotel has a Tracer for
// OpenTelemetry.
//
// A client without a tracer pays one nil check per call. The functions run
// on the caller's goroutine for commands and batches, and on the client's
// own goroutines for connection events (whose ctx is then
// context.Background()): they must be safe for concurrent use, return
// quickly and not call the client from a connection event.
//
// A Tracer observes; to act on a call (refuse it, answer it, time it out)
// use an Interceptor. The tracer sits inside the interceptors, next to the
// wire: a command an interceptor answers itself is not traced.
type Tracer struct {
	// CommandStart runs before a single command is sent: Do, DoBlocking
	// and every typed method (Get, Set, HGetAll, ...), on every kind of
	// deployment; the context it returns is used for the rest of the call
	// and passed to CommandEnd. Commands queued in a Batch or a Tx are
	// traced as their batch instead. Reads that Client.Cached serves from
	// memory are not traced; those it sends to the server after a miss are,
	// with TraceCommandStartData.CacheMiss set.
	CommandStart func(ctx context.Context, c *Client, data TraceCommandStartData) context.Context
	// CommandEnd runs once the command's reply was decoded or the command
	// failed.
	CommandEnd func(ctx context.Context, c *Client, data TraceCommandEndData)
	// BatchStart and BatchEnd trace Batch.Exec and Tx.Exec (within Watch
	// and WatchRetry too): one span for the whole round trip.
	BatchStart func(ctx context.Context, c *Client, data TraceBatchStartData) context.Context
	BatchEnd   func(ctx context.Context, c *Client, data TraceBatchEndData)
	// ConnectStart and ConnectEnd trace the set-up of every connection the
	// client opens (multiplexed, blocking pool, pub/sub, client-side
	// cache): dialing, TLS and the handshake (HELLO, AUTH, SELECT, ...).
	// Their ctx is context.Background().
	ConnectStart func(ctx context.Context, c *Client, data TraceConnectStartData) context.Context
	ConnectEnd   func(ctx context.Context, c *Client, data TraceConnectEndData)
	// ReconnectStart runs when an established multiplexed connection
	// breaks, ReconnectEnd when it was replaced or the client was closed
	// first. Their ctx is context.Background().
	ReconnectStart func(ctx context.Context, c *Client, data TraceReconnectStartData) context.Context
	ReconnectEnd   func(ctx context.Context, c *Client, data TraceReconnectEndData)
	// PubSubGap is told about lost pub/sub messages as they are lost: the
	// events are instants, so there is one function, not a Start/End
	// pair. Its ctx is context.Background().
	PubSubGap func(ctx context.Context, c *Client, data TracePubSubGapData)
	// CacheInvalidate is told about invalidations of the client-side
	// cache (Options.ClientCache) sent by the server. It runs on the
	// connection's reader, before later replies are read, so it must be
	// quick. Its ctx is context.Background().
	CacheInvalidate func(ctx context.Context, c *Client, data TraceCacheInvalidateData)
}

// TraceCommandStartData describes a command about to be sent.
type TraceCommandStartData struct {
	// Name is the command's name in upper case, with its subcommand for
	// container commands: "GET", "CLIENT KILL". For Do, it is the name the
	// spec knows the words by, else the first word in upper case.
	Name string
	// Args are the command's words, the name included; valid only during
	// TraceCommandStart. Their String and Redacted forms hide credentials
	// (see CommandArgs.Redacted); they still hold user data (keys,
	// values): record them only where that is acceptable.
	Args CommandArgs
	// ReadOnly and Blocking are the spec's flags of the command (both
	// false for a command the spec does not know).
	ReadOnly, Blocking bool
	// CacheMiss is set for a read of Client.Cached that the client-side
	// cache could not serve: it goes to the server, with the commands
	// tracking needs in the same write (CLIENT CACHING, PTTL), and its
	// reply fills the cache. Args are then the read's words alone.
	CacheMiss bool
}

// TraceCommandEndData describes how a command ended.
type TraceCommandEndData struct {
	// Err is the command's error: nil, Nil for a null reply where a value
	// was asked for, an *Error reply of the server, a transport error.
	Err error
}

// TraceBatchStartData describes a batch about to be sent.
type TraceBatchStartData struct {
	// Len is the number of commands queued.
	Len int
	// Tx is true for a transaction (MULTI/EXEC).
	Tx bool
	// Command is the name of the batch's commands when they are all the
	// same command ("SET"), as TraceCommandStartData.Name gives it, and
	// empty when they differ or the batch is empty.
	Command string
}

// TraceBatchEndData describes how a batch ended.
type TraceBatchEndData struct {
	// Err is what Exec returned: the batch's error as a whole, not the
	// errors of its commands (those are in their Futures).
	Err error
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
// are sent in), exactly as sent: credentials included. To record or show
// them, use Redacted or String.
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

// Redacted returns the words as Strings does, with each argument that
// carries a credential replaced by RedactedText: the password of AUTH,
// HELLO AUTH and MIGRATE AUTH/AUTH2, the secret values of CONFIG SET
// (requirepass, masterauth, ...), the password rules of ACL SETUSER, and
// the auth-pass and sentinel-pass of SENTINEL SET and SENTINEL CONFIG SET.
// docs/security.md has the table.
func (a CommandArgs) Redacted() []string {
	w := a.Strings()
	redactWords(w)
	return w
}

// String joins the words with spaces, credentials redacted as by
// Redacted: it is what a tracer should record (respireotel's
// db.query.text is this).
func (a CommandArgs) String() string { return strings.Join(a.Redacted(), " ") }

// GoString is String, so that %#v does not print the encoded words.
func (a CommandArgs) GoString() string {
	return "respire.CommandArgs(" + strconv.Quote(a.String()) + ")"
}
