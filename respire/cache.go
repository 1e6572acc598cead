package respire

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/internal/cache"
	"github.com/respire-go/respire/internal/topology"
	"github.com/respire-go/respire/internal/transport"
)

// CacheOptions turn on server-assisted client-side caching: reads made
// through [Client.Cached] are kept in process memory and served from there
// until the server says the key changed (CLIENT TRACKING), its TTL on the
// server runs out, or the local TTL does. A hash read on a server with
// hash field TTLs (Redis 7.4+) also expires with the earliest TTL of the
// fields its value depends on: the server reports nothing when a field's
// TTL runs out, only when it later deletes the field. That costs one more
// command in the same write on a miss of a field read (HGET, HMGET,
// HEXISTS, HSTRLEN, HPEXPIRETIME) and a second round trip on a miss of a
// whole-hash read (HGETALL, HKEYS, HVALS, HLEN), which asks HPTTL for
// every field; hits cost the same as before.
//
// Cached reads use a connection of their own, with tracking on, so that
// the server's invalidations arrive in order with the replies they
// concern, and no large reply or slow consumer on the other connections
// delays them. Writes made through the client drop the keys they touch
// before they return, so that once a write's reply is received no read in
// the process sees the old value. Goroutines that only hit, and so never
// wait for the network, apply the invalidations waiting on the tracking
// connections themselves every 20µs or so, so that a process busy with
// hits still sees them promptly (Linux, TCP or Unix sockets; see
// docs/cache.md). On a cluster each primary tracks the keys read from it
// (docs/cluster.md). Caching needs RESP3: it is an error with Protocol 2,
// and a handshake error when the server only speaks RESP2.
type CacheOptions struct {
	// MaxBytes bounds the memory of the cache for the whole client: keys,
	// values and bookkeeping. Default 64 MiB.
	MaxBytes int64
	// TTL is the local time to live of an entry when Cached is given 0.
	// Zero means no local limit: an entry lives until it is invalidated,
	// it expires on the server, or it is evicted.
	TTL time.Duration
	// NoCacheMisses turns off negative caching. By default a "no such
	// key" (or "no such field") answer is cached like a value, under the
	// same rules: the server tracks the missing key and invalidates it
	// when it is created, the local TTL bounds its life, and writes
	// through the client drop it. Without it, a key that expired or was
	// never set costs a round trip on every read: readers polling for a
	// key that is not there yet hit the server at full speed.
	NoCacheMisses bool
	// Broadcast uses the server's BCAST mode: the server reports changes to
	// every key starting with one of Prefixes (all keys when there are
	// none), read or not. Keys outside the prefixes are read from the
	// server each time. Without Broadcast (OPTIN mode) the server tracks
	// exactly the keys read through the cache. No prefix may start
	// another one (the same twice included): the server refuses
	// overlapping prefixes.
	Broadcast bool
	Prefixes  []string
	// Policy is the eviction policy; the zero value is S3-FIFO, chosen by
	// measurement (see CachePolicy).
	Policy CachePolicy
	// Connections is the number of tracking connections that serve cached
	// reads. Default 1.
	Connections int
}

// ErrCacheDisabled is returned by the methods of Cached when the client has
// no Options.ClientCache.
var ErrCacheDisabled = errors.New("respire: client-side cache is not enabled (Options.ClientCache)")

func (o *CacheOptions) validate(proto int) error {
	if o == nil {
		return nil
	}
	if proto == 2 {
		return optErr("ClientCache", "client-side caching needs RESP3 (Protocol is 2)")
	}
	if o.MaxBytes < 0 {
		return optErr("ClientCache.MaxBytes", "%d is negative", o.MaxBytes)
	}
	if o.TTL < 0 {
		return optErr("ClientCache.TTL", "%v is negative", o.TTL)
	}
	if o.Connections < 0 {
		return optErr("ClientCache.Connections", "%d is negative", o.Connections)
	}
	if o.Policy > CacheLRU {
		return optErr("ClientCache.Policy", "unknown policy %d", o.Policy)
	}
	if len(o.Prefixes) > 0 && !o.Broadcast {
		return optErr("ClientCache.Prefixes", "prefixes need Broadcast")
	}
	for i, p := range o.Prefixes {
		for _, q := range o.Prefixes[i+1:] {
			if strings.HasPrefix(p, q) || strings.HasPrefix(q, p) {
				return optErr("ClientCache.Prefixes", "%q and %q overlap, which the server refuses at every connection", p, q)
			}
		}
	}
	return nil
}

