package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Cluster mode.
//
// A cluster client holds a topology.Cluster instead of one Mux: every
// command goes to the node that serves its keys' slot (CRC16 of the key or
// its {hash tag}), read-only ones to a replica when ReadFrom asks for it.
// The redirect loop lives here, since only this package sees replies: MOVED
// patches the slot map and the command goes to the new owner; ASK sends
// ASKING and the command once to the target; TRYAGAIN, CLUSTERDOWN, LOADING
// and MASTERDOWN, which say the command did not run, are retried after a
// short pause within the caller's context. A command whose connection broke
// after it was written (outcome unknown) is resent only if it is read-only
// and RetryReads allows.

// ClusterOptions configures a client of a Redis Cluster or Valkey cluster.
type ClusterOptions struct {
	// Addrs are "host:port" addresses of some of the cluster's nodes (the
	// seeds); the client asks them for the topology and learns the others.
	// Default "localhost:6379".
	Addrs []string
	// RefreshInterval is how often the topology is fetched while nothing
	// else asks for it. Default 30s. Redirects and failed nodes refresh it
	// sooner.
	RefreshInterval time.Duration
}

// ReadFrom chooses the node that serves a read-only command on a cluster.
type ReadFrom int

const (
	// ReadPrimary sends every command to the slot's primary.
	ReadPrimary ReadFrom = iota
	// ReadPreferReplica sends read-only commands to a replica of the slot
	// (chosen at random), or to the primary when the shard has none or the
	// replica fails or is loading.
	ReadPreferReplica
	// ReadReplica sends read-only commands to replicas only: a shard
	// without a replica fails them with an error wrapping ErrNoReplica.
	ReadReplica
	// ReadNearest sends read-only commands to the node of the slot's shard,
	// primary or replica, with the lowest measured round trip: every node
	// is sent a PING each second and its latency kept as a moving average.
	// A node that fails or is loading falls back to the primary for that
	// command; one whose PING fails is avoided until it answers again.
	// Before the first measurement reads go to a replica at random.
	ReadNearest
)

// ErrCrossSlot is wrapped by the *ArgError of a command whose keys fall in
// different slots of a cluster and that cannot be split (only commands the
// spec marks multi_shard, such as MGET, DEL and MSET, are). Keys that share
// a {hash tag} share a slot.
var ErrCrossSlot = errors.New("respire: keys in different slots")

// ErrSlotUnserved is wrapped by the error of a command whose slot no
// primary of the cluster serves (its shard failed and had no replica to
// take over, or resharding left a gap) until its context ended.
var ErrSlotUnserved = topology.ErrSlotUnserved

// ErrWrongNode is wrapped by the (permanent) handshake error of a
// connection to a cluster node whose id is not the one the topology has at
// that address: another node or another cluster answers there now.
var ErrWrongNode = transport.ErrWrongNode

// ErrNoReplica is wrapped by the error of a read with ReadReplica when the
// slot's shard has no replica.
var ErrNoReplica = topology.ErrNoReplica

func (o *ClusterOptions) validate() error {
	if o == nil {
		return nil
	}
	for _, s := range o.Addrs {
		if _, _, err := net.SplitHostPort(s); err != nil {
			return optErr("Cluster.Addrs", "%q is not host:port", s)
		}
	}
	if o.RefreshInterval < 0 {
		return optErr("Cluster.RefreshInterval", "%v is negative", o.RefreshInterval)
	}
	return nil
}

// newCluster builds the topology of a cluster client.
func newCluster(opts *Options, cfg transport.Config) *topology.Cluster {
	seeds := append([]string(nil), opts.Cluster.Addrs...)
	if len(seeds) == 0 {
		seeds = []string{cfg.Addr}
	}
	return topology.New(topology.Options{
		Seeds:           seeds,
		Node:            cfg,
		PoolSize:        opts.BlockingPoolSize,
		Replicas:        opts.ReadFrom != ReadPrimary,
		Latency:         opts.ReadFrom == ReadNearest,
		RefreshInterval: opts.Cluster.RefreshInterval,
	})
}

// slotOf returns the slot of x's keys, and whether it has any; an
// *ArgError wrapping ErrCrossSlot when they span slots.
func slotOf(x *cmd) (uint16, bool, error) {
	if len(x.keys) == 0 {
		return 0, false, nil
	}
	s, err := keysSlot(x.info.name, "", x.keys)
	return s, err == nil, err
}

