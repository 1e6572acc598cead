package goredis

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/respire-go/respire/respire"
)

// Pub/sub: go-redis's PubSub (Subscribe, PSubscribe, SSubscribe) dials one
// of the adapter's connections and writes SUBSCRIBE and its kin to it. The
// connection turns them into a respire.Subscription on the Respire client,
// whose hub keeps the subscriptions across reconnects (and, on a cluster,
// sends sharded channels to the owners of their slots), and writes the
// confirmations and messages back as a server would: go-redis's own
// PubSub code (Channel, Receive, ReceiveMessage, its pings) reads them
// unchanged. Respire's gap markers (messages possibly lost while a
// connection was down) have no go-redis form and are dropped.

// subSession is the subscription of one adapter connection.
type subSession struct {
	c      *vconn
	sub    *respire.Subscription
	mu     sync.Mutex // orders confirmations before the messages they enable
	names  [3]map[string]struct{}
	cancel context.CancelFunc
	done   chan struct{}
}

// kinds of subscription, as indexes of names.
const (
	kindChannel = iota
	kindPattern
	kindShard
)

func kindOf(name string) int {
	switch name {
	case "psubscribe", "punsubscribe":
		return kindPattern
	case "ssubscribe", "sunsubscribe":
		return kindShard
	}
	return kindChannel
}

// session returns the connection's subscription, creating it if create.
func (c *vconn) session(create bool) *subSession {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ps != nil || !create || c.closed {
		return c.ps
	}
	ctx, cancel := context.WithCancel(context.Background())
	ps := &subSession{
		c:      c,
		sub:    c.a.rc.NewSubscription(nil),
		cancel: cancel,
		done:   make(chan struct{}),
	}
	for i := range ps.names {
		ps.names[i] = map[string]struct{}{}
	}
	c.ps = ps
	go ps.pump(ctx)
	return ps
}

// count is what the server reports after a (un)subscription of a kind:
// channels and patterns together, sharded channels apart.
func (ps *subSession) countOf(kind int) int {
	if kind == kindShard {
		return len(ps.names[kindShard])
	}
	return len(ps.names[kindChannel]) + len(ps.names[kindPattern])
}

func (ps *subSession) count() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	return ps.countOf(kindChannel) + len(ps.names[kindShard])
}

// subCommand runs SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE or their UN- forms.
func (c *vconn) subCommand(name string, args []string) error {
	unsub := strings.Contains(name, "unsubscribe")
	ps := c.session(!unsub)
	if ps == nil {
		// Unsubscribing with no subscription: the server's answer.
		c.push(appendStrings(nil, true, c.proto, name, nil, 0))
		return nil
	}
	kind := kindOf(name)
	ps.mu.Lock()
	defer ps.mu.Unlock()
	if unsub {
		return ps.unsubscribe(name, kind, args)
	}
	if len(args) == 0 {
		c.push(appendLine(nil, '-', "ERR wrong number of arguments for '"+name+"' command"))
		return nil
	}
	ctx, cancel := c.writeContext()
	defer cancel()
	var err error
	switch kind {
	case kindPattern:
		err = ps.sub.PSubscribe(ctx, args...)
	case kindShard:
		err = ps.sub.SSubscribe(ctx, args...)
	default:
		err = ps.sub.Subscribe(ctx, args...)
	}
	if err != nil {
		return fmt.Errorf("goredis: %s: %w", name, err)
	}
	var b []byte
	for _, a := range args {
		ps.names[kind][a] = struct{}{}
		b = appendStrings(b, true, c.proto, name, a, ps.countOf(kind))
	}
	c.push(b)
	return nil
}

func (ps *subSession) unsubscribe(name string, kind int, args []string) error {
	if len(args) == 0 {
		for n := range ps.names[kind] {
			args = append(args, n)
		}
	}
	var err error
	switch kind {
	case kindPattern:
		err = ps.sub.PUnsubscribe(args...)
	case kindShard:
		err = ps.sub.SUnsubscribe(args...)
	default:
		err = ps.sub.Unsubscribe(args...)
	}
	if err != nil {
		return fmt.Errorf("goredis: %s: %w", name, err)
	}
	if len(args) == 0 {
		ps.c.push(appendStrings(nil, true, ps.c.proto, name, nil, ps.countOf(kind)))
		return nil
	}
	var b []byte
	for _, a := range args {
		delete(ps.names[kind], a)
		b = appendStrings(b, true, ps.c.proto, name, a, ps.countOf(kind))
	}
	ps.c.push(b)
	return nil
}

// pump writes the subscription's messages back until the session ends.
func (ps *subSession) pump(ctx context.Context) {
	defer close(ps.done)
	for {
		m, err := ps.sub.Next(ctx)
		if err != nil {
			if ctx.Err() == nil {
				// The Respire client or the subscription is gone: end the
				// connection, as a server's would.
				ps.c.shut()
			}
			return
		}
		if m.Gap != nil {
			continue
		}
		var b []byte
		switch {
		case m.Sharded:
			b = appendStrings(nil, true, ps.c.proto, "smessage", m.Channel, m.Payload)
		case m.Pattern != "":
			b = appendStrings(nil, true, ps.c.proto, "pmessage", m.Pattern, m.Channel, m.Payload)
		default:
			b = appendStrings(nil, true, ps.c.proto, "message", m.Channel, m.Payload)
		}
		ps.mu.Lock()
		ps.c.push(b)
		ps.mu.Unlock()
	}
}

// close ends the subscription and waits for its pump.
func (ps *subSession) close() {
	ps.cancel()
	ps.sub.Close()
	<-ps.done
}

// shut marks the connection closed without waiting for its pump.
func (c *vconn) shut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.wake)
	}
}
