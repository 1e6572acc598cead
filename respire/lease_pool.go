package respire

// The pool behind Lease and LeaseList: one free list per power-of-two size
// class, bounded in bytes. sync.Pool, used before, keeps whatever it is
// given until the next garbage collections, however much that is; a burst
// of large values could pin hundreds of megabytes between two cycles. The
// free lists here hold at most the limit set by SetLeasePoolLimit, and
// give back, at each garbage collection, the buffers that no caller took
// since the previous one, so that a process that stops reading leases
// does not keep their memory.
//
// The accounting is conservative: a buffer counts in retained from just
// before it enters a free list until just after it leaves one, so that
// retained never understates what the lists hold and never exceeds the
// limit for long (an over-limit add is undone at once).

import (
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// DefaultLeasePoolLimit is the number of bytes the lease pool may keep for
// reuse until SetLeasePoolLimit changes it.
const DefaultLeasePoolLimit = 64 << 20

// SetLeasePoolLimit sets how many bytes of released buffers the lease pool
// behind Lease and LeaseList may keep for reuse, and returns the previous
// limit. The pool is process-wide: it serves every Client. A buffer
// released while the pool is full is dropped and left to the garbage
// collector, as are buffers over 4 MiB. No size class may hold more than a
// quarter of the limit, so that a burst of one size cannot crowd out the
// others. A lower limit takes effect at once: buffers over it are dropped.
// Zero turns pooling off (every lease then allocates); a negative limit is
// taken as zero.
//
// The default, DefaultLeasePoolLimit (64 MiB), holds a few hundred
// in-flight values of 64 KiB, or tens of thousands of small ones; raise it
// for many concurrent callers reading values of hundreds of kilobytes,
// lower it where memory is tight. Buffers that no caller took between two
// garbage collections are dropped whatever the limit, so an idle pool
// shrinks on its own.
func SetLeasePoolLimit(limit int64) (previous int64) {
	limit = max(limit, 0)
	previous = leasePool.limit.Swap(limit)
	if limit < previous {
		leasePool.shrink(limit)
	}
	return previous
}

// leaseOverhead is what a pooled Lease costs beside its buffers: the
// struct and its slot in a free list.
const leaseOverhead = int64(unsafe.Sizeof(Lease{})) + int64(unsafe.Sizeof((*Lease)(nil)))

// leaseFreeList is the free list of one size class.
type leaseFreeList struct {
	mu    sync.Mutex
	free  []*Lease
	bytes int64 // the pooled size of what free holds
	low   int   // the fewest entries free held since the last trim
	_     [64]byte
}

// leasePoolState is the process-wide pool; see the file comment.
type leasePoolState struct {
	lists    [leaseMaxShift - leaseMinShift + 1]leaseFreeList
	retained atomic.Int64 // bytes held by the lists, see the file comment
	limit    atomic.Int64
	gcs      atomic.Uint64 // garbage collections seen, for tests
	noTrim   atomic.Bool   // set by tests that count what the lists hold
}

var leasePool leasePoolState

func init() {
	leasePool.limit.Store(DefaultLeasePoolLimit)
	armLeaseTrim()
}

// pooledSize is what l costs while it waits in a free list.
func (l *Lease) pooledSize() int64 {
	return int64(cap(l.b)) + int64(cap(l.spans)*spanSize) + leaseOverhead
}

// take returns a pooled Lease, or nil when there is none.
func (p *leaseFreeList) take() *Lease {
	p.mu.Lock()
	n := len(p.free)
	if n == 0 {
		p.mu.Unlock()
		return nil
	}
	l := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	size := l.pooledSize()
	p.bytes -= size
	p.low = min(p.low, n-1)
	p.mu.Unlock()
	leasePool.retained.Add(-size)
	return l
}

// put keeps l for reuse, or drops it when the pool is full.
func (p *leaseFreeList) put(l *Lease) {
	size := l.pooledSize()
	limit := leasePool.limit.Load()
	if leasePool.retained.Add(size) > limit {
		leasePool.retained.Add(-size)
		return
	}
	p.mu.Lock()
	if p.bytes+size > limit/4 {
		p.mu.Unlock()
		leasePool.retained.Add(-size)
		return
	}
	p.bytes += size
	p.free = append(p.free, l)
	p.mu.Unlock()
}

// shrink drops pooled buffers, the largest first, until the pool holds at
// most limit bytes and no class more than a quarter of it.
func (pool *leasePoolState) shrink(limit int64) {
	for c := len(pool.lists) - 1; c >= 0; c-- {
		p := &pool.lists[c]
		p.mu.Lock()
		over := max(p.bytes-limit/4, pool.retained.Load()-limit)
		n := 0
		for ; n < len(p.free) && over > 0; n++ {
			over -= p.free[n].pooledSize()
		}
		p.drop(n)
		p.mu.Unlock()
	}
}

// trim drops, in every class, the buffers that no caller took since the
// last trim: those below the list's low-water mark. It runs after each
// garbage collection.
func (pool *leasePoolState) trim() {
	for c := range pool.lists {
		p := &pool.lists[c]
		p.mu.Lock()
		p.drop(p.low)
		p.low = len(p.free)
		p.mu.Unlock()
	}
}

// drop removes n entries from the bottom of p's free list, the ones taken
// least recently. p.mu is held.
func (p *leaseFreeList) drop(n int) {
	n = min(n, len(p.free))
	if n <= 0 {
		return
	}
	var size int64
	for _, l := range p.free[:n] {
		size += l.pooledSize()
	}
	rest := copy(p.free, p.free[n:])
	clear(p.free[rest:])
	p.free = p.free[:rest]
	p.low = min(p.low, rest)
	p.bytes -= size
	leasePool.retained.Add(-size)
}

// leaseTrimToken is garbage whose cleanup trims the pool and arms the next
// token: a hook on every garbage collection. It holds a pointer so that
// it is not batched with other tiny objects, which would delay its
// collection.
type leaseTrimToken struct{ _ *byte }

func armLeaseTrim() {
	runtime.AddCleanup(new(leaseTrimToken), func(struct{}) {
		if !leasePool.noTrim.Load() {
			leasePool.trim()
		}
		leasePool.gcs.Add(1)
		armLeaseTrim()
	}, struct{}{})
}

// leasePoolRetained returns the bytes the pool holds, for tests.
func leasePoolRetained() int64 { return leasePool.retained.Load() }