// How the cache stays coherent
//
// Cached reads run on tracking connections of their own (a Mux with
// transport.Tracking, OPTIN or BCAST), so their invalidations arrive on the
// same connection as their replies, in order, and are applied by the
// reader goroutine as soon as they are parsed.
//
//  1. A read that misses registers a fill for its keys (cache.Store.Begin)
//     before anything is sent, then sends CLIENT CACHING YES, the read and
//     PTTL of each key in one write (clientCache.run).
//  2. Any change the server makes to a key after it ran the read produces
//     an invalidation that the reader goroutine applies before it parses
//     the PTTL reply; an invalidation (or flush, or lost connection) that
//     reaches the store between Begin and the store of the value spoils the
//     fill, and the value is returned but not kept. One that arrives later
//     drops the stored value. So the cache never holds a value older than
//     the last invalidation it has applied.
//  3. Writes through this client run on other connections, so their
//     invalidation may arrive after their reply. exec therefore drops the
//     written keys (and spoils fills in flight for them) after the reply
//     and before returning; a write whose keys are unknown (scripts,
//     FLUSHALL, Do) waits for a PING on each tracking connection, which
//     the server answers after the invalidations it queued before it.
//  4. The expiry of an entry is the earliest of the local TTL and the
//     server's PTTL counted from before the read was sent, so it never
//     outlives the key on the server. A hash read on a server with field
//     TTLs also takes the earliest TTL of the fields its value depends on
//     (HPTTL), for which the server sends no invalidation until it gets
//     round to deleting the field (cache_hash.go).
//  5. Hits never wait for invalidations and invalidations never wait for
//     hits: the store calls poll every 20µs or so from the hit path
//     (transport.Mux.Poll reads what waits on the tracking connections),
//     and an invalidation that finds a shard busy marks or records its key
//     instead of waiting for the write lock (package cache).

// clientCache is a client's cache: the store and the tracking connections
// that fill it.
type clientCache struct {
	opts  CacheOptions
	store *cache.Store
	// src are the tracking connections: one server's (serverTracking), or
	// a tracker per primary of a cluster (clusterCache,
	// cluster_cache.go), made for the client's backend.
	src   trackers
	conns uint32
	// fieldTTL says whether the server has hash field TTLs (cache_hash.go).
	fieldTTL atomic.Pointer[fieldTTLState]
}

// tracker is a server's tracking connections, with the tag of the entries
// read through them (cache.Value.Tag): 0 on a single server; on a cluster,
// a number that changes whenever the node stops vouching for what was read
// from it, so that those entries are never served again.
type tracker struct {
	mux  *transport.Mux
	tag  atomic.Uint64
	node *topology.Node // nil on a single server
}

// newClientCache returns nil when opts.ClientCache is nil.
func newClientCache(opts *Options, cfg transport.Config) *clientCache {
	cc := newCacheStore(opts)
	if cc == nil {
		return nil
	}
	cfg = trackingConfig(cc, cfg)
	cfg.Tracking.Flush = cc.store.Flush
	m := transport.NewMux(cfg)
	cc.src = &serverTracking{cc: cc, mux: m, std: &tracker{mux: m}}
	cc.conns = uint32(m.Config().Connections)
	return cc
}

// trackers are the tracking connections of a client-side cache, which
// depend on the client's backend: one server's (serverTracking, below), or
// a tracker per primary of a cluster (clusterCache, cluster_cache.go).
type trackers interface {
	// trackerFor returns the tracker that serves key.
	trackerFor(ctx context.Context, key string) (*tracker, error)
	// spread reports that keys are served by different trackers whose
	// entries carry tags (a cluster's): reads of several keys go key by
	// key, and a hit must carry the tag of the key's tracker now.
	spread() bool
	// poll applies the invalidations waiting unread; barrier returns once
	// those the servers sent before now are applied.
	poll()
	barrier(ctx context.Context) error
	// connect dials the tracking connections made up front; close closes
	// them all; open counts the established ones (PoolStats).
	connect(ctx context.Context) error
	close()
	open() int
	// serverChanged breaks the tracking connections of a server the
	// client no longer uses (a Sentinel failover), with cause.
	serverChanged(cause error)
	// observe wraps the tracking hooks with the tracer's: inv for a key,
	// flush for a flush.
	observe(inv func(key []byte), flush func())
	// failed reports a read that failed on t; redirected handles the
	// redirect of a read sent to t (the tracker of the node that serves
	// key now, or an error: the read goes uncached, through uncached).
	failed(t *tracker)
	redirect(t *tracker, x *cmd) (redirect, bool)
	redirected(ctx context.Context, t *tracker, rd redirect, key string, redirects int) (*tracker, error)
	uncached(ctx context.Context, x *cmd) error
}

