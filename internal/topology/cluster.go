package topology

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// Options configures a Cluster.
type Options struct {
	// Seeds are addresses of some of the cluster's nodes, asked for the
	// topology until one answers.
	Seeds []string
	// Node is the template of every node's connections (credentials, TLS,
	// protocol, timeouts); Addr and NodeID are set per node.
	Node transport.Config
	// PoolSize bounds each node's blocking pool; 0 means the transport's
	// default.
	PoolSize int
	// Replicas opens connections to replicas too (with READONLY), for
	// replica reads.
	Replicas bool
	// RefreshInterval is how often the topology is fetched while nothing
	// asks for it. Default 30s.
	RefreshInterval time.Duration
	// RefreshGap is the shortest time between two fetches asked for by
	// redirects (MOVED), which patch the slot map at once anyway. Default
	// 2s.
	RefreshGap time.Duration
	// UrgentGap is the shortest time between two fetches while a node that
	// owns slots cannot be reached, and the time between two while the
	// cluster reports such a node failed. Default 50ms.
	UrgentGap time.Duration
	// Latency measures every node's round trip (a PING each
	// LatencyInterval), for ReadNearest.
	Latency bool
	// LatencyInterval is how often nodes are pinged when Latency is set.
	// Default 1s.
	LatencyInterval time.Duration
	// Zone is the client's availability zone, for ReadZoneReplica and
	// ReadZone (zones.go).
	Zone string
}

func (o *Options) defaults() {
	if o.RefreshInterval <= 0 {
		o.RefreshInterval = 30 * time.Second
	}
	if o.RefreshGap <= 0 {
		o.RefreshGap = 2 * time.Second
	}
	if o.UrgentGap <= 0 {
		o.UrgentGap = 50 * time.Millisecond
	}
	if o.LatencyInterval <= 0 {
		o.LatencyInterval = defaultLatencyInterval
	}
}

// Node is one server of the cluster with its connections.
type Node struct {
	Addr string
	ID   string // "" for a seed whose id is not known yet
	Mux  *transport.Mux
	Pool *transport.BlockingPool

	suspect atomic.Int64 // unix nanoseconds until which the node is suspected failing
	// movedTo is where a MOVED redirect last said one of the node's slots
	// went: a view moving its other slots there is expected.
	movedTo atomic.Pointer[string]
	rtt     atomic.Int64 // measured round trip in nanoseconds, 0 before any
	// viewZone is the zone the adopted view gives the node (zones.go).
	viewZone atomic.Pointer[string]
	probed   atomic.Bool // a connection was dialed to learn its zone from HELLO
}

// shard routes one set of slots.
type shard struct {
	primary  *Node
	replicas []*Node
	// standby are the primary's replicas, whether or not reads go to
	// them: asked first for the topology while the primary is failing.
	// Their connections are dialed only then.
	standby []*Node
	// failing says the view reported the primary as failed: the cluster
	// itself has given up on it, and a replica may be promoted any moment.
	failing bool
}

// routes is a snapshot of the slot map. Only its slots change after it is
// published, one at a time, when a MOVED redirect patches them.
type routes struct {
	slots  [SlotCount]atomic.Pointer[shard]
	shards []*shard
	ids    map[string]bool // every node id of the adopted view
}

// ErrNoTopology is wrapped by the error of a command sent before any node
// of the cluster described it, when the context ends first.
var ErrNoTopology = errors.New("respire: no cluster topology yet")

// ErrSlotUnserved is wrapped by the error of a command whose slot no
// primary serves (the cluster is down for it, or resharding left a gap)
// until its context ended.
var ErrSlotUnserved = errors.New("respire: slot not served by any node")

// ErrFailedOver is the cause given to requests in flight on a primary that
// was failing when the cluster gave its slots to another node.
var ErrFailedOver = errors.New("respire: the node failed and its slots went to another node")

// ErrNodeStalled is wrapped by the error of a command held back from a
// node suspected of failing, whose connections answer nothing, until its
// context ended: the command was not sent.
var ErrNodeStalled = errors.New("respire: held back from a node that stopped answering")

// ErrNoReplica is wrapped by the error of a read that must go to a replica
// when the slot's shard has none.
var ErrNoReplica = errors.New("respire: no replica serves the slot")

// Cluster tracks the topology of a cluster and the nodes' connections. It
// is safe for concurrent use.
type Cluster struct {
	opts   Options
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	cur     atomic.Pointer[routes]
	fetches atomic.Int64

	mu    sync.Mutex
	nodes map[string]*Node // by address
	// patched holds the slots MOVED redirects moved since the last
	// adoption, with their new owners' addresses: a view that gives one
	// back to its old owner is older than the redirect, and not adopted.
	patched map[uint16]string
	// patchedAt is when the latest MOVED patched the slot map.
	patchedAt time.Time
	changed   chan struct{} // closed and replaced when routes change or a fetch fails
	lastErr   error         // of the last failed fetch
	closed    bool

	kick   chan struct{} // asks for a fetch, rate-limited by RefreshGap
	urgent chan struct{} // asks for a fetch, rate-limited by UrgentGap
}

