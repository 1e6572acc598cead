package transport

import (
	"context"
	"fmt"
	"net"
	"sync"

	"github.com/respire-go/respire/internal/transport/resp"
)

// Kind is the kind of a subscription target.
type Kind uint8

const (
	KindChannel Kind = iota // SUBSCRIBE
	KindPattern             // PSUBSCRIBE
	KindShard               // SSUBSCRIBE
)

// kinds holds, per Kind, the commands and the frame words of the server.
var kinds = [...]struct {
	sub, unsub       string // commands
	subbed, unsubbed string // confirmation frames
	message          string // message frame
}{
	KindChannel: {"SUBSCRIBE", "UNSUBSCRIBE", "subscribe", "unsubscribe", "message"},
	KindPattern: {"PSUBSCRIBE", "PUNSUBSCRIBE", "psubscribe", "punsubscribe", "pmessage"},
	KindShard:   {"SSUBSCRIBE", "SUNSUBSCRIBE", "ssubscribe", "sunsubscribe", "smessage"},
}

func (k Kind) String() string {
	if int(k) < len(kinds) {
		return kinds[k].sub
	}
	return "Kind(?)"
}

// subscribeChunk bounds the names sent in one command when subscriptions
// are restored after a reconnect.
const subscribeChunk = 512

// PubSub is the pub/sub hub of one node. It runs every subscription of a
// client over one dedicated connection, in RESP3 (push frames) or RESP2
// (subscribe mode), dialed at the first subscription. Many Subscriptions
// may want the same channel: the server is asked once, and each message is
// copied to each of them. The reader goroutine never waits for a
// subscriber; a full buffer drops and counts (see Gap).
//
// When the connection breaks, the hub redials with capped exponential
// backoff and subscribes again to everything. Each subscription that was
// receiving gets a Gap marker (GapDisconnect) when the server confirms the
// first of its subscriptions again, so before any newer message; a message
// published after the marker was read is delivered.
type PubSub struct {
	cfg    Config
	ctx    context.Context // cancelled by Close
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closed  bool
	stopRun context.CancelFunc // ends the running connection loop; nil when none runs
	topics  [len(kinds)]map[string]*topic
	subs    map[*Subscription]struct{}
	cur     *psConn // nil while disconnected
	lastErr error   // of the last failed dial or broken connection
	everUp  bool    // a connection was established once
	// dialFailed is closed and replaced after each failed dial, to wake
	// subscribers that must not wait on a permanent error.
	dialFailed chan struct{}
	hooks      PubSubHooks
	later      []func() // hooks to run once mu is released
}

// topic is one channel, pattern or sharded channel the server is asked
// for, with the subscriptions that want it.
type topic struct {
	kind      Kind
	name      string
	subs      []*Subscription
	confirmed bool
	ready     chan struct{} // closed when confirmed or failed
	err       error         // why the server refused it
}

type topicKey struct {
	kind Kind
	name string
}

// psCmd is a command sent on the pub/sub connection whose replies are
// pending: one confirmation frame per name, or one error.
type psCmd struct {
	verb   psVerb
	kind   Kind
	topics []*topic          // psSub
	names  []string          // psUnsub
	next   int               // confirmations received
	done   chan *ServerError // psAuth; buffered
}

type psVerb uint8

const (
	psSub psVerb = iota
	psUnsub
	psPing
	psAuth // done receives the server's error reply, or nil
)

// psConn is one live pub/sub connection.
type psConn struct {
	nc      net.Conn
	proto   int // as negotiated
	rd      *resp.Reader
	wbuf    []byte       // guarded by PubSub.mu
	pending ring[*psCmd] // guarded by PubSub.mu
	kick    chan struct{}
	dead    chan struct{}
	cause   error // why Reconnect closed it; guarded by PubSub.mu
}

