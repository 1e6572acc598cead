package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// Cluster mode.
//
// A cluster client holds a topology.Cluster instead of one Mux: every
// command goes to the node that serves its keys' slot (CRC16 of the key or
// its {hash tag}), read-only ones to a replica when ReadFrom asks for it.
// The redirect loop is topology.Cluster.Exec (internal/topology/exec.go),
// which sees replies through the topology.Command that cmd implements: MOVED
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
	// ReadZoneReplica sends read-only commands to a replica in the
	// client's availability zone (Options.AvailabilityZone), else to a
	// replica in another zone, else to the primary: for deployments where
	// traffic between zones costs money or time but replicas take the
	// load off the primaries. A node's zone is what the server reports:
	// CLUSTER SHARDS on Valkey 9.1, HELLO on Valkey 8.1 and later (on
	// Sentinel replicas too); a node whose zone is not known counts as
	// another zone. A node that fails or is loading falls back to the
	// primary for that command. See docs/cluster.md.
	ReadZoneReplica
	// ReadZone sends read-only commands to a node in the client's
	// availability zone: a replica there, else the primary when it is
	// there; when neither is, to a replica in another zone, else to the
	// primary. It keeps reads inside the zone whenever the shard has a
	// node in it. Zones and fallbacks are as for ReadZoneReplica.
	ReadZone
)

// route is the topology's mode for r, one case per mode (Options.validate
// refuses others).
func (r ReadFrom) route() topology.ReadFrom {
	switch r {
	case ReadPreferReplica:
		return topology.ReadPreferReplica
	case ReadReplica:
		return topology.ReadReplica
	case ReadNearest:
		return topology.ReadNearest
	case ReadZoneReplica:
		return topology.ReadZoneReplica
	case ReadZone:
		return topology.ReadZone
	}
	return topology.ReadPrimary
}

// ErrCrossSlot is wrapped by the *ArgError of a command whose keys fall in
// different slots of a cluster and that cannot be split (only commands the
// spec marks multi_shard, such as MGET, DEL and MSET, are). Keys that share
// a {hash tag} share a slot.
var ErrCrossSlot = errors.New("respire: keys in different slots")

// ErrSlotUnserved is wrapped by the error of a command whose slot no
// primary of the cluster serves (its shard failed and had no replica to
// take over, or resharding left a gap) until its context ended.
var ErrSlotUnserved = topology.ErrSlotUnserved

// ErrNodeStalled is wrapped, with ErrNotSent and the context's error, by
// the error of a cluster command that was held back until its context
// ended: its node was suspected of failing and had answered nothing for
// a while with requests in flight (stopped, cut off, or being failed
// over). Commands are not piled onto such a node; they wait for it to
// answer again or for its slots to move to a promoted replica.
var ErrNodeStalled = topology.ErrNodeStalled

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
		Zone:            opts.AvailabilityZone,
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
type redirect = topology.Redirect

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
	return topology.ParseRedirect(se.Prefix, se.Message, from)
}

// waitedOutError is the error of a command that the cluster kept refusing
// until its context ended.
type waitedOutError = topology.WaitedOutError

// The bounds and pauses of the cluster's redirect loop (internal/topology).
const (
	maxRedirects = topology.MaxRedirects
	maxAttempts  = topology.MaxAttempts
)

// clusterPause is topology.PauseFor.
func clusterPause(attempt int) time.Duration { return topology.PauseFor(attempt) }

// pause waits for d, a topology change, or the end of ctx (false).
func (c *Client) pause(ctx context.Context, d time.Duration) bool { return c.cl.Pause(ctx, d) }

// askingPayload is ASKING, sent before a command redirected by ASK.
var askingPayload = topology.AskingPayload

// Req, Redirect and ClearReply make a cmd a topology.Command.
func (x *cmd) Req() *transport.Request { return &x.Request }

// Redirect reports the redirect x's reply asks for.
func (x *cmd) Redirect(from string) (topology.Redirect, bool) { return redirectOf(x.replyErr, from) }

// ClearReply forgets x's reply error before it is sent again.
func (x *cmd) ClearReply() error {
	err := x.replyErr
	x.replyErr = nil
	return err
}

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
	rf := topology.ReadPrimary
	if x.info.flags&flagReadonly != 0 {
		rf = c.opts.ReadFrom.route()
	}
	return c.cl.Exec(ctx, x, topology.Route{
		Slot:     slot,
		Keyed:    keyed,
		Blocking: x.info.flags&flagBlocking != 0,
		ReadFrom: rf,
		Retries:  int(x.Retries),
	})
}

// wrapCluster names the command in a transport error of execCluster; an
// argument error is returned as it is.
func (c *Client) wrapCluster(ctx context.Context, name string, err error) error {
	var ae *ArgError
	var ce *CommandError
	if errors.As(err, &ae) || errors.As(err, &ce) {
		return withCtx(ctx, err)
	}
	return c.wrapErr(ctx, name, err)
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
