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

// Refreshing the topology: the refresh loop, fetching CLUSTER SHARDS (or
// SLOTS) from the candidates in order, adopting a view, and suspecting
// nodes that fail.

func (c *Cluster) refreshLoop() {
	periodic := time.NewTicker(c.opts.RefreshInterval)
	defer periodic.Stop()
	probe := time.NewTicker(c.opts.UrgentGap)
	defer probe.Stop()
	var last time.Time
	// gap is the time between two urgent fetches: UrgentGap, doubled
	// after each urgent fetch that found nothing new, up to maxUrgentGap.
	// A node that cannot be reached is not failed over before the
	// cluster's node timeout (seconds) and the cluster reports it failed
	// before it promotes a replica (half a second later at least): polling
	// it fast before that would only load the nodes.
	gap := c.opts.UrgentGap
	maxGap := maxUrgentGaps * c.opts.UrgentGap
	// While a primary is suspected, its replicas are asked for their ROLE
	// every UrgentGap instead (watch): the one promoted answers master at
	// once, and the topology is fetched then, from it. While they answer,
	// urgent fetches are only a backstop, at most one per watchBackstop
	// from the start of the watch, for a promoted node the view does not
	// list yet; while none answers (blind), they go on as without a watch.
	var watchStart time.Time
	blind := false
	var due time.Time  // when the fetch asked for is due; zero: none asked
	dueUrgent := false // asked for by a failing node
	var first *Node    // to ask first: a replica that answered master
	for {
		watch := c.startWatch(&watchStart)
		var tick <-chan time.Time
		if len(watch) > 0 {
			tick = probe.C
		} else {
			blind = false
		}
		var timer <-chan time.Time
		if !due.IsZero() {
			timer = time.After(time.Until(due))
		}
		// ask asks for a fetch at t, or sooner if one is due sooner.
		ask := func(t time.Time, urgent bool) {
			if due.IsZero() || t.Before(due) {
				due = t
			}
			dueUrgent = dueUrgent || urgent
		}
		urgent := false
		select {
		case <-c.ctx.Done():
			return
		case <-periodic.C:
			ask(time.Now(), false)
			continue
		case <-c.kick:
			// A MOVED: its slot is patched already; give the cluster a
			// moment to tell every node, so that the fetch finds the new
			// view wherever it asks.
			ask(time.Now().Add(max(c.opts.RefreshGap-time.Since(last), settle)), false)
			continue
		case <-c.urgent:
			if time.Since(last) > 2*maxGap {
				gap = c.opts.UrgentGap // a new incident
			}
			at := last.Add(gap)
			// The node that asked was just suspected: watch its replicas.
			if watch = c.startWatch(&watchStart); len(watch) > 0 && !blind {
				at = later(at, later(last, watchStart).Add(watchBackstop))
			}
			ask(at, true)
			continue
		case <-tick:
			n, answered := c.promoted(watch)
			if wasBlind := blind; n == nil {
				blind = answered == 0
				if blind && !wasBlind && !due.IsZero() {
					due = time.Time{}
					ask(last.Add(gap), true)
				}
				continue
			}
			blind = false
			// At once, unless a fetch just found nothing new: one that
			// the promoted node's view cannot be adopted from (yet)
			// backs off as the others do.
			first = n
			if at := last.Add(gap); time.Now().Before(at) {
				ask(at, true)
				continue
			}
			urgent = true
		case <-timer:
			urgent = dueUrgent
		}
		due, dueUrgent = time.Time{}, false
		last = time.Now()
		before := c.cur.Load()
		c.fetch(first)
		first = nil

		// Requests that came in while fetching were answered by it.
		select {
		case <-c.kick:
		default:
		}
		after := c.cur.Load()
		switch {
		case len(c.watching()) == 0 && c.primaryFailing():
			// While the cluster reports a primary as failed and callers
			// have found it failing, and it has no replica to watch, keep
			// asking every UrgentGap without waiting for another caller
			// to fail: callers stuck on a stopped node fail only at their
			// deadlines. A primary that hands its slots over in good
			// health (a TAKEOVER, a reshard) is not polled for.
			gap = c.opts.UrgentGap
			ask(last.Add(gap), true)
		case !before.sameShards(after):
			gap = c.opts.UrgentGap
		case urgent:
			gap = min(2*gap, maxGap)
		}
	}
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// watchBackstop is how often the topology is fetched at most while the
// replicas of a suspected primary answer the watch's ROLE probes: only a
// replica the view does not list could be promoted unseen.
const watchBackstop = 8 * time.Second

// startWatch returns the replicas to watch (watching), and sets *start to
// when the watch started, zero when there is none.
func (c *Cluster) startWatch(start *time.Time) []*Node {
	watch := c.watching()
	switch {
	case len(watch) == 0:
		*start = time.Time{}
	case start.IsZero():
		*start = time.Now()
	}
	return watch
}

// watching returns the replicas of the primaries of the current view that
// are suspected: one of them may be promoted any moment.
func (c *Cluster) watching() []*Node {
	r := c.cur.Load()
	if r == nil {
		return nil
	}
	var out []*Node
	for _, sh := range r.shards {
		if sh.primary.suspected() {
			out = append(out, sh.standby...)
		}
	}
	return out
}

// promoted asks nodes, replicas of failing primaries, for their ROLE at
// once, and returns one that answered master, or nil, and how many
// answered. A replica that does not answer within probeTimeout is taken as
// not promoted.
func (c *Cluster) promoted(nodes []*Node) (*Node, int) {
	ctx, cancel := context.WithTimeout(c.ctx, probeTimeout)
	defer cancel()
	found := make(chan *Node, len(nodes))
	var answered atomic.Int32
	var wg sync.WaitGroup
	for _, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := roundTrip(ctx, n.Mux, "ROLE")
			if err != nil || len(v.Elems) == 0 {
				return
			}
			answered.Add(1)
			if v.Elems[0].Str == "master" {
				found <- n
			}
		}()
	}
	wg.Wait()
	close(found)
	return <-found, int(answered.Load())
}