// NewPubSub returns a hub for cfg. It dials nothing until the first
// subscription.
func NewPubSub(cfg Config) *PubSub {
	cfg = cfg.withDefaults()
	cfg.Tracking = nil // the hub reads no keys
	h := &PubSub{cfg: cfg, subs: make(map[*Subscription]struct{}), dialFailed: make(chan struct{})}
	for k := range h.topics {
		h.topics[k] = make(map[string]*topic)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	cfg.Credentials.addHub(h)
	return h
}

// Close closes the connection and every subscription, whose Next then
// fails with ErrClosed, and waits for the hub's goroutines to end.
func (h *PubSub) Close() error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil
	}
	h.closed = true
	h.cfg.Credentials.removeHub(h)
	c := h.cur
	subs := h.subs
	h.subs = make(map[*Subscription]struct{})
	for s := range subs {
		s.removed = true
	}
	h.mu.Unlock()
	h.cancel()
	if c != nil {
		_ = c.nc.Close()
	}
	h.wg.Wait()
	for s := range subs {
		s.finish(ErrClosed)
	}
	return nil
}

func (h *PubSub) subscribe(ctx context.Context, s *Subscription, kind Kind, names []string) error {
	return h.subscribeOwed(ctx, s, kind, names, nil)
}

// subscribeOwed is subscribe; gaps, when not nil, holds a gap marker per
// name, queued for s when the name is confirmed (at once when it already
// is), so before any message of it.
func (h *PubSub) subscribeOwed(ctx context.Context, s *Subscription, kind Kind, names []string, gaps map[string]*Gap) error {
	if int(kind) >= len(kinds) {
		return fmt.Errorf("respire: unknown subscription kind %d", kind)
	}
	if len(names) == 0 {
		return nil
	}
	type wait struct {
		t     *topic
		ready chan struct{}
	}
	var waits []wait
	var added, fresh []*topic // added to s; new to the hub
	h.mu.Lock()
	switch {
	case h.closed:
		h.mu.Unlock()
		return ErrClosed
	case s.removed:
		h.mu.Unlock()
		return ErrSubscriptionClosed
	}
	h.subs[s] = struct{}{}
	for _, name := range names {
		t := s.topics[topicKey{kind, name}]
		if t == nil {
			t = h.topics[kind][name]
			if t == nil {
				t = &topic{kind: kind, name: name, ready: make(chan struct{})}
				h.topics[kind][name] = t
				fresh = append(fresh, t)
			}
			t.subs = append(t.subs, s)
			s.topics[topicKey{kind, name}] = t
			added = append(added, t)
		}
		if g := gaps[name]; g != nil {
			if t.confirmed {
				s.deliverOwed(t, g)
			} else {
				if s.owed == nil {
					s.owed = make(map[topicKey]*Gap)
				}
				s.owed[topicKey{kind, name}] = g
			}
		}
		if !t.confirmed {
			waits = append(waits, wait{t, t.ready})
		}
	}
	if h.cur != nil && len(fresh) > 0 {
		h.sendSubLocked(h.cur, kind, fresh)
	}
	if h.stopRun == nil {
		var ctx context.Context
		ctx, h.stopRun = context.WithCancel(h.ctx)
		h.wg.Add(1)
		go func() { defer h.wg.Done(); h.run(ctx) }()
	}
	failed := h.dialFailed
	h.mu.Unlock()

	_, bounded := ctx.Deadline()
	var err error
	for i := 0; i < len(waits); i++ {
		w := waits[i]
		select {
		case <-w.ready:
			err = w.t.err
		case <-failed:
			// A permanent dial error is returned at once, and so is any
			// dial error of a hub that never connected, for a caller
			// without a deadline; otherwise wait for the next attempt.
			h.mu.Lock()
			last, up := h.lastErr, h.everUp
			failed = h.dialFailed
			h.mu.Unlock()
			switch {
			case permanent(last):
				err = NotSent(last)
			case !up && !bounded:
				err = unavailable(h.cfg.Addr, last, nil)
			default:
				i--
				continue
			}
		case <-ctx.Done():
			h.mu.Lock()
			last := h.lastErr
			h.mu.Unlock()
			if last != nil {
				err = unavailable(h.cfg.Addr, last, ctx.Err())
			} else {
				err = fmt.Errorf("waiting for %s confirmation: %w", kinds[kind].sub, ctx.Err())
			}
		case <-h.ctx.Done():
			return ErrClosed
		}
		if err != nil {
			break
		}
	}
	if err != nil {
		h.mu.Lock()
		for _, name := range names {
			delete(s.owed, topicKey{kind, name})
		}
		var gone []string
		for _, t := range added {
			if h.dropLocked(s, t) {
				gone = append(gone, t.name)
			}
		}
		h.releaseLocked(kind, gone)
		h.mu.Unlock()
	}
	return err
}

