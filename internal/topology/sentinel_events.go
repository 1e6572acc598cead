package topology

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// sentinelChannels are the events the watcher follows: those that move or
// fence the master, and those after which the replicas or the sentinels
// should be asked for again.
var sentinelChannels = []string{
	"+switch-master", "+promoted-slave",
	"+sdown", "-sdown", "+odown", "-odown",
	"+try-failover", "+elected-leader", "+selected-slave",
	"+failover-state-select-slave", "+failover-state-send-slaveof-noone", "+failover-state-wait-promotion",
	"+failover-end", "+failover-end-for-timeout",
	"-failover-abort-not-elected", "-failover-abort-no-good-slave", "-failover-abort-slave-timeout",
	"+slave", "+reboot", "+convert-to-slave", "+slave-reconf-done", "+sentinel",
}

// fenceEvents are the events that announce a failure or failover of the
// master they name.
var fenceEvents = map[string]bool{
	"+sdown": true, "+odown": true, "+try-failover": true, "+elected-leader": true, "+selected-slave": true,
	"+failover-state-select-slave": true, "+failover-state-send-slaveof-noone": true,
}

// follow subscribes to one sentinel's events and handles them until the
// watcher stops. The hub reconnects by itself; a gap in its stream asks
// for a poll, since events may have been missed.
func (s *Sentinel) follow(addr string, hub *transport.PubSub) {
	sub := hub.NewSubscription(256)
	defer sub.Close()
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		ctx, cancel := context.WithTimeout(s.ctx, s.queryTimeout())
		err := sub.Subscribe(ctx, transport.KindChannel, sentinelChannels...)
		cancel()
		if err == nil {
			break
		}
		if !s.pause(wait) {
			return
		}
	}
	for {
		m, err := sub.Next(s.ctx)
		if err != nil {
			return
		}
		if m.Gap != nil {
			s.Poll()
			continue
		}
		s.event(addr, m.Channel, m.Payload)
	}
}

// pause waits d; false when the watcher stops.
func (s *Sentinel) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.ctx.Done():
		return false
	}
}

// event handles one sentinel event. Instance events read
// "<type> <name> <ip> <port> [@ <master-name> <master-ip> <master-port>]";
// +switch-master reads "<name> <old-ip> <old-port> <new-ip> <new-port>".
func (s *Sentinel) event(from, channel, payload string) {
	f := strings.Fields(payload)
	name := s.opts.MasterName
	if channel == "+switch-master" {
		if len(f) >= 5 && f[0] == name {
			s.switchTo(net.JoinHostPort(f[3], f[4]), "+switch-master")
		}
		return
	}
	if len(f) < 4 {
		return
	}
	master := ""
	switch {
	case f[0] == "master" && f[1] == name:
		master = net.JoinHostPort(f[2], f[3])
	case len(f) >= 8 && f[4] == "@" && f[5] == name:
		master = net.JoinHostPort(f[6], f[7])
	default:
		return // another master's
	}
	switch {
	case channel == "+promoted-slave" && f[0] == "slave":
		s.switchTo(net.JoinHostPort(f[2], f[3]), "+promoted-slave")
	case fenceEvents[channel] && (f[0] == "master" || channel == "+selected-slave") && s.sameNode(master, s.Master()):
		s.fence(true, from, channel)
	case channel == "+failover-state-wait-promotion" && f[0] == "slave" && s.sameNode(master, s.Master()):
		// The leader sent the replica REPLICAOF NO ONE: ask it when it
		// runs as master (sentinel_promote.go).
		s.fence(true, from, channel)
		s.probe(net.JoinHostPort(f[2], f[3]), from)
	case strings.HasPrefix(channel, "-failover-abort-") && f[0] == "master":
		// A failover given up by its leader: an early switch to the
		// replica it was promoting is undone.
		s.revert(master, from, channel)
		s.Poll()
	default:
		s.Poll()
	}
}

// queryTimeout bounds one round trip to a sentinel.
func (s *Sentinel) queryTimeout() time.Duration {
	if d := s.opts.Conn.DialTimeout; d > 0 && d < time.Second {
		return d
	}
	return time.Second
}

// ask sends one command to a sentinel and returns its reply.
func (s *Sentinel) ask(sentinel string, args ...string) (resp.Value, error) {
	vs, err := s.askN(sentinel, args)
	if err != nil {
		return resp.Value{}, err
	}
	return vs[0], nil
}

// askN sends commands to a sentinel in one write and returns their
// replies; an error reply fails the whole.
func (s *Sentinel) askN(sentinel string, cmds ...[]string) ([]resp.Value, error) {
	s.mu.Lock()
	c := s.conns[sentinel]
	s.mu.Unlock()
	if c == nil {
		return nil, errors.New("unknown sentinel " + sentinel)
	}
	ctx, cancel := context.WithTimeout(s.ctx, s.queryTimeout())
	defer cancel()
	return c.do(ctx, cmds)
}

// sentinelConn is the connection the watcher asks one sentinel on,
// dialed when needed and dropped when it fails.
type sentinelConn struct {
	cfg transport.Config
	mu  sync.Mutex
	d   *transport.Dedicated
}

func (c *sentinelConn) do(ctx context.Context, cmds [][]string) ([]resp.Value, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d == nil {
		d, err := transport.DialDedicated(ctx, c.cfg)
		if err != nil {
			return nil, tlsHint(err, c.cfg.TLS != nil)
		}
		c.d = d
	}
	var payload []byte
	for _, a := range cmds {
		payload = resp.AppendCommand(payload, a...)
	}
	out := make([]resp.Value, len(cmds))
	err := c.d.DoN(ctx, payload, len(cmds), func(i int, m resp.Msg) { out[i] = m.Tree() })
	if err != nil || c.d.Broken() {
		c.d.Close()
		c.d = nil
		if err == nil {
			err = errors.New("connection broken")
		}
		return nil, err
	}
	for i, v := range out {
		if v.Type == resp.TypeSimpleError || v.Type == resp.TypeBulkError {
			se := transport.NewServerError(v.Str)
			se.Command = strings.Join(cmds[i][:2], " ")
			return nil, fmt.Errorf("%s: %w", se.Command, se)
		}
	}
	return out, nil
}

// tlsHint adds to err, a failed dial of a plain-text connection, that the
// sentinel may serve TLS only when it closed the connection during the
// handshake: that is how a TLS port answers a plain-text HELLO.
func tlsHint(err error, tls bool) error {
	var he *transport.HandshakeError
	if tls || !errors.As(err, &he) || he.Step == "TLS" {
		return err
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		return err
	}
	return fmt.Errorf("%w (the sentinel closed a plain-text connection: it may serve TLS only)", err)
}

func (c *sentinelConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.d != nil {
		c.d.Close()
		c.d = nil
	}
}

// switchTo moves to the master an event names: a failover's, whose
// configuration is newer than any a poll saw.
func (s *Sentinel) switchTo(addr, why string) {
	if s.sameNode(addr, s.Master()) {
		addr = s.Master() // the same node, named otherwise
	} else {
		s.mu.Lock()
		s.epoch++
		s.mu.Unlock()
	}
	s.setMaster(addr, why)
}
