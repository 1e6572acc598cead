// Package transport is Respire's connection core: it dials and handshakes
// connections (TCP, Unix sockets, TLS; HELLO 3 with a fallback to RESP2),
// multiplexes many goroutines over a few connections with automatic
// pipelining, matches replies to requests in FIFO order, routes RESP3 push
// frames aside, reconnects with capped exponential backoff, and detects dead
// or stalled peers.
//
// Start with [Mux] and [Request]. The wire format itself lives in the
// sub-package resp. This package knows nothing of the public respire API:
// respire embeds a [Request] in each command it builds and implements
// [Handler] to decode replies in the reader goroutine, while the reply bytes
// are still in the read buffer.
//
// # Life of a request
//
// The caller encodes its command into its own pooled buffer and calls
// [Mux.Do]. Do picks a connection (by the request's Route, so commands on
// one key keep their order), appends the bytes to the connection's write
// buffer and the request to its FIFO of pending replies in one critical
// section, and, if no other goroutine is writing, writes the buffer itself
// until nothing more is queued. Concurrent callers therefore share write
// system calls without any timer. A reader goroutine per connection parses
// replies, pops the oldest pending request and calls its Handler; the caller
// is woken through a reusable channel.
//
// With the filler enabled, a second goroutine per connection keeps reading
// from the socket while the reader parses and dispatches, so that under load
// each parse pass finds more bytes.
//
// Beside the Mux: BlockingPool runs blocking commands on dedicated
// connections, one at a time each, on the caller's goroutine, and lends
// connections for transactions (Hold); PubSub keeps one dedicated
// connection for subscriptions with per-subscription bounded queues and
// gap events; Tracking carries invalidations for the client-side cache.
package transport
