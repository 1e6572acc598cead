package transport

import (
	"bytes"
	"fmt"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
)

// handle applies one frame read from the pub/sub connection: a message, a
// confirmation of a (un)subscribe command, a PING reply, or an error reply
// to the oldest pending command. RESP3 sends messages and confirmations as
// push frames, RESP2 as arrays; they are read the same way.
func (h *PubSub) handle(c *psConn, m resp.Msg) error {
	top := m.Value(0)
	n := &m[top]
	switch {
	case n.IsError():
		return h.failed(c, NewServerError(string(n.Data)))
	case n.Type == resp.TypeSimpleString && bytes.EqualFold(n.Data, []byte("PONG")):
		return h.ponged(c)
	case n.Type == resp.TypeSimpleString && string(n.Data) == "OK":
		return h.authed(c, nil)
	case !n.IsAggregate() || n.Int < 1:
		return &resp.ProtocolError{Reason: "pub/sub connection: unexpected " + n.Type.String()}
	}
	// Up to four elements: kind word and its arguments.
	var el [4][]byte
	cnt := 0
	for i, k := top+1, int64(0); k < n.Int && i < len(m); k++ {
		if cnt < len(el) {
			el[cnt] = m[m.Value(i)].Data
			cnt++
		}
		i = m.Next(i)
	}
	word := el[0]
	for k := range kinds {
		kd := &kinds[k]
		switch string(word) {
		case kd.message:
			if Kind(k) == KindPattern {
				if cnt < 4 {
					return malformed(word)
				}
				h.dispatch(Kind(k), el[1], el[2], el[3])
			} else {
				if cnt < 3 {
					return malformed(word)
				}
				h.dispatch(Kind(k), el[1], el[1], el[2])
			}
			return nil
		case kd.subbed:
			if cnt < 2 {
				return malformed(word)
			}
			return h.confirmed(c, Kind(k), el[1])
		case kd.unsubbed:
			if cnt < 2 {
				return malformed(word)
			}
			err := h.unconfirmed(c, Kind(k), el[1])
			h.runLater()
			return err
		}
	}
	if string(word) == "pong" {
		return h.ponged(c)
	}
	if n.Type == resp.TypePush && h.cfg.OnPush != nil {
		h.cfg.OnPush(m)
	}
	return nil
}

func malformed(word []byte) error {
	return &resp.ProtocolError{Reason: fmt.Sprintf("pub/sub connection: short %q frame", word)}
}

// dispatch copies a message to every subscription of its topic. The
// payload string is shared by all of them.
func (h *PubSub) dispatch(kind Kind, target, channel, payload []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	t := h.topics[kind][string(target)]
	if t == nil || len(t.subs) == 0 {
		return // unsubscribed meanwhile
	}
	msg := Message{Payload: string(payload), Sharded: kind == KindShard}
	if kind == KindPattern {
		msg.Pattern = t.name
		msg.Channel = string(channel)
	} else {
		msg.Channel = t.name
	}
	for _, s := range t.subs {
		s.deliver(msg)
	}
}

func (h *PubSub) confirmed(c *psConn, kind Kind, name []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cmd, ok := c.pending.peek()
	if !ok || cmd.verb != psSub || cmd.kind != kind || cmd.topics[cmd.next].name != string(name) {
		return unexpected(kinds[kind].subbed, name)
	}
	t := cmd.topics[cmd.next]
	if cmd.next++; cmd.next == len(cmd.topics) {
		c.pending.pop()
	}
	if !t.confirmed && t.err == nil {
		t.confirmed = true
		close(t.ready)
		h.restoredLocked(t.subs, nil)
		key := topicKey{t.kind, t.name}
		for _, s := range t.subs {
			if g := s.owed[key]; g != nil {
				delete(s.owed, key)
				s.deliverOwed(t, g)
			}
		}
	}
	return nil
}

// deliverOwed queues g, the gap of topic t owed to s, now that t is
// confirmed.
func (s *Subscription) deliverOwed(t *topic, g *Gap) {
	g.Until = time.Now()
	s.deliverMarker(Message{Channel: t.name, Sharded: t.kind == KindShard, Gap: g})
}