// unsubscribeLocked removes names of kind (all when names is empty) from s.
func (h *PubSub) unsubscribeLocked(s *Subscription, kind Kind, names []string) {
	var gone []string
	if len(names) == 0 {
		for k, t := range s.topics {
			if k.kind == kind && h.dropLocked(s, t) {
				gone = append(gone, t.name)
			}
		}
	}
	for _, name := range names {
		if t := s.topics[topicKey{kind, name}]; t != nil && h.dropLocked(s, t) {
			gone = append(gone, t.name)
		}
	}
	h.releaseLocked(kind, gone)
}

// releaseLocked tells the server that nobody wants names any more, in one
// command, and closes the connection when nothing is left.
func (h *PubSub) releaseLocked(kind Kind, names []string) {
	if len(names) > 0 && h.cur != nil {
		for _, part := range bySlot(h, kind, names, func(n string) string { return n }) {
			h.sendLocked(h.cur, &psCmd{verb: psUnsub, kind: kind, names: part}, kinds[kind].unsub, part...)
		}
	}
	h.stopIfIdleLocked()
}

// dropLocked takes s off t and reports whether t is left without
// subscribers, in which case the server must be told.
func (h *PubSub) dropLocked(s *Subscription, t *topic) bool {
	key := topicKey{t.kind, t.name}
	if s.topics[key] != t {
		return false
	}
	delete(s.topics, key)
	delete(s.owed, key)
	if len(s.topics) == 0 {
		s.lost = false
	}
	for i, o := range t.subs {
		if o == s {
			last := len(t.subs) - 1
			t.subs[i] = t.subs[last]
			t.subs[last] = nil
			t.subs = t.subs[:last]
			break
		}
	}
	if len(t.subs) > 0 || h.topics[t.kind][t.name] != t {
		return false
	}
	delete(h.topics[t.kind], t.name)
	return t.err == nil
}

// stopIfIdleLocked closes the connection when nothing is subscribed any
// more; the next subscription dials again. An application that stopped
// listening keeps no connection open for it.
func (h *PubSub) stopIfIdleLocked() {
	if h.stopRun == nil {
		return
	}
	for k := range h.topics {
		if len(h.topics[k]) > 0 {
			return
		}
	}
	h.stopRun()
	h.stopRun = nil
	h.lastErr = nil
	if c := h.cur; c != nil {
		h.cur = nil
		_ = c.nc.Close()
	}
}

func (h *PubSub) sendSubLocked(c *psConn, kind Kind, ts []*topic) {
	for _, part := range bySlot(h, kind, ts, func(t *topic) string { return t.name }) {
		args := make([]string, len(part))
		for i, t := range part {
			args[i] = t.name
		}
		h.sendLocked(c, &psCmd{verb: psSub, kind: kind, topics: part}, kinds[kind].sub, args...)
	}
}

// bySlot splits the sharded channels of a command into one command per
// slot when Hooks.ShardSlot is set (a cluster node refuses channels of
// different slots in one command), keeping their order within each.
func bySlot[T any](h *PubSub, kind Kind, xs []T, name func(T) string) [][]T {
	slot := h.hooks.ShardSlot
	if kind != KindShard || slot == nil || len(xs) < 2 {
		return [][]T{xs}
	}
	var parts [][]T
	at := map[uint16]int{}
	for _, x := range xs {
		s := slot(name(x))
		i, ok := at[s]
		if !ok {
			i = len(parts)
			at[s] = i
			parts = append(parts, nil)
		}
		parts[i] = append(parts[i], x)
	}
	return parts
}

// sendLocked queues a command for the writer goroutine.
func (h *PubSub) sendLocked(c *psConn, cmd *psCmd, name string, args ...string) {
	c.wbuf = resp.AppendArrayLen(c.wbuf, 1+len(args))
	c.wbuf = resp.AppendBulkString(c.wbuf, name)
	for _, a := range args {
		c.wbuf = resp.AppendBulkString(c.wbuf, a)
	}
	c.pending.push(cmd)
	select {
	case c.kick <- struct{}{}:
	default:
	}
}