// probeTimeout bounds one round of ROLE probes.
const probeTimeout = 250 * time.Millisecond

// maxUrgentGaps bounds the time between two urgent fetches that find
// nothing new, in UrgentGaps: 400ms by default, less than the half second
// a replica waits at least, once the cluster reports its primary failed,
// before it asks to be promoted.
const maxUrgentGaps = 8

// sameShards reports whether r and o have the same primaries, each
// reported failed or not alike (nodes list the shards in orders of their
// own).
func (r *routes) sameShards(o *routes) bool {
	if r == nil || o == nil {
		return r == o
	}
	if len(r.shards) != len(o.shards) {
		return false
	}
	for _, sh := range r.shards {
		if !slices.ContainsFunc(o.shards, func(x *shard) bool { return x.primary == sh.primary && x.failing == sh.failing }) {
			return false
		}
	}
	return true
}

// settle is how long a refresh asked for by a redirect waits at least.
const settle = 250 * time.Millisecond

// fetchTimeout bounds how long one node is waited on for the topology, and
// maxAsked how many nodes one refresh asks at most.
const (
	fetchTimeout = time.Second
	maxAsked     = 3
)

// fetch asks nodes for the topology, one after the other (first, when
// set, before the others), until one gives a view it can adopt.
func (c *Cluster) fetch(first *Node) {
	var errs []error
	var pending *View // a changed view, waiting for a second node to agree
	var pendingFrom *Node
	nodes := c.candidates()
	if first != nil {
		nodes = append([]*Node{first}, slices.DeleteFunc(nodes, func(n *Node) bool { return n == first })...)
	}
	for i, n := range nodes {
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
		// A view that gives a slot another owner than a recent MOVED did
		// is older than the redirect. Once the MOVED is movedTrust old, such
		// a view is taken as a change like any other (the slot may have
		// moved again since, its MOVED's target failed over or gone), to be
		// confirmed by a second node; until then it is not adopted.
		stale, recent := c.staleSlot(v)
		if recent {
			errs = append(errs, fmt.Errorf("%s: a view older than the MOVED for slot %d", n.Addr, stale))
			continue
		}
		// The first view is adopted as it comes (one fetch on first use,
		// checked node by node by CLUSTER MYID); a view that moves slots
		// must be confirmed by a second node, so that one node's stale or
		// foreign view cannot redirect traffic.
		cur := c.cur.Load()
		switch {
		case stale < 0 && (cur == nil || cur.movesOnlyFailing(v)):
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
// asked for if the current view routes commands to it (a node that lost
// its slots already, whose callers fail at their deadlines, needs none).
func (c *Cluster) Suspect(n *Node) {
	n.suspect.Store(time.Now().Add(suspectFor).UnixNano())
	if c.inUse(n) {
		c.Urgent()
	}
}

// inUse reports whether the current view routes commands to n: a primary,
// a replica that serves reads, or the target of a MOVED since the last
// view; before the first view, every node.
func (c *Cluster) inUse(n *Node) bool {
	r := c.cur.Load()
	if r == nil {
		return true
	}
	for _, sh := range r.shards {
		if sh.primary == n || slices.Contains(sh.replicas, n) {
			return true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range c.patched {
		if a == n.Addr {
			return true
		}
	}
	return false
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

// holdQuiet is how long a suspected node's connections must have read
// nothing, with requests in flight, for commands to be held back from it
// (Cluster.hold). A node that is answering, however slowly, reads.
const holdQuiet = 500 * time.Millisecond

// stalled reports whether commands should be held back from n: it is
// suspected of failing and its connections have stalled. It costs one
// atomic load while n is not suspected.
func (n *Node) stalled() bool {
	until := n.suspect.Load()
	if until == 0 {
		return false
	}
	if time.Now().UnixNano() >= until {
		n.suspect.CompareAndSwap(until, 0)
		return false
	}
	return n.Mux.Stalled(holdQuiet)
}

// hold waits a little (longer for each of held earlier waits, up to
// 50ms) for a node that stalled (Node.stalled) to read again or for the
// routes to change, asking for a refresh. A command held until its
// context ends was not sent: its error says so and why.
func (c *Cluster) hold(ctx context.Context, n *Node, held int) error {
	if held == 0 {
		c.Urgent()
	}
	t := time.NewTimer(min(time.Millisecond<<min(held, 6), 50*time.Millisecond))
	defer t.Stop()
	select {
	case <-t.C:
	case <-c.Changed():
	case <-c.ctx.Done():
		return transport.NotSent(transport.ErrClosed)
	case <-ctx.Done():
		return transport.NotSent(fmt.Errorf("%w: %s has answered nothing for over %v with requests in flight (stopped, cut off or failing over): %w",
			ErrNodeStalled, n.Addr, holdQuiet, ctx.Err()))
	}
	return nil
}

// candidates lists the nodes to ask, primaries of the current view first
// (in random order), then replicas, then the seeds.
func (c *Cluster) candidates() []*Node {
	var out []*Node
	if r := c.cur.Load(); r != nil {
		// The replicas of a primary reported failed first: the one
		// promoted knows at once, the others learn it by gossip.
		for _, sh := range r.shards {
			if sh.failing {
				out = append(out, sh.standby...)
			}
		}
		for _, i := range rand.Perm(len(r.shards)) {
			out = append(out, r.shards[i].primary)
		}
		for _, sh := range r.shards {
			if !sh.failing {
				out = append(out, sh.replicas...)
			}
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
		sh := &shard{primary: c.nodeLocked(s.Primary.Addr, s.Primary.ID).withZone(s.Primary.Zone), failing: !s.Primary.Healthy}
		keep[s.Primary.Addr] = true
		next.ids[s.Primary.ID] = true
		for _, r := range s.Replicas {
			next.ids[r.ID] = true
			rn := c.nodeLocked(r.Addr, r.ID).withZone(r.Zone)
			keep[r.Addr] = true
			sh.standby = append(sh.standby, rn)
			if c.opts.Replicas {
				sh.replicas = append(sh.replicas, rn)
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
	// It is done once the new view is published, so that the callers it
	// wakes route their commands by the new view.
	var lost []*Node
	if old != nil {
		for _, sh := range old.shards {
			p := sh.primary
			if p.suspected() && !next.serves(p) {
				lost = append(lost, p)
			}
		}
	}
	defer func() {
		for _, p := range lost {
			p.Mux.BreakStalled(ErrFailedOver, stalledFor)
		}
	}()
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
	c.probeZonesLocked(next)
	return nil
}

// movedTrust is how long a MOVED outweighs the views that contradict it.
// A view fetched after that and confirmed by a second node is adopted even
// so: otherwise a MOVED to a node that lost the slot again before the next
// adoption (a migration followed by a failover of its target, a target
// that died) would keep every later view out, and the client's slot map
// would stay as it was for good.
const movedTrust = 2 * time.Second

// staleSlot returns a slot that v gives to another node than a MOVED
// received since the last adoption did, or -1; recent reports that there
// is one and the latest MOVED is younger than movedTrust.
func (c *Cluster) staleSlot(v *View) (slot int, recent bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.patched) == 0 {
		return -1, false
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
			return int(slot), time.Since(c.patchedAt) < movedTrust
		}
	}
	return -1, false
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