// restoredLocked gives the subscriptions that were receiving when the
// connection broke their disconnect gap, now that one of their
// subscriptions is back (or, with err, was refused).
func (h *PubSub) restoredLocked(subs []*Subscription, err error) {
	var now time.Time
	for _, s := range subs {
		if !s.lost {
			continue
		}
		if now.IsZero() {
			now = time.Now()
		}
		s.lost = false
		g := &Gap{Reason: GapDisconnect, Since: s.lostAt, Until: now, Err: s.lostErr}
		if err != nil {
			what := "subscribing again"
			if s.lostErr != nil {
				what += " after " + Trim(s.lostErr)
			}
			g.Err = Wrap(what, err)
		}
		s.deliverGap(g)
	}
}

func (h *PubSub) unconfirmed(c *psConn, kind Kind, name []byte) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cmd, ok := c.pending.peek()
	if !ok || cmd.verb != psUnsub || cmd.kind != kind || cmd.names[cmd.next] != string(name) {
		if kind == KindShard {
			// Not an answer: the server ended the subscription itself,
			// as a cluster node does for the channels of a slot it lost.
			h.shardDroppedLocked(string(name))
			return nil
		}
		return unexpected(kinds[kind].unsubbed, name)
	}
	if cmd.next++; cmd.next == len(cmd.names) {
		c.pending.pop()
	}
	return nil
}

func (h *PubSub) ponged(c *psConn) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cmd, ok := c.pending.peek()
	if !ok || cmd.verb != psPing {
		return unexpected("pong", nil)
	}
	c.pending.pop()
	return nil
}

// authed applies the reply to an AUTH sent by reauth: OK, or the error
// failed passes on.
func (h *PubSub) authed(c *psConn, se *ServerError) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cmd, ok := c.pending.peek()
	if !ok || cmd.verb != psAuth {
		return unexpected("OK", nil)
	}
	c.pending.pop()
	cmd.done <- se
	return nil
}

// failed applies an error reply to the oldest pending command. A refused
// subscription is dropped, and its waiting Subscribe calls get err.
func (h *PubSub) failed(c *psConn, err *ServerError) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	cmd, ok := c.pending.pop()
	if !ok {
		return &resp.ProtocolError{Reason: "pub/sub connection: error reply with no command pending: " + err.Message}
	}
	if cmd.verb == psAuth {
		cmd.done <- err
		return nil
	}
	if cmd.verb != psSub {
		return nil
	}
	err.Command = kinds[cmd.kind].sub
	for _, t := range cmd.topics[cmd.next:] {
		if t.confirmed || t.err != nil {
			continue
		}
		t.err = err
		close(t.ready)
		h.restoredLocked(t.subs, err)
		if h.topics[t.kind][t.name] == t {
			delete(h.topics[t.kind], t.name)
		}
		subs := t.subs
		t.subs = nil
		for _, s := range subs {
			delete(s.topics, topicKey{t.kind, t.name})
			if len(s.topics) == 0 {
				s.lost = false
			}
		}
		h.stopIfIdleLocked()
	}
	return nil
}

// unexpected reports a frame that does not answer the oldest pending
// command: the connection is out of step and is replaced.
func unexpected(word string, name []byte) error {
	return &resp.ProtocolError{Reason: fmt.Sprintf("pub/sub connection: unexpected %s %q", word, name)}
}

// shardDroppedLocked forgets the sharded channel the server unsubscribed
// on its own, and tells its subscriptions: through Hooks.ShardDropped,
// which subscribes them again elsewhere, or with a GapMoved marker whose
// Err is ErrShardDropped. The hooks run after h.mu is released.
func (h *PubSub) shardDroppedLocked(name string) {
	t := h.topics[KindShard][name]
	if t == nil {
		return // nobody wants it any more
	}
	delete(h.topics[KindShard], name)
	if !t.confirmed && t.err == nil {
		t.err = ErrShardDropped
		close(t.ready)
	}
	key := topicKey{KindShard, name}
	subs := t.subs
	t.subs = nil
	for _, s := range subs {
		delete(s.topics, key)
		delete(s.owed, key)
		if len(s.topics) == 0 {
			s.lost = false
		}
	}
	h.stopIfIdleLocked()
	if fn := h.hooks.ShardDropped; fn != nil {
		h.later = append(h.later, func() {
			for _, s := range subs {
				fn(s, name)
			}
		})
		return
	}
	now := time.Now()
	for _, s := range subs {
		s.deliverMarker(Message{Channel: name, Sharded: true,
			Gap: &Gap{Reason: GapMoved, Since: now, Until: now, Err: ErrShardDropped}})
	}
}
