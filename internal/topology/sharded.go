package topology

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/respire-go/respire/internal/transport"
)

// Sharded pub/sub on a cluster.
//
// A sharded channel lives on the primary that owns its slot: SSUBSCRIBE
// goes there, on a pub/sub connection of that node (one hub per node, used
// by every subscription of the client), and the messages are queued in the
// Subscription's own buffer (the sink) with its other channels'. When the
// slot moves (the node pushes an unsolicited sunsubscribe after a
// migration), or when the topology names another owner (a failover), the
// channel is unsubscribed from the old node and subscribed on the new one,
// and a GapMoved marker naming it is queued, at the new node's
// confirmation, before any of its messages there. A message is never
// received twice: a channel is subscribed on one node at a time, and a
// slot's messages are published on its owner only.
//
// The re-homing runs on one goroutine per client (rehomeLoop), woken by
// topology changes, by the hubs' unsolicited sunsubscribes and broken
// connections, and every rehomeRetry while something is left to move.

// rehomeRetry is how often a channel that could not be moved yet (its new
// owner not known or not reachable) is tried again.
const rehomeRetry = 50 * time.Millisecond

// rehomeTimeout bounds each attempt to subscribe moved channels on a node.
const rehomeTimeout = time.Second

// ShardedPubSub holds the per-node hubs of a cluster client's sharded
// channels and moves channels between them.
type ShardedPubSub struct {
	cl  *Cluster
	cfg transport.Config

	mu      sync.Mutex
	hubs    map[string]*transport.PubSub // by node address
	members map[*transport.Subscription]member
	sets    map[*ShardSet]struct{}
	closed  bool
	running bool

	kick   chan struct{}
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// member is a node's part of a ShardSet.
type member struct {
	set  *ShardSet
	addr string
}

// ShardSet is the sharded channels of one Subscription of a cluster
// client.
type ShardSet struct {
	r    *ShardedPubSub
	sink *transport.Subscription

	op sync.Mutex // serializes subscribe, unsubscribe, moves and close

	// Guarded by r.mu.
	home    map[string]string                  // channel → node address
	owed    map[string]*transport.Gap          // channels to move, with their gaps
	members map[string]*transport.Subscription // by node address
	closed  bool
}

// NewShardedPubSub returns the sharded pub/sub of a cluster client: cfg
// is the connection config of a node's pub/sub connection (its Addr is
// set per node).
func NewShardedPubSub(cl *Cluster, cfg transport.Config) *ShardedPubSub {
	r := &ShardedPubSub{
		cl:      cl,
		cfg:     cfg,
		hubs:    map[string]*transport.PubSub{},
		members: map[*transport.Subscription]member{},
		sets:    map[*ShardSet]struct{}{},
		kick:    make(chan struct{}, 1),
	}
	r.ctx, r.cancel = context.WithCancel(context.Background())
	return r
}

// Close closes the per-node hubs and stops the re-homing.
func (r *ShardedPubSub) Close() {
	r.mu.Lock()
	r.closed = true
	hubs := r.hubs
	r.hubs = map[string]*transport.PubSub{}
	r.mu.Unlock()
	r.cancel()
	r.wg.Wait()
	for _, h := range hubs {
		h.Close()
	}
}

// serverRedirect parses a subscription's error as a redirect.
func serverRedirect(err error, from string) (Redirect, bool) {
	var se *transport.ServerError
	if !errors.As(err, &se) {
		return Redirect{}, false
	}
	return ParseRedirect(se.Prefix, se.Message, from)
}

// NewSet returns the sharded channels of one Subscription, whose messages
// go to sink.
func (r *ShardedPubSub) NewSet(sink *transport.Subscription) *ShardSet {
	return &ShardSet{r: r, sink: sink, home: map[string]string{}, owed: map[string]*transport.Gap{},
		members: map[string]*transport.Subscription{}}
}

// memberLocked returns set's subscription on the node at addr, creating
// the node's hub and the goroutine that moves channels when needed.
func (r *ShardedPubSub) memberLocked(set *ShardSet, addr string) (*transport.Subscription, error) {
	if r.closed || set.closed {
		return nil, transport.ErrClosed
	}
	if m := set.members[addr]; m != nil {
		return m, nil
	}
	h := r.hubs[addr]
	if h == nil {
		cfg := r.cfg
		cfg.Addr = addr
		h = transport.NewPubSub(cfg)
		h.SetHooks(transport.PubSubHooks{
			ShardDropped: r.dropped,
			Lost:         func(error) { r.cl.SuspectAddr(addr); r.wake() },
			ShardSlot:    Slot,
		})
		r.hubs[addr] = h
	}
	m := h.NewSubscriptionInto(set.sink)
	set.members[addr] = m
	r.members[m] = member{set, addr}
	r.sets[set] = struct{}{}
	if !r.running {
		r.running = true
		r.wg.Add(1)
		go func() { defer r.wg.Done(); r.rehomeLoop() }()
	}
	return m, nil
}

func (r *ShardedPubSub) wake() {
	select {
	case r.kick <- struct{}{}:
	default:
	}
}

// dropped is the hubs' ShardDropped hook: the node unsubscribed channel of
// member m on its own, so its slot left the node.
func (r *ShardedPubSub) dropped(m *transport.Subscription, channel string) {
	now := time.Now()
	r.mu.Lock()
	if mb, ok := r.members[m]; ok && mb.set.home[channel] == mb.addr {
		delete(mb.set.home, channel)
		mb.set.owed[channel] = &transport.Gap{Reason: transport.GapMoved, Since: now}
	}
	r.mu.Unlock()
	r.cl.Refresh()
	r.wake()
}

// Subscribe subscribes channels on their slots' owners. On error none of
// the channels that were not subscribed before is left subscribed.
func (set *ShardSet) Subscribe(ctx context.Context, channels []string) error {
	set.op.Lock()
	defer set.op.Unlock()
	r := set.r
	var added, todo []string
	seen := make(map[string]bool, len(channels))
	r.mu.Lock()
	for _, ch := range channels {
		// A channel subscribed before stays where it is (or where it is
		// being moved): never on two nodes at once.
		if _, ok := set.home[ch]; !ok && set.owed[ch] == nil && !seen[ch] {
			seen[ch] = true
			todo = append(todo, ch)
		}
	}
	r.mu.Unlock()
	for attempt := 0; len(todo) > 0; attempt++ {
		groups, err := r.group(ctx, todo)
		if err != nil {
			set.unsubscribeLocked(added)
			return err
		}
		todo = nil
		for addr, names := range groups {
			r.mu.Lock()
			m, err := r.memberLocked(set, addr)
			for _, n := range names {
				set.home[n] = addr
			}
			r.mu.Unlock()
			if err == nil {
				err = m.Subscribe(ctx, transport.KindShard, names...)
			}
			if err != nil {
				r.mu.Lock()
				for _, n := range names {
					if set.home[n] == addr {
						delete(set.home, n)
					}
				}
				r.mu.Unlock()
				if rd, ok := serverRedirect(err, addr); ok && attempt < 5 {
					if _, again := r.cl.Redirected(ctx, rd, attempt, FollowMoved); again {
						todo = append(todo, names...)
						continue
					}
				}
				set.unsubscribeLocked(added)
				return err
			}
			added = append(added, names...)
		}
	}
	return nil
}

// group splits channels by the address of their slots' primaries.
func (r *ShardedPubSub) group(ctx context.Context, channels []string) (map[string][]string, error) {
	groups := map[string][]string{}
	for _, ch := range channels {
		n, err := r.cl.Route(ctx, Slot(ch), ReadPrimary)
		if err != nil {
			return nil, err
		}
		groups[n.Addr] = append(groups[n.Addr], ch)
	}
	return groups, nil
}

// Unsubscribe removes channels, or all of them when none is given.
func (set *ShardSet) Unsubscribe(channels []string) error {
	set.op.Lock()
	defer set.op.Unlock()
	r := set.r
	r.mu.Lock()
	closed := set.closed
	if len(channels) == 0 {
		for ch := range set.home {
			channels = append(channels, ch)
		}
		for ch := range set.owed {
			channels = append(channels, ch)
		}
	}
	r.mu.Unlock()
	if closed {
		return transport.ErrSubscriptionClosed
	}
	set.unsubscribeLocked(channels)
	return nil
}

// unsubscribeLocked removes channels from set; set.op is held.
func (set *ShardSet) unsubscribeLocked(channels []string) {
	r := set.r
	byAddr := map[*transport.Subscription][]string{}
	r.mu.Lock()
	for _, ch := range channels {
		delete(set.owed, ch)
		addr, ok := set.home[ch]
		if !ok {
			continue
		}
		delete(set.home, ch)
		if m := set.members[addr]; m != nil {
			byAddr[m] = append(byAddr[m], ch)
		}
	}
	r.mu.Unlock()
	for m, chs := range byAddr {
		_ = m.Unsubscribe(transport.KindShard, chs...)
	}
}

// Close unsubscribes everything; the sink is closed by its owner.
func (set *ShardSet) Close() {
	set.op.Lock()
	defer set.op.Unlock()
	r := set.r
	r.mu.Lock()
	set.closed = true
	ms := set.members
	set.members = map[string]*transport.Subscription{}
	set.home, set.owed = map[string]string{}, map[string]*transport.Gap{}
	for _, m := range ms {
		delete(r.members, m)
	}
	delete(r.sets, set)
	r.mu.Unlock()
	for _, m := range ms {
		_ = m.Close()
	}
}

// rehomeLoop moves channels to their slots' owners whenever the topology
// changes or a node drops or loses them, until the client closes.
func (r *ShardedPubSub) rehomeLoop() {
	var retry <-chan time.Time
	for {
		changed := r.cl.Changed()
		if r.pass() {
			retry = time.After(rehomeRetry)
		} else {
			retry = nil
		}
		select {
		case <-r.ctx.Done():
			return
		case <-changed:
		case <-r.kick:
		case <-retry:
		}
	}
}

// pass moves what needs moving in every set and reports whether something
// is left to move (or waits on a broken connection).
func (r *ShardedPubSub) pass() (pending bool) {
	r.mu.Lock()
	sets := make([]*ShardSet, 0, len(r.sets))
	for s := range r.sets {
		sets = append(sets, s)
	}
	r.mu.Unlock()
	for _, s := range sets {
		if r.ctx.Err() != nil {
			return false
		}
		if s.rehome() {
			pending = true
		}
	}
	if pending {
		r.cl.Urgent()
	}
	return pending
}

// noWait is a context that has ended: a route lookup with it answers from the
// current slot map without waiting for a better one.
var noWait = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// rehome moves set's channels whose slot's primary is not the node they
// are subscribed on, and the ones a node dropped. It reports whether
// something could not be moved yet, or sits on a broken connection.
func (set *ShardSet) rehome() (pending bool) {
	set.op.Lock()
	defer set.op.Unlock()
	r := set.r
	type move struct {
		ch, from string
	}
	var moves []move
	r.mu.Lock()
	if set.closed {
		r.mu.Unlock()
		return false
	}
	for ch, addr := range set.home {
		moves = append(moves, move{ch, addr})
	}
	for ch := range set.owed {
		moves = append(moves, move{ch, ""})
	}
	members := make(map[string]*transport.Subscription, len(set.members))
	for a, m := range set.members {
		members[a] = m
	}
	r.mu.Unlock()

	lost := map[string]*transport.Gap{}
	for a, m := range members {
		if g := m.Lost(); g != nil {
			lost[a] = g
		}
	}
	groups := map[string]map[string]*transport.Gap{} // new owner → channel → gap
	for _, mv := range moves {
		n, err := r.cl.Route(noWait, Slot(mv.ch), ReadPrimary)
		if err != nil {
			pending = true // unserved for now
			continue
		}
		switch {
		case n.Addr == mv.from && lost[mv.from] != nil:
			pending = true // waiting for the node to come back or lose the slot
			continue
		case mv.from != "" && lost[mv.from] == nil:
			// A node that is up says itself when it loses a slot (an
			// unsolicited sunsubscribe); until it does, a topology that
			// names another owner is older than the node's word.
			continue
		}
		var g *transport.Gap
		r.mu.Lock()
		if mv.from == "" {
			g = set.owed[mv.ch]
		} else if set.home[mv.ch] == mv.from {
			delete(set.home, mv.ch)
			g = &transport.Gap{Reason: transport.GapMoved, Since: time.Now()}
			if lg := lost[mv.from]; lg != nil {
				g.Since, g.Err = lg.Since, lg.Err
			}
			set.owed[mv.ch] = g
		}
		r.mu.Unlock()
		if g == nil {
			continue
		}
		if mv.from != "" {
			_ = members[mv.from].Unsubscribe(transport.KindShard, mv.ch)
		}
		if groups[n.Addr] == nil {
			groups[n.Addr] = map[string]*transport.Gap{}
		}
		groups[n.Addr][mv.ch] = g
	}
	for addr, gaps := range groups {
		if !set.moveTo(addr, gaps) {
			pending = true
		}
	}
	return pending
}

// moveTo subscribes the channels of gaps on the node at addr, each after
// its gap marker. It reports whether that worked; the channels stay owed
// otherwise.
func (set *ShardSet) moveTo(addr string, gaps map[string]*transport.Gap) bool {
	r := set.r
	r.mu.Lock()
	m, err := r.memberLocked(set, addr)
	if err == nil {
		for ch := range gaps {
			set.home[ch] = addr
			delete(set.owed, ch)
		}
	}
	r.mu.Unlock()
	if err != nil {
		return false
	}
	ctx, cancel := context.WithTimeout(r.ctx, rehomeTimeout)
	err = m.Resubscribe(ctx, gaps)
	cancel()
	if err == nil {
		return true
	}
	if rd, ok := serverRedirect(err, addr); ok {
		// The gaps stay owed: the next pass takes them to the new owner.
		r.cl.Redirected(r.ctx, rd, 0, FollowMoved)
	}
	r.mu.Lock()
	for ch, g := range gaps {
		if set.home[ch] == addr {
			delete(set.home, ch)
			if !set.closed {
				set.owed[ch] = g
			}
		}
	}
	r.mu.Unlock()
	return false
}