// serverTracking is the tracking connections to one server.
type serverTracking struct {
	cc  *clientCache
	mux *transport.Mux
	std *tracker
}

func (s *serverTracking) trackerFor(context.Context, string) (*tracker, error) { return s.std, nil }
func (s *serverTracking) spread() bool                                         { return false }
func (s *serverTracking) poll()                                                { s.mux.Poll() }
func (s *serverTracking) barrier(ctx context.Context) error                    { return s.cc.barrierOn(ctx, s.mux) }
func (s *serverTracking) close()                                               { s.mux.Close() }
func (s *serverTracking) open() int                                            { return s.mux.Open() }
func (s *serverTracking) serverChanged(cause error)                            { s.mux.Break(cause) }
func (s *serverTracking) failed(*tracker)                                      {}
func (s *serverTracking) redirect(*tracker, *cmd) (redirect, bool)             { return redirect{}, false }

func (s *serverTracking) connect(ctx context.Context) error {
	if err := s.mux.Connect(ctx); err != nil {
		return transport.Wrap("client-side cache", err)
	}
	return nil
}

func (s *serverTracking) observe(inv func(key []byte), flush func()) {
	tr := s.mux.Config().Tracking
	in, fl := tr.Invalidate, tr.Flush
	tr.Invalidate = func(key []byte) { in(key); inv(key) }
	tr.Flush = func() { fl(); flush() }
}

// One server redirects nothing.
func (s *serverTracking) redirected(context.Context, *tracker, redirect, string, int) (*tracker, error) {
	return nil, errNotCached
}

func (s *serverTracking) uncached(context.Context, *cmd) error { return errNotCached }

// newCacheStore returns the cache of opts without its connections; nil
// when opts.ClientCache is nil.
func newCacheStore(opts *Options) *clientCache {
	co := opts.ClientCache
	if co == nil {
		return nil
	}
	cc := &clientCache{opts: *co}
	cc.opts.Prefixes = append([]string(nil), co.Prefixes...)
	if cc.opts.MaxBytes == 0 {
		cc.opts.MaxBytes = 64 << 20
	}
	// Hits apply waiting invalidations now and then (transport.Mux.Poll),
	// so that goroutines that only hit see them without the scheduler's
	// help. cc.src is set before the client is returned, so before any
	// hit.
	cc.store = cache.New(cache.Config{MaxBytes: cc.opts.MaxBytes, Policy: cc.opts.Policy.store(), Tick: cc.poll})
	return cc
}

// trackingConfig is cfg for the tracking connections of cc; the caller
// sets Tracking.Flush.
func trackingConfig(cc *clientCache, cfg transport.Config) transport.Config {
	cfg.Connections = max(cc.opts.Connections, 1)
	cfg.Protocol = 3
	cfg.OnPush = nil
	cfg.OnConnect = nil
	cfg.Tracking = &transport.Tracking{
		Broadcast:  cc.opts.Broadcast,
		Prefixes:   cc.opts.Prefixes,
		Invalidate: cc.store.Invalidate,
	}
	return cfg
}

// poll applies the invalidations waiting unread on the tracking
// connections; the store calls it between hits (cache.Config.Tick).
func (cc *clientCache) poll() {
	cc.src.poll()
}

// trackerFor returns the tracker that serves key: on a cluster, the one
// of the slot's primary.
func (cc *clientCache) trackerFor(ctx context.Context, key string) (*tracker, error) {
	return cc.src.trackerFor(ctx, key)
}

// tracked reports whether the server reports changes to key.
func (cc *clientCache) tracked(key string) bool {
	if !cc.opts.Broadcast || len(cc.opts.Prefixes) == 0 {
		return true
	}
	for _, p := range cc.opts.Prefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	return false
}

// deadline is the expiry, on the store's clock, of a value read at t0 (the
// store's clock before the command was sent) whose key had pttl
// milliseconds to live on the server (-1: no expiry), under local ttl.
// It is 0 for no expiry; ok is false when the value is already dead.
func (cc *clientCache) deadline(t0 int64, pttl int64, ttl time.Duration) (int64, bool) {
	var d int64
	if pttl >= 0 {
		// The server measured the TTL after t0, so t0+pttl is no later
		// than the real expiry.
		d = t0 + pttl*int64(time.Millisecond)
		if pttl == 0 {
			return 0, false
		}
	}
	if ttl > 0 && (d == 0 || t0+int64(ttl) < d) {
		d = t0 + int64(ttl)
	}
	return d, true
}