// New returns a Cluster that fetches its first topology at once, in the
// background.
func New(opts Options) *Cluster {
	opts.defaults()
	c := &Cluster{
		opts:    opts,
		nodes:   map[string]*Node{},
		patched: map[uint16]string{},
		changed: make(chan struct{}),
		kick:    make(chan struct{}, 1),
		urgent:  make(chan struct{}, 1),
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.refreshLoop() }()
	if opts.Latency {
		c.wg.Add(1)
		go func() { defer c.wg.Done(); c.latencyLoop() }()
	}
	c.Urgent()
	return c
}

// Close closes every node's connections and stops refreshing.
func (c *Cluster) Close() {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	nodes := c.nodes
	c.nodes = map[string]*Node{}
	c.mu.Unlock()
	c.cancel()
	c.wg.Wait()
	for _, n := range nodes {
		closeNode(n)
	}
}

func closeNode(n *Node) {
	n.Pool.Close()
	n.Mux.Close()
}

// Fetches is the number of topology fetches sent so far.
func (c *Cluster) Fetches() int64 { return c.fetches.Load() }

// Refresh asks for a new topology, at most once per RefreshGap.
func (c *Cluster) Refresh() { signal(c.kick) }

// Urgent asks for a new topology at most once per UrgentGap: a node that
// owns slots could not be reached.
func (c *Cluster) Urgent() { signal(c.urgent) }

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Changed returns a channel closed at the next change of routes or failed
// fetch, to wait on instead of a timer.
func (c *Cluster) Changed() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.changed
}

// ReadFrom chooses the node of a read-only command.
type ReadFrom int

const (
	// ReadPrimary reads from the slot's primary.
	ReadPrimary ReadFrom = iota
	// ReadPreferReplica reads from a replica, or the primary when the
	// shard has none.
	ReadPreferReplica
	// ReadReplica reads from a replica only.
	ReadReplica
	// ReadNearest reads from the node of the shard (primary or replica)
	// with the lowest measured round trip (Options.Latency).
	ReadNearest
	// ReadZoneReplica reads from a replica in Options.Zone, else another
	// replica, else the primary (zones.go).
	ReadZoneReplica
	// ReadZone reads from a replica in Options.Zone, else the primary if
	// it is in the zone, else another replica, else the primary.
	ReadZone
)

// Route returns the node that serves slot for the read mode (ReadPrimary
// for anything but read-only commands), waiting for a topology or an owner
// until ctx ends.
//
// A node suspected of failing whose connections have answered nothing for
// a while with requests in flight (stopped, cut off) is not sent more: the
// caller waits (hold) until the node reads again, the routes change (its
// slots went to a promoted replica) or ctx ends, when the command fails as
// not sent rather than with an unknown outcome.
func (c *Cluster) Route(ctx context.Context, slot uint16, rf ReadFrom) (*Node, error) {
	for held := 0; ; {
		r := c.cur.Load()
		if r != nil {
			if sh := r.slots[slot].Load(); sh != nil {
				var n *Node
				switch {
				case rf == ReadPrimary || len(sh.replicas) == 0 && rf != ReadReplica:
					n = sh.primary
				case rf == ReadNearest:
					n = nearest(sh)
				case rf.zoned():
					n = c.inZone(sh, rf)
				case len(sh.replicas) > 0:
					n = sh.replicas[rand.IntN(len(sh.replicas))]
				default:
					return nil, transport.NotSent(fmt.Errorf("%w (slot %d)", ErrNoReplica, slot))
				}
				if !n.stalled() {
					return n, nil
				}
				if err := c.hold(ctx, n, held); err != nil {
					return nil, err
				}
				held++
				continue
			}
		}
		if err := c.await(ctx, r, slot); err != nil {
			return nil, err
		}
	}
}

// Any returns some primary, for commands without keys.
func (c *Cluster) Any(ctx context.Context) (*Node, error) {
	for {
		r := c.cur.Load()
		if r != nil && len(r.shards) > 0 {
			return r.shards[rand.IntN(len(r.shards))].primary, nil
		}
		if err := c.await(ctx, r, 0); err != nil {
			return nil, err
		}
	}
}

// Primaries returns every primary, for commands fanned out to all shards.
func (c *Cluster) Primaries(ctx context.Context) ([]*Node, error) {
	for {
		r := c.cur.Load()
		if r != nil && len(r.shards) > 0 {
			out := make([]*Node, len(r.shards))
			for i, sh := range r.shards {
				out[i] = sh.primary
			}
			return out, nil
		}
		if err := c.await(ctx, r, 0); err != nil {
			return nil, err
		}
	}
}

// All returns every node, primaries first, for commands fanned out to all
// nodes.
func (c *Cluster) All(ctx context.Context) ([]*Node, error) {
	ps, err := c.Primaries(ctx)
	if err != nil {
		return nil, err
	}
	for _, sh := range c.cur.Load().shards {
		ps = append(ps, sh.replicas...)
	}
	return ps, nil
}

