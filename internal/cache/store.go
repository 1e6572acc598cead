package cache

import (
	"hash/maphash"
	"math/bits"
	"sync/atomic"
	"time"
)

// Policy chooses which entry a full shard evicts.
type Policy uint8

const (
	// S3FIFO is the default. New entries enter a small FIFO; those hit
	// again while there move to a main FIFO, where a 2-bit hit counter
	// buys extra rounds. Keys evicted from the small FIFO are remembered
	// (hashes only) so that they enter the main FIFO when they come back.
	// A hit bumps the counter under the shard's read lock. On a Zipf
	// trace it keeps 3 to 7 more points of hit ratio than CLOCK and LRU
	// when the cache holds 10% or less of the keys (see BenchmarkPolicy),
	// at a hit-path cost within a few ns of CLOCK's.
	S3FIFO Policy = iota
	// CLOCK (second chance): a hit sets a reference bit under the shard's
	// read lock; eviction gives referenced entries one more round.
	CLOCK
	// LRU moves an entry to the back of its list on every hit, which
	// needs the shard's write lock: hits on one shard serialize.
	LRU
)

func (p Policy) String() string {
	switch p {
	case CLOCK:
		return "clock"
	case LRU:
		return "lru"
	case S3FIFO:
		return "s3fifo"
	}
	return "unknown"
}

// Config configures a Store.
type Config struct {
	// MaxBytes bounds the bytes the store accounts for. It must be
	// positive.
	MaxBytes int64
	// Policy is the eviction policy; the zero value is S3FIFO.
	Policy Policy
	// Shards is the number of shards, rounded up to a power of two. Zero
	// chooses 64, fewer when that would leave a shard less than 64 KiB.
	Shards int
	// Tick, when set, is called on the hit path, after the hit, at most
	// once every TickEvery (default 20µs) across the store: the owner
	// applies there the invalidations waiting on its connections, so
	// that goroutines that only hit (and so never wait for the network)
	// still see them promptly. It must not block for long.
	Tick      func()
	TickEvery time.Duration
}

// Value is a cached reply. Str holds a string value (so that a cached GET
// returns it without allocating), Int and Float numbers; Any holds anything
// else and must never be modified once stored; Miss records that the key
// did not exist. Tag is the owner's label of the value, kept as it is (a
// cluster client labels each value with the node it came from).
type Value struct {
	Str   string
	Int   int64
	Float float64
	Any   any
	Miss  bool
	Tag   uint64
}

// Stats are the store's counters.
type Stats struct {
	Hits, Misses  int64
	Evictions     int64 // entries dropped to make room
	Invalidations int64 // keys invalidated that held entries
	Flushes       int64
	Bytes         int64 // bytes in use, as accounted
	MaxBytes      int64
	Entries       int64
}

// Store is a sharded, byte-bounded cache of values per key. It is safe for
// concurrent use.
type Store struct {
	shards []shard
	mask   uint64
	seed   maphash.Seed
	policy Policy
	max    int64
	base   time.Time
	// epoch changes on every Flush; a Fill begun in an older epoch
	// stores nothing.
	epoch   atomic.Uint64
	flushes atomic.Int64

	tick      func()
	tickEvery int64
	lastTick  atomic.Int64
}

// New returns an empty store.
func New(cfg Config) *Store {
	if cfg.MaxBytes <= 0 {
		panic("cache: MaxBytes must be positive")
	}
	n := cfg.Shards
	if n <= 0 {
		n = 64
		for n > 1 && cfg.MaxBytes/int64(n) < 64<<10 {
			n /= 2
		}
	}
	n = 1 << bits.Len(uint(n-1))
	s := &Store{
		shards: make([]shard, n),
		mask:   uint64(n - 1),
		seed:   maphash.MakeSeed(),
		policy: cfg.Policy,
		max:    cfg.MaxBytes,
		base:   time.Now(),
		tick:   cfg.Tick,
	}
	s.tickEvery = int64(cfg.TickEvery)
	if s.tickEvery <= 0 {
		s.tickEvery = int64(defaultTickEvery)
	}
	for i := range s.shards {
		sh := &s.shards[i]
		sh.s = s
		sh.max = cfg.MaxBytes / int64(n)
		sh.keys = make(map[string]*keyNode)
		sh.pending = make(map[string]*pending)
	}
	return s
}