// invalidateKeys drops keys written by this client, after the write's
// reply and before the caller sees it. It also spoils reads of those keys
// in flight on any connection.
func (cc *clientCache) invalidateKeys(keys []string) {
	for _, k := range keys {
		cc.store.InvalidateString(k)
	}
}

// barrier returns once every invalidation the server sent before now, on
// every tracking connection, has been applied: a PING on each connection
// is answered after the pushes queued before it.
func (cc *clientCache) barrier(ctx context.Context) error {
	return cc.src.barrier(ctx)
}

// barrierOn is barrier for the tracking connections of m.
func (cc *clientCache) barrierOn(ctx context.Context, m *transport.Mux) error {
	for i := uint32(0); i < cc.conns; i++ {
		x := newCmd(&cmdPING)
		x.seal()
		x.dec = cacheDecAny
		x.Route = i
		if err := m.Do(ctx, &x.Request); err != nil {
			// The connection broke or ctx ended: a broken connection has
			// flushed the cache; otherwise be safe and flush.
			cc.store.Flush()
			return err
		}
		x.Recycle()
	}
	return nil
}

// afterWrite keeps the cache coherent with a write x made through the
// client, which has just been acknowledged: its keys are dropped, and a
// write whose keys are not known (scripts, FLUSHALL, commands with keys
// found at run time) waits for the server's invalidations.
func (c *Client) afterWrite(ctx context.Context, x *cmd) {
	cc := c.cache
	if cc == nil || x.info == nil {
		return
	}
	f := x.info.flags
	if f&flagReadonly != 0 || f&(flagWrite|flagMovableKeys) == 0 {
		// Reads, and commands that touch no keys (PING, PUBLISH, INFO).
		// Scripts and functions (movable keys) may write without the
		// write flag.
		return
	}
	if f&flagMovableKeys != 0 || len(x.keys) == 0 {
		_ = cc.barrier(ctx)
		return
	}
	cc.invalidateKeys(x.keys)
}

// afterUnknown is afterWrite for a command whose flags are unknown (Do).
func (c *Client) afterUnknown(ctx context.Context) {
	if c.cache != nil {
		_ = c.cache.barrier(ctx)
	}
}

// CacheStats returns the counters of the client-side cache; all zero when
// it is not enabled.
func (c *Client) CacheStats() CacheStats {
	if c.cache == nil {
		return CacheStats{}
	}
	return cacheStats(c.cache.store.Stats())
}

// FlushCache drops every entry of the client-side cache.
func (c *Client) FlushCache() {
	if c.cache != nil {
		c.cache.store.Flush()
	}
}

func (c *Client) connectCache(ctx context.Context) error {
	if c.cache == nil {
		return nil
	}
	return c.cache.src.connect(ctx)
}

func (c *Client) closeCache() {
	if c.cache == nil {
		return
	}
	c.cache.src.close()
	c.cache.store.Flush()
}

// afterWrites is afterWrite for the commands of a batch or transaction,
// all acknowledged: known keys are dropped, and one barrier covers every
// command whose keys are not known. Batch.Exec and Tx.Exec call it after
// the replies arrive and before the results are handed out.
func (c *Client) afterWrites(ctx context.Context, xs []*cmd) {
	cc := c.cache
	if cc == nil {
		return
	}
	barrier := false
	for _, x := range xs {
		if x.info == nil {
			continue
		}
		f := x.info.flags
		if f&flagReadonly != 0 || f&(flagWrite|flagMovableKeys) == 0 {
			continue
		}
		if f&flagMovableKeys != 0 || len(x.keys) == 0 {
			barrier = true
			continue
		}
		cc.invalidateKeys(x.keys)
	}
	if barrier {
		_ = cc.barrier(ctx)
	}
}

// answered returns the commands of xs that hold their outcome (errs[i] is
// nil); the others belong to the transport.
func answered(xs []*cmd, errs []error) []*cmd {
	out := make([]*cmd, 0, len(xs))
	for i, x := range xs {
		if errs[i] == nil {
			out = append(out, x)
		}
	}
	return out
}

// serverChanged is for a topology that moves a single-server client to
// another server (a Sentinel failover): whatever was read from the old
// server is dropped now, and the tracking connections break, so that they
// redial (to the address the configuration resolves to now) and track
// again. cause is the error of the reads in flight on them.
func (cc *clientCache) serverChanged(cause error) {
	cc.store.Flush()
	cc.src.serverChanged(cause)
}