// keysSlot returns the slot of keys (at least one), or the *ArgError of
// command when they span slots; why, when not empty, says why that matters.
func keysSlot(command, why string, keys []string) (uint16, error) {
	s := topology.Slot(keys[0])
	for _, k := range keys[1:] {
		if t := topology.Slot(k); t != s {
			return 0, crossSlot(command, why, keys[0], s, k, t)
		}
	}
	return s, nil
}

// crossSlot is the error of a command whose keys a and b fall in slots sa
// and sb.
func crossSlot(command, why, a string, sa uint16, b string, sb uint16) error {
	if why != "" {
		why += ": "
	}
	return &ArgError{Command: command, Argument: "key", Err: ErrCrossSlot,
		Reason: fmt.Sprintf("%v: %s%q is in slot %d, %q in slot %d (use a {hash tag} to keep them together)", transport.Trim(ErrCrossSlot), why, a, sa, b, sb)}
}

// redirect is a cluster error reply that asks for the command again.
type redirect struct {
	kind string // MOVED, ASK, or a retry-later prefix
	slot uint16
	addr string
}

// redirectOf parses x's error reply as a redirect; from is the address of
// the node that replied (for an empty host).
func redirectOf(err error, from string) (redirect, bool) {
	if err == nil {
		return redirect{}, false
	}
	return parseRedirect(err, from)
}

// parseRedirect is redirectOf for an error; kept apart so that the nil
// case, every successful command's, allocates nothing.
func parseRedirect(err error, from string) (redirect, bool) {
	// A subscription's MOVED comes from the transport.
	se, ok := serverError(err)
	if !ok {
		return redirect{}, false
	}
	switch se.Prefix {
	case "MOVED", "ASK":
		f := strings.Fields(se.Message)
		if len(f) != 3 {
			return redirect{}, false
		}
		slot, perr := strconv.Atoi(f[1])
		if perr != nil || slot < 0 || slot >= topology.SlotCount {
			return redirect{}, false
		}
		addr := f[2]
		if host, port, err := net.SplitHostPort(addr); err == nil && host == "" {
			h, _, _ := net.SplitHostPort(from)
			addr = net.JoinHostPort(h, port)
		}
		return redirect{kind: se.Prefix, slot: uint16(slot), addr: addr}, true
	case "TRYAGAIN", "CLUSTERDOWN", "LOADING", "MASTERDOWN":
		return redirect{kind: se.Prefix}, true
	}
	return redirect{}, false
}

// waitedOutError is the error of a command that the cluster kept refusing
// (CLUSTERDOWN, TRYAGAIN, an unreachable node, ...) until its context
// ended. It matches both causes.
type waitedOutError struct{ last, ctx error }

func (e *waitedOutError) Error() string {
	return "respire: the cluster answered " + transport.Trim(e.last) + " until the context ended: " + e.ctx.Error()
}

func (e *waitedOutError) Unwrap() []error { return []error{e.last, e.ctx} }

// maxRedirects bounds the MOVED and ASK redirects one command follows.
// Waits for a cluster that cannot serve the command yet (CLUSTERDOWN,
// TRYAGAIN, an unreachable node) are bounded by the caller's context, and
// by maxAttempts should that have no deadline.
const (
	maxRedirects = 16
	maxAttempts  = 1000
)

// clusterPause is the pause before trying again a command that the
// cluster could not run yet (TRYAGAIN, CLUSTERDOWN, ...) or whose node
// could not be reached; a new topology ends it early.
func clusterPause(attempt int) time.Duration {
	return min(time.Millisecond<<min(attempt, 7), 100*time.Millisecond)
}

// pause waits for d, a topology change, or the end of ctx (false).
func (c *Client) pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.cl.Changed():
	case <-ctx.Done():
		return false
	}
	return true
}

// askingPayload is ASKING, sent before a command redirected by ASK.
var askingPayload = resp.AppendCommand(nil, "ASKING")

type askingReq struct {
	transport.Request
	err error
}

func (a *askingReq) HandleReply(m resp.Msg) {
	if n := m.Top(); n.IsError() {
		a.err = newServerError("ASKING", n)
	}
}
func (a *askingReq) Recycle() {}

