package respire

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync/atomic"
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
func (k *clusterBackend) pause(ctx context.Context, d time.Duration) bool { return k.cl.Pause(ctx, d) }

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
func (k *clusterBackend) execCluster(ctx context.Context, x *cmd) error {
	c := k.c
	if fanOut(x) {
		return k.execFanOut(ctx, x)
	}
	slot, keyed, err := slotOf(x)
	if err != nil {
		x.Recycle()
		return err
	}
	rf := topology.ReadPrimary
	if x.info.flags&flagReadonly != 0 && c.opts.ReadFrom != ReadPrimary && !primaryReads(ctx) {
		rf = c.opts.ReadFrom.route()
	}
	return k.cl.Exec(ctx, x, topology.Route{
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

// clusterBackend is a cluster's slot map: the nodes' connections, the
// sharded pub/sub that follows slots, and the redirect handling
// (internal/topology/exec.go). A GET's path: Client.Get (zz_commands.go)
// → execStr (methods.go) → Client.exec (command.go) → clusterBackend.exec
// → execCluster, here → topology.Cluster.Exec (routing, redirects,
// retries) → the node's transport.Mux.Do.
type clusterBackend struct {
	c        *Client
	cl       *topology.Cluster
	shards   *topology.ShardedPubSub
	nodeInfo atomic.Pointer[transport.ConnInfo]
}

// newClusterBackend makes the topology of a cluster client; cfg is the
// client's connection config, its tracer's and interceptors' hooks
// included.
func newClusterBackend(c *Client, opts *Options, cfg transport.Config) *clusterBackend {
	k := &clusterBackend{c: c, cl: newCluster(opts, cfg)}
	k.shards = topology.NewShardedPubSub(k.cl, cfg)
	return k
}

// exec is backend.exec on a cluster.
func (k *clusterBackend) exec(ctx context.Context, x *cmd, dec decoder) error {
	c := k.c
	x.dec = dec
	x.sealRefs()
	if x.info.flags&flagReadonly != 0 {
		x.Retries = c.retries
		x.ReadOnly = true
	}
	if !x.keyed && c.conns > 1 {
		x.Route = c.rr.Add(1)
	}
	name := x.info.name
	if err := k.execCluster(ctx, x); err != nil {
		return c.wrapCluster(ctx, name, err)
	}
	return c.replied(ctx, x)
}

func (k *clusterBackend) send(ctx context.Context, x *cmd) error { return k.execCluster(ctx, x) }

// hold is backend.hold: a connection of the node at (an ASK target), else
// of the slot's primary when keyed, else of any primary.
func (k *clusterBackend) hold(ctx context.Context, slot uint16, keyed bool, at *topology.Node) (*transport.Held, error) {
	n := at
	if n == nil {
		var err error
		if n, err = k.primaryFor(ctx, slot, keyed); err != nil {
			return nil, err
		}
	}
	return n.Pool.Hold(ctx)
}

// primaryFor returns the primary of slot, or any node for commands
// without keys.
func (k *clusterBackend) primaryFor(ctx context.Context, slot uint16, keyed bool) (*topology.Node, error) {
	if keyed {
		return k.cl.Route(ctx, slot, topology.ReadPrimary)
	}
	return k.cl.Any(ctx)
}

func (k *clusterBackend) connect(ctx context.Context) error {
	if err := k.cl.Connect(ctx); err != nil {
		return err
	}
	k.cl.ConnectZones(ctx)
	return nil
}

// closeWatch stops the re-homing of sharded subscriptions and closes
// their per-node hubs.
func (k *clusterBackend) closeWatch() { k.shards.Close() }

func (k *clusterBackend) close() error {
	k.cl.Close()
	return nil
}

func (k *clusterBackend) addr() string            { return k.cl.Seed() }
func (k *clusterBackend) sentinelPrimary() string { return "" }

func (k *clusterBackend) eachPool(f func(*transport.Mux, *transport.BlockingPool)) {
	for _, n := range k.cl.Nodes() {
		f(n.Mux, n.Pool)
	}
}

// serverInfo is backend.serverInfo: the first node that connected (the
// nodes of one cluster run one server version).
func (k *clusterBackend) serverInfo() *transport.ConnInfo {
	if si := k.nodeInfo.Load(); si != nil {
		return si
	}
	for _, n := range k.cl.Nodes() {
		if si := n.Mux.ServerInfo(); si != nil {
			k.nodeInfo.Store(si)
			return si
		}
	}
	return nil
}

// newHub makes the client's pub/sub hub, from cfg, the client's
// connection config: it dials any primary (anyNodeAddr), and a broken
// connection asks for a topology refresh, as a broken command connection
// does.
func (k *clusterBackend) newHub(cfg transport.Config) *transport.PubSub {
	cfg.Resolve = k.anyNodeAddr
	hub := transport.NewPubSub(cfg)
	hub.SetHooks(transport.PubSubHooks{Lost: func(error) { k.cl.Urgent() }})
	return hub
}

// anyNodeAddr is the address the pub/sub hub of a cluster client dials:
// any primary (SUBSCRIBE and PUBLISH reach every node of a cluster).
func (k *clusterBackend) anyNodeAddr() string {
	ctx, cancel := context.WithTimeout(context.Background(), k.c.dialTimeout())
	defer cancel()
	if n, err := k.cl.Any(ctx); err == nil {
		return n.Addr
	}
	return k.cl.Seed()
}

// refuse is backend.refuse: SELECT has its own reason on a cluster.
func (k *clusterBackend) refuse(args []any) error { return refuseConnState(args, true, false) }

// doKeys is backend.doKeys: Do's keys route its command.
func (k *clusterBackend) doKeys(x *cmd, info *cmdInfo, args []any) { clusterKeys(x, info, args) }

// shardSet is backend.shardSet: the sharded channels of a subscription
// follow their slots' primaries.
func (k *clusterBackend) shardSet(sub *transport.Subscription) *topology.ShardSet {
	return k.shards.NewSet(sub)
}

// txSlot is backend.txSlot: a transaction's keys must all be in one slot,
// which is checked before anything is sent.
func (k *clusterBackend) txSlot(cmds []*cmd) (uint16, bool, error) {
	return oneSlot(cmds, "MULTI", "a transaction on a cluster runs on one node")
}

// oneSlot returns the slot of the keys of cmds, and whether they have any;
// keys of two slots give the ErrCrossSlot error of command, saying why.
func oneSlot(cmds []*cmd, command, why string) (uint16, bool, error) {
	var slot uint16
	var keyed bool
	var first string
	for _, x := range cmds {
		s, ok, err := slotOf(x)
		if err != nil {
			return 0, false, err
		}
		if !ok {
			continue
		}
		if keyed && s != slot {
			return 0, false, crossSlot(command, why, first, slot, x.keys[0], s)
		}
		if !keyed {
			slot, keyed, first = s, true, x.keys[0]
		}
	}
	return slot, keyed, nil
}

// watchSlot is backend.watchSlot: a Watch runs on the primary that serves
// its keys, which must share a slot.
func (k *clusterBackend) watchSlot(keys []string) (uint16, bool, error) {
	if len(keys) == 0 {
		return 0, false, nil
	}
	slot, err := keysSlot("WATCH", "", keys)
	return slot, err == nil, err
}

// txRedirected is backend.txRedirected: the cluster refused a whole
// transaction (EXECABORT) for the redirect rd, so nothing ran; it says
// whether to run it again, and on which node when ASK named one.
func (k *clusterBackend) txRedirected(ctx context.Context, rd redirect, attempt int) (*topology.Node, bool) {
	return k.cl.Redirected(ctx, rd, attempt, topology.FollowAll)
}
