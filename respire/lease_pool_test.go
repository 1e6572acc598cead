package respire

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// withLeasePoolLimit sets the pool's limit for the test and empties the
// pool before and after, so that tests do not see each other's buffers.
// The trims after garbage collections are off meanwhile, so that what the
// pool holds changes only when the test says so.
func withLeasePoolLimit(t *testing.T, limit int64) {
	leasePool.noTrim.Store(true)
	prev := SetLeasePoolLimit(0)
	SetLeasePoolLimit(limit)
	t.Cleanup(func() {
		SetLeasePoolLimit(0)
		SetLeasePoolLimit(prev)
		leasePool.noTrim.Store(false)
	})
}

func TestLeasePoolLimitHolds(t *testing.T) {
	const limit = 256 << 10
	withLeasePoolLimit(t, limit)
	require.Zero(t, leasePoolRetained())
	for _, size := range []int{10, 1000, 5000, 100 << 10, 1 << 20} {
		ls := make([]*Lease, 1000)
		for i := range ls {
			ls[i] = getLease(size)
		}
		for _, l := range ls {
			l.Release()
		}
		assert.LessOrEqual(t, leasePoolRetained(), int64(limit), "size %d", size)
	}
	// Each class holds at most a quarter of the limit, so the last sizes
	// did not crowd out the first.
	for c := range leasePool.lists {
		p := &leasePool.lists[c]
		p.mu.Lock()
		assert.LessOrEqual(t, p.bytes, int64(limit/4), "class %d", c)
		p.mu.Unlock()
	}
	assert.NotEmpty(t, leasePool.lists[leaseClass(10)].free)
	assert.Empty(t, leasePool.lists[leaseClass(1<<20)].free, "a 1 MiB buffer is over a quarter of 256 KiB")
	assert.Equal(t, leasePoolSum(), leasePoolRetained())
}

// leasePoolSum adds up what the free lists hold.
func leasePoolSum() int64 {
	var sum int64
	for c := range leasePool.lists {
		p := &leasePool.lists[c]
		p.mu.Lock()
		for _, l := range p.free {
			sum += l.pooledSize()
		}
		p.mu.Unlock()
	}
	return sum
}

func TestLeasePoolReuses(t *testing.T) {
	withLeaseChecks(t, false)
	withLeasePoolLimit(t, DefaultLeasePoolLimit)
	l := getLease(100)
	l.Release()
	assert.Equal(t, l.pooledSize(), leasePoolRetained())
	again := getLease(120) // the same size class
	assert.Same(t, l, again)
	assert.Zero(t, leasePoolRetained())
	again.Release()
}

func TestSetLeasePoolLimit(t *testing.T) {
	withLeasePoolLimit(t, 1<<20)
	assert.Equal(t, int64(1<<20), SetLeasePoolLimit(2<<20))
	ls := make([]*Lease, 100)
	for i := range ls {
		ls[i] = getLease(4000)
	}
	for _, l := range ls {
		l.Release()
	}
	full := leasePoolRetained()
	require.Greater(t, full, int64(100*4096))

	// A lower limit drops what is over it at once.
	SetLeasePoolLimit(full / 2)
	assert.LessOrEqual(t, leasePoolRetained(), full/2)
	assert.Equal(t, leasePoolSum(), leasePoolRetained())

	// Zero turns pooling off.
	SetLeasePoolLimit(-5)
	assert.Zero(t, SetLeasePoolLimit(0), "a negative limit is zero")
	assert.Zero(t, leasePoolRetained())
	l := getLease(10)
	l.Release()
	assert.Zero(t, leasePoolRetained())
}

// Buffers no caller took between two trims are dropped; the ones in use
// stay.
func TestLeasePoolTrimsIdleBuffers(t *testing.T) {
	withLeaseChecks(t, false)
	withLeasePoolLimit(t, DefaultLeasePoolLimit)
	ls := make([]*Lease, 10)
	for i := range ls {
		ls[i] = getLease(1000)
	}
	for _, l := range ls {
		l.Release()
	}
	p := &leasePool.lists[leaseClass(1000)]
	leasePool.trim() // the ten were pooled since the last trim: kept
	require.Len(t, p.free, 10)
	hot := getLease(1000)
	hot.Release()
	leasePool.trim() // nine stayed in the pool throughout: dropped
	assert.Len(t, p.free, 1)
	assert.Same(t, hot, p.free[0])
	assert.Equal(t, hot.pooledSize(), leasePoolRetained())
}

// The trim runs after garbage collections, without being asked: buffers
// left idle for a whole cycle go. It waits for three collections: the
// first trim may have begun before the buffers were pooled.
func TestLeasePoolTrimsAfterGC(t *testing.T) {
	withLeaseChecks(t, false)
	withLeasePoolLimit(t, DefaultLeasePoolLimit)
	leasePool.noTrim.Store(false)
	const size = 2 << 20 // a class nothing else uses
	ls := []*Lease{getLease(size), getLease(size)}
	for _, l := range ls {
		l.Release()
	}
	require.Greater(t, leasePoolRetained(), int64(2*size))
	before := leasePool.gcs.Load()
	for i := 0; leasePool.gcs.Load() < before+3; i++ {
		require.Less(t, i, 1000, "no trim after %d collections", i)
		runtime.GC()
		runtime.Gosched()
	}
	p := &leasePool.lists[leaseClass(size)]
	p.mu.Lock()
	assert.Empty(t, p.free)
	p.mu.Unlock()
}

func TestLeasePoolAllocs(t *testing.T) {
	if raceEnabled || leaseChecks {
		t.Skip("allocation counts are not meaningful under the race detector or with lease checks")
	}
	withLeasePoolLimit(t, DefaultLeasePoolLimit)
	for _, size := range []int{10, 1000, 100 << 10} {
		allocs := testing.AllocsPerRun(1000, func() {
			getLease(size).Release()
		})
		assert.Zero(t, allocs, "size %d", size)
	}
}