// defaultTickEvery is how often, at most, hits call Config.Tick.
const defaultTickEvery = 20 * time.Microsecond

// tickHits is how many hits of a shard pass between two looks at the
// clock for Config.Tick: a hit costs a few tens of ns, so the clock is
// read about every microsecond per busy shard.
const tickHits = 64

// maybeTick calls the tick unless another hit did within tickEvery.
func (s *Store) maybeTick() {
	now := s.Now()
	last := s.lastTick.Load()
	if now-last < s.tickEvery || !s.lastTick.CompareAndSwap(last, now) {
		return
	}
	s.tick()
}

// Now returns the store's clock: monotonic nanoseconds since New. Expiry
// deadlines given to Fill.Put are on this clock.
func (s *Store) Now() int64 { return int64(time.Since(s.base)) }

// Deadline converts a point in time to the store's clock.
func (s *Store) Deadline(t time.Time) int64 { return int64(t.Sub(s.base)) }

func (s *Store) shardOf(key string) *shard {
	return &s.shards[maphash.String(s.seed, key)&s.mask]
}

// GetString is the hit path of a plain string read (GET): it returns the
// value cached for key, and whether the key was cached as missing. ok is
// false when nothing valid is cached.
func (s *Store) GetString(key string) (v string, miss, ok bool) {
	v, _, miss, ok = s.GetStringTag(key)
	return v, miss, ok
}

// GetStringTag is GetString that also returns the value's Tag.
func (s *Store) GetStringTag(key string) (v string, tag uint64, miss, ok bool) {
	sh := s.shardOf(key)
	if !sh.rlock() {
		sh.misses.Add(1)
		return "", 0, false, false
	}
	var e *entry
	if kn := sh.keys[key]; kn != nil {
		e = kn.plain
	}
	// The clock is read only for entries that expire; the read lock keeps
	// e alive meanwhile.
	if e == nil || e.dead.Load() || (e.expire != 0 && s.Now() >= e.expire) {
		sh.mu.RUnlock()
		sh.misses.Add(1)
		return "", 0, false, false
	}
	v, tag, miss = e.val.Str, e.val.Tag, e.val.Miss
	sh.hit(e)
	return v, tag, miss, true
}

// Get returns the value cached for key under variant sub ("" or nil is the
// plain string value).
func (s *Store) Get(key string, sub []byte) (Value, bool) {
	sh := s.shardOf(key)
	if !sh.rlock() {
		sh.misses.Add(1)
		return Value{}, false
	}
	var e *entry
	if kn := sh.keys[key]; kn != nil {
		if len(sub) == 0 {
			e = kn.plain
		} else {
			e = kn.subs[string(sub)]
		}
	}
	if e == nil || e.dead.Load() || (e.expire != 0 && s.Now() >= e.expire) {
		sh.mu.RUnlock()
		sh.misses.Add(1)
		return Value{}, false
	}
	v := e.val
	sh.hit(e)
	return v, true
}

// Fill is a read in flight for one key, begun with Begin. Exactly one of
// Done (after any number of Put) must be called.
type Fill struct {
	sh    *shard
	key   string
	p     *pending
	gen   uint64
	epoch uint64
}

// pending counts the fills in flight for a key and its invalidations.
type pending struct {
	// gen is bumped by invalidations, which may hold only the read lock.
	gen  atomic.Uint64
	refs int
}

// Begin registers a read of key that is about to be sent. Call it before
// the command leaves the process.
func (s *Store) Begin(key string) Fill {
	sh := s.shardOf(key)
	sh.lock()
	p := sh.pending[key]
	if p == nil {
		p = &pending{}
		sh.pending[key] = p
	}
	p.refs++
	f := Fill{sh: sh, key: key, p: p, gen: p.gen.Load(), epoch: s.epoch.Load()}
	sh.mu.Unlock()
	return f
}

