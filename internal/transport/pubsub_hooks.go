package transport

import (
	"errors"
)

// ErrShardDropped is the Err of the GapMoved marker of a sharded channel
// that the server unsubscribed on its own (a cluster node whose slot moved
// away) on a hub without Hooks.ShardDropped: nothing more arrives for it.
var ErrShardDropped = errors.New("respire: the server ended the sharded subscription (its slot moved to another node)")

// PubSubHooks lets the owner of a hub follow what the server does to it.
// They run on the hub's reader goroutine without its lock held and must not
// block; they may call the hub's and the subscriptions' methods.
type PubSubHooks struct {
	// ShardDropped is called for each subscription s whose sharded
	// channel the server unsubscribed on its own (its slot left the
	// node). The channel is no longer subscribed on this hub: the owner
	// subscribes it on the new owner of the slot (Resubscribe).
	ShardDropped func(s *Subscription, channel string)
	// Lost is called when the hub's connection broke (it dials again
	// by itself), with the cause.
	Lost func(err error)
	// ShardSlot, when set, gives the cluster slot of a sharded channel:
	// SSUBSCRIBE and SUNSUBSCRIBE are then sent per slot, as a cluster
	// node refuses channels of different slots in one command (CROSSSLOT).
	// It is called with the hub's lock held and must be pure.
	ShardSlot func(channel string) uint16
}

// SetHooks sets the hub's hooks. Call it before the first subscription.
func (h *PubSub) SetHooks(hk PubSubHooks) {
	h.mu.Lock()
	h.hooks = hk
	h.mu.Unlock()
}

// runLater runs the hooks queued while h.mu was held.
func (h *PubSub) runLater() {
	h.mu.Lock()
	fns := h.later
	h.later = nil
	h.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

// Reconnect closes the hub's connection, if one is up, so that the hub
// dials again (through Config.Resolve when set: the new primary after a
// failover, for example) and restores every subscription. Each
// subscription that was receiving gets a GapDisconnect marker whose Err
// wraps cause when it is restored.
func (h *PubSub) Reconnect(cause error) {
	if cause == nil {
		cause = errors.New("asked for")
	}
	h.mu.Lock()
	c := h.cur
	if c != nil {
		c.cause = Wrap("pub/sub reconnect", cause)
	}
	h.mu.Unlock()
	if c != nil {
		_ = c.nc.Close()
	}
}
