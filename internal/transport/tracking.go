package transport

import (
	"errors"

	"github.com/respire-go/respire/internal/transport/resp"
)

// ErrTrackingNeedsRESP3 is the handshake error of a connection with
// Config.Tracking set that could only negotiate RESP2: without RESP3 the
// server cannot send invalidations on the connection that reads, so a
// cache would go stale silently.
var ErrTrackingNeedsRESP3 = errors.New("respire: client-side caching needs RESP3, and the connection negotiated RESP2")

// Tracking turns on server-assisted client-side caching (CLIENT TRACKING)
// on every connection of a Mux, and routes the server's invalidation pushes
// to the cache. Invalidations are handled on the reader goroutine, in
// order with the replies of the same connection, before any other push is
// passed to Config.OnPush.
type Tracking struct {
	// Broadcast selects BCAST mode: the server reports changes to every key
	// that starts with one of Prefixes (all keys when there are none),
	// whether or not the connection read it. Otherwise the mode is OPTIN:
	// only keys read right after CLIENT CACHING YES are tracked.
	Broadcast bool
	Prefixes  []string
	// Invalidate receives each key of an invalidation push; key is valid
	// only during the call.
	Invalidate func(key []byte)
	// Flush is called when the server invalidates everything (a null
	// invalidation, after FLUSHALL or FLUSHDB) and when a tracking
	// connection breaks, because invalidations may have been lost. It runs
	// before the broken connection is replaced.
	Flush func()
}

// command is the handshake step that turns tracking on.
func (t *Tracking) command() []string {
	args := []string{"CLIENT", "TRACKING", "ON"}
	if !t.Broadcast {
		return append(args, "OPTIN")
	}
	args = append(args, "BCAST")
	for _, p := range t.Prefixes {
		args = append(args, "PREFIX", p)
	}
	return args
}

// handlePush applies m if it is an invalidation and reports whether it was.
// An invalidation is the push ["invalidate", keys] where keys is an array
// of keys or a null that means every key.
func (t *Tracking) handlePush(m resp.Msg) bool {
	top := m.Value(0)
	if top >= len(m) || m[top].Int < 2 {
		return false
	}
	kind := m.Value(top + 1)
	if kind >= len(m) || string(m[kind].Data) != "invalidate" {
		return false
	}
	keys := m.Value(m.Next(kind))
	if keys >= len(m) {
		return true
	}
	n := &m[keys]
	if n.Null || n.Type == resp.TypeNull || !n.IsAggregate() {
		if t.Flush != nil {
			t.Flush()
		}
		return true
	}
	if t.Invalidate == nil {
		return true
	}
	for i, k := 0, keys+1; i < int(n.Int) && k < len(m); i, k = i+1, m.Next(k) {
		if v := m.Value(k); v < len(m) {
			t.Invalidate(m[v].Data)
		}
	}
	return true
}

// lost tells the cache that a tracking connection broke.
func (t *Tracking) lost() {
	if t.Flush != nil {
		t.Flush()
	}
}
