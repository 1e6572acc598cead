package topology

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/transport"
	"github.com/respire-go/respire/internal/transport/resp"
)

// Options configures a Cluster.
type Options struct {
	// Seeds are addresses of some of the cluster's nodes, asked for the
	// topology until one answers.
	Seeds []string
	// Node is the template of every node's connections (credentials, TLS,
	// protocol, timeouts); Addr and NodeID are set per node.
	Node transport.Config
	// PoolSize bounds each node's blocking pool.
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
}

// shard routes one set of slots.
type shard struct {
	primary  *Node
	replicas []*Node
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
	changed chan struct{} // closed and replaced when routes change or a fetch fails
	lastErr error         // of the last failed fetch
	closed  bool

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
)

// Route returns the node that serves slot for the read mode (ReadPrimary
// for anything but read-only commands), waiting for a topology or an owner
// until ctx ends.
func (c *Cluster) Route(ctx context.Context, slot uint16, rf ReadFrom) (*Node, error) {
	for {
		r := c.cur.Load()
		if r != nil {
			if sh := r.slots[slot].Load(); sh != nil {
				switch {
				case rf == ReadPrimary || len(sh.replicas) == 0 && rf != ReadReplica:
					return sh.primary, nil
				case rf == ReadNearest:
					return nearest(sh), nil
				case len(sh.replicas) > 0:
					return sh.replicas[rand.IntN(len(sh.replicas))], nil
				}
				return nil, transport.NotSent(fmt.Errorf("%w (slot %d)", ErrNoReplica, slot))
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

func (c *Cluster) refreshLoop() {
	periodic := time.NewTicker(c.opts.RefreshInterval)
	defer periodic.Stop()
	var last time.Time
	timer := time.NewTimer(0)
	<-timer.C
	defer timer.Stop()
	for {
		var wait time.Duration
		select {
		case <-c.ctx.Done():
			return
		case <-periodic.C:
		case <-c.kick:
			// A MOVED: its slot is patched already; give the cluster a
			// moment to tell every node, so that the fetch finds the new
			// view wherever it asks.
			wait = max(c.opts.RefreshGap-time.Since(last), settle)
		case <-c.urgent:
			wait = c.opts.UrgentGap - time.Since(last)
		}
		if wait > 0 && !last.IsZero() {
			timer.Reset(wait)
			select {
			case <-c.ctx.Done():
				return
			case <-timer.C:
			case <-c.urgent:
				// A node failed meanwhile: do not wait longer than for it.
				if !timer.Stop() {
					<-timer.C
				}
				if w := c.opts.UrgentGap - time.Since(last); w > 0 {
					timer.Reset(w)
					select {
					case <-c.ctx.Done():
						return
					case <-timer.C:
					}
				}
			}
		}
		last = time.Now()
		c.fetch()
		// Requests that came in while fetching were answered by it.
		select {
		case <-c.kick:
		default:
		}
		// While the cluster reports a primary as failed and callers have
		// found it failing, keep asking every UrgentGap without waiting
		// for another caller to fail: callers stuck on a stopped node
		// fail only at their deadlines, and a replica may be promoted any
		// moment. A primary that hands its slots over in good health
		// (a TAKEOVER, a reshard) is not polled for.
		if c.primaryFailing() {
			signal(c.urgent)
		}
	}
}

// settle is how long a refresh asked for by a redirect waits at least.
const settle = 250 * time.Millisecond

// fetchTimeout bounds how long one node is waited on for the topology, and
// maxAsked how many nodes one refresh asks at most.
const (
	fetchTimeout = time.Second
	maxAsked     = 3
)

// fetch asks nodes for the topology, one after the other, until one gives
// a view it can adopt.
func (c *Cluster) fetch() {
	var errs []error
	var pending *View // a changed view, waiting for a second node to agree
	var pendingFrom *Node
	for i, n := range c.candidates() {
		if i == maxAsked {
			break
		}
		// A node that does not answer in a second (stopped, partitioned)
		// must not hold up the others.
		ctx, cancel := context.WithTimeout(c.ctx, fetchTimeout)
		v, err := c.ask(ctx, n)
		cancel()
		if c.ctx.Err() != nil {
			return
		}
		if err != nil {
			c.Suspect(n)
			errs = append(errs, fmt.Errorf("%s: %w", n.Addr, err))
			continue
		}
		if stale := c.staleSlot(v); stale >= 0 {
			errs = append(errs, fmt.Errorf("%s: a view older than the MOVED for slot %d", n.Addr, stale))
			continue
		}
		// The first view is adopted as it comes (one fetch on first use,
		// checked node by node by CLUSTER MYID); a view that moves slots
		// must be confirmed by a second node, so that one node's stale or
		// foreign view cannot redirect traffic.
		cur := c.cur.Load()
		switch {
		case cur == nil || cur.movesOnlyFailing(v):
		case pending != nil && sameOwners(pending, v):
		default:
			if pending == nil {
				pending, pendingFrom = v, n
			} else {
				errs = append(errs, fmt.Errorf("%s and %s disagree on the slot owners", pendingFrom.Addr, n.Addr))
				pending, pendingFrom = v, n
			}
			continue
		}
		if err = c.adopt(v); err == nil {
			return
		}
		errs = append(errs, fmt.Errorf("%s: %w", n.Addr, err))
	}
	if pending != nil {
		errs = append(errs, fmt.Errorf("%s: a changed topology no other node confirmed", pendingFrom.Addr))
	}
	c.mu.Lock()
	if len(errs) == 0 {
		errs = append(errs, errors.New("no node to ask"))
	}
	c.lastErr = errors.Join(errs...)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// primaryFailing reports whether a primary of the current view is both
// reported failed by the cluster and suspected by this client.
func (c *Cluster) primaryFailing() bool {
	r := c.cur.Load()
	if r == nil {
		return false
	}
	for _, sh := range r.shards {
		if sh.failing && sh.primary.suspected() {
			return true
		}
	}
	return false
}

// serves reports whether n is the primary of a shard of r.
func (r *routes) serves(n *Node) bool {
	for _, sh := range r.shards {
		if sh.primary == n {
			return true
		}
	}
	return false
}

// movesOnlyFailing reports whether v gives every slot the primary r routes
// it to, or moves it only where the evidence says: away from a primary
// that is failing (suspected: a failover, which callers are waiting for
// and which the cluster itself decided), or to the node a MOVED from the
// slot's old owner named. Any other move needs a second node's word.
func (r *routes) movesOnlyFailing(v *View) bool {
	o := v.owners()
	for i := range o {
		sh := r.slots[i].Load()
		switch {
		case sh == nil && o[i] == "":
		case sh != nil && sh.primary.ID == o[i]:
		case sh != nil && sh.primary.ID == "" && sh.primary.Addr == v.addrOf(o[i]):
			// A redirect's target, whose id we learn from this view.
		case sh != nil && sh.primary.suspected():
		case sh != nil && v.addrOf(o[i]) != "" && sh.primary.movedToAddr() == v.addrOf(o[i]):
		default:
			return false
		}
	}
	return true
}

// addrOf returns the address of the primary with id in v, or "".
func (v *View) addrOf(id string) string {
	for _, s := range v.Shards {
		if s.Primary.ID == id {
			return s.Primary.Addr
		}
	}
	return ""
}

func (n *Node) movedToAddr() string {
	if a := n.movedTo.Load(); a != nil {
		return *a
	}
	return ""
}

// Suspect marks n as failing (a connection error, a timeout): it is asked
// for the topology only after the others for a while, and a refresh is
// asked for.
func (c *Cluster) Suspect(n *Node) {
	n.suspect.Store(time.Now().Add(suspectFor).UnixNano())
	c.Urgent()
}

// stalledFor is how long a connection to a primary that lost its slots
// while suspected must have read nothing, with requests in flight, for
// them to be failed with ErrFailedOver. A failover takes the cluster's
// node timeout at least (seconds), so a stopped node's connections are
// silent for far longer by the time its slots move.
const stalledFor = time.Second

// suspectFor is how long a failing node is asked last.
const suspectFor = 5 * time.Second

func (n *Node) suspected() bool { return time.Now().UnixNano() < n.suspect.Load() }

// candidates lists the nodes to ask, primaries of the current view first
// (in random order), then replicas, then the seeds.
func (c *Cluster) candidates() []*Node {
	var out []*Node
	if r := c.cur.Load(); r != nil {
		for _, i := range rand.Perm(len(r.shards)) {
			out = append(out, r.shards[i].primary)
		}
		for _, sh := range r.shards {
			out = append(out, sh.replicas...)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	for _, s := range c.opts.Seeds {
		n := c.nodes[s]
		if n == nil {
			n = c.nodeLocked(s, "")
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	// Suspected nodes last, in their order.
	slices.SortStableFunc(out, func(a, b *Node) int {
		switch sa, sb := a.suspected(), b.suspected(); {
		case sa == sb:
			return 0
		case sa:
			return 1
		}
		return -1
	})
	return out
}

// ask sends CLUSTER SHARDS (or CLUSTER SLOTS, on servers without it) to n.
func (c *Cluster) ask(ctx context.Context, n *Node) (*View, error) {
	c.fetches.Add(1)
	v, err := roundTrip(ctx, n.Mux, "CLUSTER", "SHARDS")
	if err == nil && v.Type != resp.TypeSimpleError && v.Type != resp.TypeBulkError {
		return ParseShards(v, c.opts.Node.TLS != nil, n.Addr)
	}
	if err != nil {
		return nil, err
	}
	v, err = roundTrip(ctx, n.Mux, "CLUSTER", "SLOTS")
	if err != nil {
		return nil, err
	}
	if v.Type == resp.TypeSimpleError || v.Type == resp.TypeBulkError {
		se := transport.NewServerError(v.Str)
		se.Command = "CLUSTER SLOTS"
		return nil, se
	}
	return ParseSlots(v, n.Addr)
}

// adopt installs v, unless it comes from another cluster: once a view was
// adopted, a new one must share a node id with it.
func (c *Cluster) adopt(v *View) error {
	if len(v.Shards) == 0 {
		return errors.New("topology has no shard with slots")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return transport.ErrClosed
	}
	old := c.cur.Load()
	if old != nil {
		known := false
		for _, id := range v.ids() {
			if old.ids[id] {
				known = true
				break
			}
		}
		if !known {
			return errors.New("topology names none of the known nodes: another cluster, not adopted")
		}
	}
	next := &routes{ids: map[string]bool{}}
	keep := map[string]bool{}
	for _, s := range v.Shards {
		sh := &shard{primary: c.nodeLocked(s.Primary.Addr, s.Primary.ID), failing: !s.Primary.Healthy}
		keep[s.Primary.Addr] = true
		next.ids[s.Primary.ID] = true
		for _, r := range s.Replicas {
			next.ids[r.ID] = true
			if c.opts.Replicas {
				sh.replicas = append(sh.replicas, c.nodeLocked(r.Addr, r.ID))
				keep[r.Addr] = true
			}
		}
		for _, rg := range s.Ranges {
			for i := rg[0]; i <= rg[1]; i++ {
				next.slots[i].Store(sh)
			}
		}
		next.shards = append(next.shards, sh)
	}
	// A primary that lost its slots while failing (stopped, cut off) will
	// not answer the requests it holds: fail them now, so that their
	// callers need not wait for their deadlines to try the new owner. Only
	// connections silent for stalledFor with requests in flight are
	// broken: a primary that handed its slots over in good health (a
	// manual failover, a takeover) answers them itself, with a reply or a
	// MOVED, even when this client suspected it of being slow.
	if old != nil {
		for _, sh := range old.shards {
			p := sh.primary
			if p.suspected() && !next.serves(p) {
				p.Mux.BreakStalled(ErrFailedOver, stalledFor)
			}
		}
	}
	// Nodes that left the view are closed; seeds stay to be asked again.
	for addr, n := range c.nodes {
		if !keep[addr] && !slices.Contains(c.opts.Seeds, addr) {
			delete(c.nodes, addr)
			go closeNode(n)
		}
	}
	c.lastErr = nil
	clear(c.patched)
	c.publishLocked(next)
	return nil
}

// staleSlot returns a slot that v gives to another node than a MOVED
// received since the last adoption did, or -1.
func (c *Cluster) staleSlot(v *View) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.patched) == 0 {
		return -1
	}
	owner := map[uint16]string{}
	for _, s := range v.Shards {
		for _, rg := range s.Ranges {
			for slot := range c.patched {
				if int(slot) >= rg[0] && int(slot) <= rg[1] {
					owner[slot] = s.Primary.Addr
				}
			}
		}
	}
	for slot, addr := range c.patched {
		if owner[slot] != addr {
			return int(slot)
		}
	}
	return -1
}

// fetchReq is a request whose reply is kept as a tree.
type fetchReq struct {
	transport.Request
	v resp.Value
}

func (f *fetchReq) HandleReply(m resp.Msg) { f.v = m.Tree() }
func (f *fetchReq) Recycle()               {}

func roundTrip(ctx context.Context, m *transport.Mux, args ...string) (resp.Value, error) {
	f := &fetchReq{}
	f.Init(f)
	f.SetPayload(resp.AppendCommand(nil, args...))
	if err := m.Do(ctx, &f.Request); err != nil {
		return resp.Value{}, err
	}
	return f.v, nil
}

// permanent reports an error that trying again will not fix soon.
func permanent(err error) bool {
	var he *transport.HandshakeError
	return errors.As(err, &he) && he.Permanent()
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