// execCluster runs x, sealed with its decoder set, on the node that serves
// its slot, following redirects. The contract is exec's: on error x has
// been given back. Transport errors are not wrapped with the command's
// name: the caller does that.
func (c *Client) execCluster(ctx context.Context, x *cmd) error {
	if fanOut(x) {
		return c.execFanOut(ctx, x)
	}
	slot, keyed, err := slotOf(x)
	if err != nil {
		x.Recycle()
		return err
	}
	readonly := x.info.flags&flagReadonly != 0
	blocking := x.info.flags&flagBlocking != 0
	rf := topology.ReadPrimary
	if readonly {
		rf = topology.ReadFrom(c.opts.ReadFrom)
	}
	retries := int(x.Retries)
	redirects := 0
	// ask is the node of an ASK redirect; moved that of a MOVED one for a
	// command whose keys the client does not know (EVAL through Do, ...),
	// which a random primary would likely send elsewhere again.
	var ask, moved *topology.Node
	for attempt := 0; ; attempt++ {
		var n *topology.Node
		switch {
		case ask != nil:
			n = ask
		case moved != nil:
			n, moved = moved, nil
		case keyed:
			n, err = c.cl.Route(ctx, slot, rf)
		default:
			n, err = c.cl.Any(ctx)
		}
		if err != nil {
			x.Recycle()
			return err
		}
		abandoned := false
		switch {
		case ask != nil:
			a := &askingReq{}
			a.Init(a)
			a.SetPayload(askingPayload)
			err = n.Mux.DoMulti(ctx, []*transport.Request{&a.Request, &x.Request})
			ask = nil
			if err != nil {
				return err // DoMulti recycled x
			}
		case blocking:
			if err = n.Pool.Do(ctx, &x.Request); err != nil {
				return err // the pool recycled x
			}
		default:
			abandoned, err = n.Mux.Try(ctx, &x.Request)
		}
		if err != nil {
			if abandoned || attempt >= maxAttempts || ctx.Err() != nil {
				if !abandoned {
					x.Recycle()
				}
				// A node that let the deadline pass with the command in
				// flight, or that refused it, may be stopped or cut off:
				// the cluster may be failing it over. One that was only
				// slow to accept a new connection is not suspected.
				if abandoned || !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
					c.cl.Suspect(n)
				}
				return err
			}
			var ce *ConnError
			switch {
			case c.closed.Load():
			case errors.Is(err, ErrNotSent):
				// The node could not be reached: the topology may have
				// moved on; ask for it and try again.
				c.cl.Suspect(n)
				if rf != topology.ReadPrimary && rf != topology.ReadReplica {
					rf = topology.ReadPrimary
				}
				if c.pause(ctx, clusterPause(attempt)) {
					continue
				}
			case errors.As(err, &ce) && retries > 0:
				retries--
				c.cl.Suspect(n)
				if c.pause(ctx, clusterPause(attempt)) {
					continue
				}
			case errors.As(err, &ce):
				c.cl.Suspect(n)
			}
			x.Recycle()
			return err
		}
		rd, ok := redirectOf(x.replyErr, n.Addr)
		if ok && (rd.kind == "MOVED" || rd.kind == "ASK") {
			redirects++
		}
		if !ok || redirects > maxRedirects || attempt >= maxAttempts {
			return nil
		}
		last := x.replyErr
		x.replyErr = nil
		switch rd.kind {
		case "MOVED":
			c.cl.Moved(rd.slot, rd.addr)
			if !keyed {
				moved = c.cl.Node(rd.addr)
			}
		case "ASK":
			ask = c.cl.Node(rd.addr)
		case "LOADING":
			if rf == topology.ReadPreferReplica || rf == topology.ReadNearest {
				rf = topology.ReadPrimary
				continue
			}
			fallthrough
		default:
			if !c.pause(ctx, clusterPause(attempt)) {
				x.Recycle()
				return transport.NotSent(&waitedOutError{last: last, ctx: ctx.Err()})
			}
		}
	}
}

// wrapCluster names the command in a transport error of execCluster; an
// argument error is returned as it is.
func (c *Client) wrapCluster(name string, err error) error {
	var ae *ArgError
	var ce *CommandError
	if errors.As(err, &ae) || errors.As(err, &ce) {
		return err
	}
	return c.wrapErr(name, err)
}

// hold lends a connection for a transaction or a callback: of the blocking
// pool on a single server; on a cluster, of the node at (an ASK target),
// else of the slot's primary when keyed, else of any primary.
func (c *Client) hold(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error) {
	return c.be.hold(ctx, slot, keyed, at)
}

// holdCluster is hold on a cluster.
func (c *Client) holdCluster(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error) {
	n := at
	var err error
	switch {
	case n != nil:
	case keyed:
		n, err = c.cl.Route(ctx, slot, topology.ReadPrimary)
	default:
		n, err = c.cl.Any(ctx)
	}
	if err != nil {
		return nil, err
	}
	return n.Pool.Hold(ctx)
}
