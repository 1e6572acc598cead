package cache

// A shard of the Store: its entries, the eviction queues of its Policy,
// the size accounting of the memory bound, and the locking and deferred
// removal that keep hits from waiting for invalidations.

import (
	"math/bits"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Sizes of the bookkeeping, from the Go memory layout: the structs
// themselves, rounded to their allocation size class, and a map slot
// (string header, pointer and control byte at the maps' 7/8 load).
var (
	entryCost = int64(sizeClass(int(unsafe.Sizeof(entry{}))))
	keyCost   = int64(sizeClass(int(unsafe.Sizeof(keyNode{}))) + mapSlot)
	ghostCost = int64(8 + 16) // ring slot and map slot
)

const mapSlot = 32

// StringSize is the heap size of a string of n bytes.
func StringSize(n int) int64 { return int64(sizeClass(n)) }

// sizeClass approximates the allocator's size class for n bytes: steps of
// 16 bytes up to 512, then steps of 1/8 of the next power of two.
func sizeClass(n int) int {
	if n <= 0 {
		return 0
	}
	if n <= 512 {
		return (n + 15) &^ 15
	}
	step := (1 << bits.Len(uint(n-1))) / 8
	return (n + step - 1) / step * step
}

// padding keeps shards on separate cache lines.
type padding [64]byte

// shard is one lock's worth of the store.
type shard struct {
	mu sync.RWMutex
	// The hit counters share the lock's cache line: a hit writes both.
	hits, misses atomic.Int64
	s            *Store
	keys         map[string]*keyNode
	pending      map[string]*pending
	used         int64
	max          int64
	entries      int64

	main       list // CLOCK, LRU, and the main FIFO of S3FIFO
	small      list // S3FIFO only
	ghost      ghost
	smallBytes int64

	evictions     int64
	invalidations atomic.Int64

	// Keys whose entries were marked dead by an invalidation that could
	// not take the write lock; the next holder of the write lock removes
	// them (sweep). deadMu is only ever held for an append or a swap.
	// hasFull says that some are full invalidations, not applied to the
	// entries yet: hits must sweep first.
	deadMu  sync.Mutex
	dead    []deadKey
	hasDead atomic.Bool
	hasFull atomic.Bool
	_       padding
}

// keyNode holds the entries of one key.
type keyNode struct {
	plain *entry
	subs  map[string]*entry
}

// entry is one cached value.
type entry struct {
	val        Value
	key        string
	sub        string
	expire     int64
	size       int64 // accounted bytes
	freq       atomic.Uint32
	dead       atomic.Bool // invalidated, not removed yet
	inSmall    bool
	linked     bool // in one of the shard's lists
	prev, next *entry
}

// hit records a hit on e and releases the read lock.
func (sh *shard) hit(e *entry) {
	switch sh.s.policy {
	case CLOCK:
		if e.freq.Load() == 0 {
			e.freq.Store(1)
		}
	case S3FIFO:
		if f := e.freq.Load(); f < 3 {
			e.freq.Store(f + 1)
		}
	case LRU:
		sh.mu.RUnlock()
		n := sh.hits.Add(1)
		sh.lock()
		// e may have been removed (or the shard cleared) meanwhile.
		if e.linked {
			sh.main.unlink(e)
			sh.main.pushBack(e)
		}
		sh.mu.Unlock()
		sh.afterHit(n)
		return
	}
	sh.mu.RUnlock()
	sh.afterHit(sh.hits.Add(1))
}

// afterHit runs the store's tick now and then; n is the shard's hit count.
func (sh *shard) afterHit(n int64) {
	if n%tickHits == 0 && sh.s.tick != nil {
		sh.s.maybeTick()
	}
}

func (sh *shard) put(key, sub string, v Value, size int64, expire int64) bool {
	kn := sh.keys[key]
	if kn != nil {
		var old *entry
		if sub == "" {
			old = kn.plain
		} else {
			old = kn.subs[sub]
		}
		if old != nil {
			sh.remove(old)
		}
	}
	cost := entryCost + StringSize(len(sub)) + size
	if sub != "" {
		cost += mapSlot
	}
	for {
		need := cost
		kn = sh.keys[key]
		if kn == nil {
			need += keyCost + StringSize(len(key))
		}
		if need > sh.max {
			return false
		}
		if sh.used+need <= sh.max {
			break
		}
		victim := sh.victim()
		if victim == nil {
			return false
		}
		sh.remove(victim)
		sh.evictions++
	}
	if kn == nil {
		key = cloneString(key)
		kn = &keyNode{}
		sh.keys[key] = kn
		sh.used += keyCost + StringSize(len(key))
	} else {
		key = sh.keyOf(kn, key)
	}
	e := &entry{val: v, key: key, sub: sub, expire: expire, size: cost}
	if sub == "" {
		kn.plain = e
	} else {
		if kn.subs == nil {
			kn.subs = make(map[string]*entry, 1)
		}
		kn.subs[sub] = e
	}
	sh.used += cost
	sh.entries++
	sh.admit(e)
	return true
}

// keyOf returns the store's own copy of key, shared by its entries.
func (sh *shard) keyOf(kn *keyNode, key string) string {
	if kn.plain != nil {
		return kn.plain.key
	}
	for _, e := range kn.subs {
		return e.key
	}
	return cloneString(key)
}

func cloneString(s string) string {
	if s == "" {
		return ""
	}
	return string([]byte(s))
}

// remove unlinks e and frees its bytes, and its key's when it was the last.
func (sh *shard) remove(e *entry) {
	kn := sh.keys[e.key]
	if kn == nil {
		return
	}
	if e.sub == "" {
		if kn.plain != e {
			return
		}
		kn.plain = nil
	} else {
		if kn.subs[e.sub] != e {
			return
		}
		delete(kn.subs, e.sub)
	}
	sh.unlinkPolicy(e)
	sh.used -= e.size
	sh.entries--
	if kn.plain == nil && len(kn.subs) == 0 {
		delete(sh.keys, e.key)
		sh.used -= keyCost + StringSize(len(e.key))
	}
}

func (sh *shard) invalidate(key string) {
	if p := sh.pending[key]; p != nil {
		p.gen.Add(1)
	}
	kn := sh.keys[key]
	if kn == nil {
		return
	}
	sh.invalidations.Add(1)
	if kn.plain != nil {
		sh.remove(kn.plain)
	}
	for _, e := range kn.subs {
		sh.remove(e)
	}
}

func (sh *shard) clear() {
	clear(sh.keys)
	sh.main.drop()
	sh.small.drop()
	sh.smallBytes = 0
	sh.ghost.reset()
	sh.used = 0
	sh.entries = 0
}

// rlock takes the read lock for a hit, once no invalidation waits to be
// applied to the entries. It returns false, without the lock, when one
// waits and the write lock is taken so that it cannot be applied now: the
// hit is then a miss, and the read goes to the server.
func (sh *shard) rlock() bool {
	sh.mu.RLock()
	if !sh.hasFull.Load() {
		return true
	}
	sh.mu.RUnlock()
	if !sh.mu.TryLock() {
		return false
	}
	sh.sweep()
	sh.mu.Unlock()
	sh.mu.RLock()
	return true
}

// lock takes the shard's write lock and removes the entries invalidated
// meanwhile.
func (sh *shard) lock() {
	sh.mu.Lock()
	sh.sweep()
}

// invalidateLater invalidates key while another goroutine holds the
// shard's lock: it marks the key's entries dead under the read lock when
// that is free; when a writer holds or waits for the lock it only records
// the key (a full invalidation), and hits on the shard stop being served
// until the next sweep has applied it (see GetString).
func (sh *shard) invalidateLater(key string) {
	if sh.mu.TryRLock() {
		marked := sh.mark(key)
		sh.mu.RUnlock()
		if marked {
			sh.deferRemoval(key, false)
		}
		return
	}
	sh.deferRemoval(key, true)
}

// mark is invalidate under the read lock: it spoils the key's fills in
// flight and marks its entries dead, and reports whether it had any.
func (sh *shard) mark(key string) bool {
	if p := sh.pending[key]; p != nil {
		p.gen.Add(1)
	}
	kn := sh.keys[key]
	if kn == nil {
		return false
	}
	sh.invalidations.Add(1)
	if kn.plain != nil {
		kn.plain.dead.Store(true)
	}
	for _, e := range kn.subs {
		e.dead.Store(true)
	}
	return true
}

// deferRemoval records a key marked dead, or (full) to be invalidated,
// for the next sweep.
func (sh *shard) deferRemoval(key string, full bool) {
	sh.deadMu.Lock()
	sh.dead = append(sh.dead, deadKey{cloneString(key), full})
	sh.hasDead.Store(true)
	if full {
		sh.hasFull.Store(true)
	}
	sh.deadMu.Unlock()
}

// deadKey is a key recorded by deferRemoval.
type deadKey struct {
	key  string
	full bool
}

// sweep removes the entries marked dead of the keys recorded by
// deferRemoval. It runs with the write lock held, before anything else
// that holds it, so that it never meets an entry stored after the
// invalidation: only entries marked dead are removed.
func (sh *shard) sweep() {
	if !sh.hasDead.Load() {
		return
	}
	sh.deadMu.Lock()
	keys := sh.dead
	sh.dead = nil
	sh.hasDead.Store(false)
	sh.hasFull.Store(false)
	sh.deadMu.Unlock()
	for _, dk := range keys {
		if dk.full {
			sh.invalidate(dk.key)
			continue
		}
		kn := sh.keys[dk.key]
		if kn == nil {
			continue
		}
		if kn.plain != nil && kn.plain.dead.Load() {
			sh.remove(kn.plain)
		}
		for _, e := range kn.subs {
			if e.dead.Load() {
				sh.remove(e)
			}
		}
	}
}
