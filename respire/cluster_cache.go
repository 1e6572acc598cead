package respire

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// The client-side cache on a cluster.
//
// One store serves the whole client (one memory bound), and each primary
// that cached reads go to gets tracking connections of its own (a
// tracker), dialed on first use: a cached read of a key is sent, with
// CLIENT CACHING YES and PTTL as on a single server, to the tracker of the
// key's slot's primary, so that the node that serves the key is the node
// that tracks it and reports its changes, in order with its replies.
//
// Every entry carries the tag its node's tracker had when the read was
// sent, and a hit is served only when the entry's tag is the current tag
// of the tracker its slot routes to now. A tracker's tag changes whenever
// the node stops vouching for what was read from it:
//
//   - its tracking connection broke (invalidations may have been lost) or
//     the node flushed its data (a null invalidation);
//   - a cached read got MOVED from it: the slot went elsewhere;
//   - the topology says one of its slots now belongs to another node (a
//     failover, a resharding), checked at every topology change and every
//     slotCheck.
//
// So an entry is never served once its slot is routed to another node (its
// tag is another tracker's), nor after its node lost slots or its
// connection. Entries with dead tags are removed from memory in the
// background. A slot that moves away and back within one slotCheck loses
// nothing it needs to: moving a slot migrates (deletes) its keys on the old
// owner, which reports that as invalidations.
type clusterCache struct {
	cc   *clientCache
	be   *clusterBackend
	cl   *topology.Cluster
	base transport.Config
	// traceFlush tells the tracer of a node's flush (observeCache); set
	// in NewClient, before any tracker exists.
	traceFlush func()

	mu       sync.Mutex
	closed   bool
	trackers map[*topology.Node]*tracker
	all      atomic.Pointer[[]*tracker]                  // for poll, copied on change
	byNode   atomic.Pointer[map[*topology.Node]*tracker] // for hits, copied on change

	tags      atomic.Uint64 // the last tag handed out
	dirty     chan struct{} // a tag changed: remove dead entries
	stop      chan struct{}
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// slotCheck is how often the slot owners are compared with the last ones
// seen, besides at every topology change: a MOVED that patched a slot for
// another command changes no topology.
const slotCheck = 100 * time.Millisecond

// newClusterCache returns the cache of a cluster client; nil when
// opts.ClientCache is nil.
func newClusterCache(opts *Options, cfg transport.Config, be *clusterBackend) *clientCache {
	cc := newCacheStore(opts)
	if cc == nil {
		return nil
	}
	cc.conns = uint32(max(cc.opts.Connections, 1))
	k := &clusterCache{
		cc:       cc,
		be:       be,
		cl:       be.cl,
		base:     trackingConfig(cc, cfg),
		trackers: map[*topology.Node]*tracker{},
		dirty:    make(chan struct{}, 1),
		stop:     make(chan struct{}),
	}
	k.publishLocked()
	cc.src = k
	k.wg.Add(1)
	go func() { defer k.wg.Done(); k.watch() }()
	return cc
}

// trackerFor returns the tracker of the primary that serves key's slot.
func (k *clusterCache) trackerFor(ctx context.Context, key string) (*tracker, error) {
	n, err := k.cl.Route(ctx, topology.Slot(key), topology.ReadPrimary)
	if err != nil {
		return nil, err
	}
	return k.trackerOf(n)
}

// trackerOf returns n's tracker, made on first use.
func (k *clusterCache) trackerOf(n *topology.Node) (*tracker, error) {
	if t := (*k.byNode.Load())[n]; t != nil {
		return t, nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.trackers[n]; t != nil {
		return t, nil
	}
	if k.closed {
		return nil, transport.NotSent(ErrClosed)
	}
	cfg := k.base
	cfg.Addr = n.Addr
	cfg.NodeID = n.ID
	cfg.FailFast = true
	cfg.ReadOnly = false
	t := &tracker{node: n}
	t.tag.Store(k.tags.Add(1))
	tr := *cfg.Tracking
	tr.Flush = func() {
		k.retag(t)
		if f := k.traceFlush; f != nil {
			f()
		}
	}
	cfg.Tracking = &tr
	t.mux = transport.NewMux(cfg)
	k.trackers[n] = t
	k.publishLocked()
	return t, nil
}

func (k *clusterCache) publishLocked() {
	all := make([]*tracker, 0, len(k.trackers))
	byNode := make(map[*topology.Node]*tracker, len(k.trackers))
	for n, t := range k.trackers {
		all = append(all, t)
		byNode[n] = t
	}
	k.all.Store(&all)
	k.byNode.Store(&byNode)
}

// retag makes every entry read through t unservable.
func (k *clusterCache) retag(t *tracker) {
	t.tag.Store(k.tags.Add(1))
	select {
	case k.dirty <- struct{}{}:
	default:
	}
}

func (k *clusterCache) spread() bool { return true }

// connect dials nothing: a cluster's tracking connections are dialed on
// first use.
func (k *clusterCache) connect(context.Context) error { return nil }

// open counts the established tracking connections of every node.
func (k *clusterCache) open() int {
	n := 0
	for _, t := range *k.all.Load() {
		n += t.mux.Open()
	}
	return n
}

// serverChanged does nothing: a cluster's nodes come and go through its
// topology (watch).
func (k *clusterCache) serverChanged(error) {}

// observe wraps the tracking hooks every node's tracker copies from base.
func (k *clusterCache) observe(inv func(key []byte), flush func()) {
	tr := k.base.Tracking
	in := tr.Invalidate
	tr.Invalidate = func(key []byte) { in(key); inv(key) }
	k.traceFlush = flush
}

// redirect parses the reply of x, a read sent to t, as a redirect.
func (k *clusterCache) redirect(t *tracker, x *cmd) (redirect, bool) {
	return redirectOf(x.replyErr, t.node.Addr)
}

// failed is a read's failure on t's node: the node is suspected, so that
// the topology is fetched again.
func (k *clusterCache) failed(t *tracker) { k.cl.Suspect(t.node) }

// uncached sends x the way of any command, uncached: the read of a
// redirect that is not a MOVED (ASK, TRYAGAIN, CLUSTERDOWN, ...), or of
// one too many. The contract is exec's.
func (k *clusterCache) uncached(ctx context.Context, x *cmd) error {
	name := x.info.name
	c := k.be.c
	if err := k.be.execCluster(ctx, x); err != nil {
		return c.wrapCluster(ctx, name, err)
	}
	if x.replyErr != nil {
		err := x.replyErr
		x.Recycle()
		return err
	}
	return nil
}

// redirected handles the redirect rd of a cached read of key sent to t:
// after a MOVED it returns the tracker of the slot's new owner, and an
// error for anything else (ASK, TRYAGAIN, CLUSTERDOWN, ...) or after too
// many redirects, for which the caller reads without the cache.
func (k *clusterCache) redirected(ctx context.Context, t *tracker, rd redirect, key string, redirects int) (*tracker, error) {
	if redirects >= maxRedirects {
		return nil, errNotCached
	}
	if _, again := k.cl.Redirected(ctx, rd, redirects, topology.FollowMoved); !again {
		return nil, errNotCached
	}
	k.retag(t)
	return k.trackerFor(ctx, key)
}

// errNotCached says that a read goes without the cache.
var errNotCached = errors.New("not cached")

func (k *clusterCache) poll() {
	for _, t := range *k.all.Load() {
		t.mux.Poll()
	}
}

// barrier is clientCache.barrier on every tracker.
func (k *clusterCache) barrier(ctx context.Context) error {
	var first error
	for _, t := range *k.all.Load() {
		if err := k.cc.barrierOn(ctx, t.mux); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// close ends the trackers and the watcher; later calls do nothing.
func (k *clusterCache) close() {
	k.closeOnce.Do(func() { close(k.stop) })
	k.wg.Wait()
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	for n, t := range k.trackers {
		t.mux.Close()
		delete(k.trackers, n)
	}
	k.publishLocked()
}

// watch retags the trackers of nodes that lost slots, closes those of
// nodes that left the topology, and removes entries with dead tags.
func (k *clusterCache) watch() {
	var owners [topology.SlotCount]*topology.Node
	done, cancel := context.WithCancel(context.Background())
	cancel() // Route must not wait for anything here
	tick := time.NewTicker(slotCheck)
	defer tick.Stop()
	for {
		changed := k.cl.Changed()
		select {
		case <-k.stop:
			return
		case <-changed:
		case <-tick.C:
		case <-k.dirty:
			k.sweep()
			continue
		}
		lost := map[*topology.Node]bool{}
		for s := range owners {
			n, err := k.cl.Route(done, uint16(s), topology.ReadPrimary)
			if err != nil {
				n = nil
			}
			if old := owners[s]; old != nil && old != n {
				lost[old] = true
			}
			owners[s] = n
		}
		k.dropLost(lost)
	}
}

// dropLost retags the trackers of nodes that lost slots, and closes those
// of nodes the topology no longer has.
func (k *clusterCache) dropLost(lost map[*topology.Node]bool) {
	live := map[*topology.Node]bool{}
	for _, n := range k.cl.Nodes() {
		live[n] = true
	}
	k.mu.Lock()
	var gone []*tracker
	for n, t := range k.trackers {
		switch {
		case !live[n]:
			delete(k.trackers, n)
			gone = append(gone, t)
		case lost[n]:
			k.retag(t)
		}
	}
	if len(gone) > 0 {
		k.publishLocked()
	}
	k.mu.Unlock()
	for _, t := range gone {
		k.retag(t)
		t.mux.Close()
	}
}

// sweep removes the entries whose tag is no tracker's current one.
func (k *clusterCache) sweep() {
	tags := map[uint64]bool{}
	for _, t := range *k.all.Load() {
		tags[t.tag.Load()] = true
	}
	k.cc.store.DropIf(func(_ string, v *cache.Value) bool { return !tags[v.Tag] })
}

// getCluster is Cached.Get on a cluster: a hit must come from the node
// that serves the key's slot now.
func (v Cached) getCluster(ctx context.Context, key string) (string, error) {
	cc := v.c.cache
	t, err := cc.trackerFor(ctx, key)
	if err != nil {
		return "", v.c.wrapErr(ctx, "GET", err)
	}
	if s, tag, miss, ok := cc.store.GetStringTag(key); ok && tag == t.tag.Load() {
		if miss {
			return "", Nil
		}
		return s, nil
	}
	return v.getSlow(ctx, key)
}

// mgetEach is Cached.MGet on a cluster: one cached GET per key, each on
// its slot's node.
func (v Cached) mgetEach(ctx context.Context, keys []string) ([]Null[string], error) {
	return eachNull(len(keys), func(i int) (string, error) { return v.Get(ctx, keys[i]) })
}

// hmgetEach is Cached.HMGet on a cluster: one cached HGET per field.
func (v Cached) hmgetEach(ctx context.Context, key string, fields []string) ([]Null[string], error) {
	return eachNull(len(fields), func(i int) (string, error) { return v.HGet(ctx, key, fields[i]) })
}

// eachNull collects n reads that give Nil for a missing value.
func eachNull(n int, read func(i int) (string, error)) ([]Null[string], error) {
	out := make([]Null[string], n)
	for i := range out {
		s, err := read(i)
		switch {
		case errors.Is(err, Nil):
		case err != nil:
			return nil, err
		default:
			out[i] = Null[string]{V: s, Valid: true}
		}
	}
	return out, nil
}