// await waits for routes newer than r, asking for a fetch. Before the
// first topology, a failed fetch ends the wait at once when its error is
// permanent (a wrong password), or when ctx has no deadline, as a client
// that never connected must not hang its callers.
func (c *Cluster) await(ctx context.Context, r *routes, slot uint16) error {
	c.Urgent()
	c.mu.Lock()
	ch, closed := c.changed, c.closed
	c.mu.Unlock()
	if closed {
		return transport.NotSent(transport.ErrClosed)
	}
	if c.cur.Load() != r {
		return nil
	}
	_, bounded := ctx.Deadline()
	select {
	case <-ch:
		if r != nil || c.cur.Load() != nil {
			return nil
		}
		c.mu.Lock()
		last := c.lastErr
		c.mu.Unlock()
		if last != nil && (permanent(last) || !bounded) {
			return transport.NotSent(fmt.Errorf("%w: %w", ErrNoTopology, last))
		}
		return nil
	case <-c.ctx.Done():
		return transport.NotSent(transport.ErrClosed)
	case <-ctx.Done():
		c.mu.Lock()
		last := c.lastErr
		c.mu.Unlock()
		base := ErrSlotUnserved
		if r == nil {
			base = ErrNoTopology
		}
		if last != nil {
			return transport.NotSent(fmt.Errorf("%w (slot %d): %w; last error: %s", base, slot, ctx.Err(), transport.Trim(last)))
		}
		return transport.NotSent(fmt.Errorf("%w (slot %d): %w", base, slot, ctx.Err()))
	}
}

// Moved applies a MOVED redirect: slot now belongs to the node at addr. The
// slot map is patched at once and a refresh asked for.
func (c *Cluster) Moved(slot uint16, addr string) {
	c.mu.Lock()
	r := c.cur.Load()
	if r == nil || c.closed {
		c.mu.Unlock()
		c.Refresh()
		return
	}
	n := c.nodeLocked(addr, "")
	target := &shard{primary: n}
	for _, sh := range r.shards {
		if sh.primary == n {
			target = sh
			break
		}
	}
	c.patched[slot] = addr
	c.patchedAt = time.Now()
	if old := r.slots[slot].Load(); old != nil && old.primary != n {
		// The old owner's other slots may well have gone the same way (a
		// failover, a resharding between two nodes): a view that says so
		// needs no second node's word.
		old.primary.movedTo.Store(&addr)
	}
	r.slots[slot].Store(target)
	c.mu.Unlock()
	c.Refresh()
}

// Node returns the node at addr, creating its connections (lazily dialed)
// when the topology does not know it yet: the target of an ASK redirect.
func (c *Cluster) Node(addr string) *Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nodeLocked(addr, "")
}

// SuspectAddr is Suspect for the node at addr, when the client has one
// there, and Urgent otherwise: for a connection of another kind (a pub/sub
// hub's) lost to the node.
func (c *Cluster) SuspectAddr(addr string) {
	c.mu.Lock()
	n := c.nodes[addr]
	c.mu.Unlock()
	if n == nil {
		c.Urgent()
		return
	}
	c.Suspect(n)
}

// nodeLocked returns the node at addr with id (any id when id is ""),
// replacing one whose id differs.
func (c *Cluster) nodeLocked(addr, id string) *Node {
	if n := c.nodes[addr]; n != nil && (id == "" || n.ID == id) {
		return n
	} else if n != nil && n.ID == "" {
		// A seed or a redirect's target, whose id we learn now: its
		// connections stay, so that the calls on them go on, and the id
		// is checked on every connection dialed from now on.
		n.ID = id
		n.Mux.ExpectNodeID(id)
		return n
	} else if n != nil {
		delete(c.nodes, addr)
		go closeNode(n)
	}
	cfg := c.opts.Node
	cfg.Addr = addr
	cfg.NodeID = id
	cfg.ReadOnly = c.opts.Replicas
	// A node that cannot be reached fails its callers at once: they ask
	// for a new topology and try the slot's new owner, rather than wait
	// for a node that may never come back.
	cfg.FailFast = true
	n := &Node{Addr: addr, ID: id, Mux: transport.NewMux(cfg), Pool: transport.NewBlockingPool(cfg, c.opts.PoolSize)}
	c.nodes[addr] = n
	return n
}

// publishLocked installs r and wakes the waiters.
func (c *Cluster) publishLocked(r *routes) {
	c.cur.Store(r)
	close(c.changed)
	c.changed = make(chan struct{})
}

// Connect waits for the first topology and connects to every primary,
// returning the first error.
func (c *Cluster) Connect(ctx context.Context) error {
	ps, err := c.Primaries(ctx)
	if err != nil {
		return err
	}
	for _, n := range ps {
		if err := n.Mux.Connect(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Nodes returns every node the client has connections to.
func (c *Cluster) Nodes() []*Node {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*Node, 0, len(c.nodes))
	for _, n := range c.nodes {
		out = append(out, n)
	}
	return out
}

// Seed returns the first seed address.
func (c *Cluster) Seed() string { return c.opts.Seeds[0] }