// Valid reports whether no invalidation of the key and no flush happened
// since Begin.
func (f *Fill) Valid() bool {
	f.sh.mu.RLock()
	ok := f.valid()
	f.sh.mu.RUnlock()
	return ok
}

func (f *Fill) valid() bool {
	return f.p != nil && f.p.gen.Load() == f.gen && f.sh.s.epoch.Load() == f.epoch
}

// Put stores v as the key's variant sub if the fill is still valid, and
// reports whether it did. size is the bytes v holds beyond its headers
// (the string's length, a map's keys and values); expire is a deadline on
// the store's clock, or 0 for none. A value too large for its shard is not
// stored.
func (f *Fill) Put(sub string, v Value, size int64, expire int64) bool {
	sh := f.sh
	sh.lock()
	ok := f.valid()
	if ok {
		ok = sh.put(f.key, sub, v, size, expire)
	}
	sh.mu.Unlock()
	return ok
}

// Done ends the fill.
func (f *Fill) Done() {
	if f.p == nil {
		return
	}
	sh := f.sh
	sh.lock()
	f.p.refs--
	if f.p.refs == 0 && sh.pending[f.key] == f.p {
		delete(sh.pending, f.key)
	}
	sh.mu.Unlock()
	f.p = nil
}

// Invalidate drops every entry of key and spoils the fills of key in
// flight. key is only read during the call.
//
// It does not wait for the hits in progress on the key's shard: when the
// shard's write lock is not free at once, it marks the key's entries dead
// under the read lock (hits skip them) and leaves their removal to the
// next holder of the write lock. A write lock would wait for the readers
// to leave and block new ones, and a goroutine waiting for it parks: with
// every processor busy with hits it would be woken only when the
// scheduler gets round to it, and invalidations would queue behind it.
func (s *Store) Invalidate(key []byte) {
	sh := &s.shards[maphash.Bytes(s.seed, key)&s.mask]
	if sh.mu.TryLock() {
		sh.sweep()
		sh.invalidate(string(key))
		sh.mu.Unlock()
		return
	}
	sh.invalidateLater(string(key))
}

// InvalidateString is Invalidate for a string key.
func (s *Store) InvalidateString(key string) {
	sh := s.shardOf(key)
	if sh.mu.TryLock() {
		sh.sweep()
		sh.invalidate(key)
		sh.mu.Unlock()
		return
	}
	sh.invalidateLater(key)
}

// Flush drops every entry and spoils every fill in flight.
func (s *Store) Flush() {
	s.epoch.Add(1)
	s.flushes.Add(1)
	for i := range s.shards {
		sh := &s.shards[i]
		sh.lock()
		sh.clear()
		sh.mu.Unlock()
	}
}

// DropIf drops every entry whose value matches, and returns how many it
// dropped: for an owner that no longer vouches for the values it labelled
// (a cluster node that failed or lost slots). Fills in flight are not
// spoiled; the owner labels them as it sees fit.
func (s *Store) DropIf(match func(key string, v *Value) bool) int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.lock()
		for _, kn := range sh.keys {
			if e := kn.plain; e != nil && match(e.key, &e.val) {
				sh.remove(e)
				n++
			}
			for _, e := range kn.subs {
				if match(e.key, &e.val) {
					sh.remove(e)
					n++
				}
			}
		}
		sh.mu.Unlock()
	}
	return n
}

// Stats returns the store's counters.
func (s *Store) Stats() Stats {
	st := Stats{MaxBytes: s.max, Flushes: s.flushes.Load()}
	for i := range s.shards {
		sh := &s.shards[i]
		st.Hits += sh.hits.Load()
		st.Misses += sh.misses.Load()
		sh.mu.RLock()
		st.Bytes += sh.used
		st.Entries += sh.entries
		st.Evictions += sh.evictions
		st.Invalidations += sh.invalidations.Load()
		sh.mu.RUnlock()
	}
	return st
}
