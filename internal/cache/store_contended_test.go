package cache

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// returnsSoon fails the test unless f returns within a few seconds: an
// invalidation must never wait for the shard's lock.
func returnsSoon(t *testing.T, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("%s waited for the shard's lock", what)
	}
}

// An invalidation while hits hold the read lock marks the entries dead:
// hits skip them at once, and the next writer removes them.
func TestInvalidateUnderReaders(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	require.True(t, put(t, s, "k", "v"))
	f := s.Begin("k")
	require.True(t, f.Put("HGET\x00f", Value{Str: "x"}, 1, 0))
	f.Done()
	sh := s.shardOf("k")
	sh.mu.RLock() // a hit in progress
	returnsSoon(t, "Invalidate", func() { s.InvalidateString("k") })
	sh.mu.RUnlock()
	_, _, ok := s.GetString("k")
	assert.False(t, ok, "a dead entry is not served")
	_, ok = s.Get("k", []byte("HGET\x00f"))
	assert.False(t, ok)
	assert.Equal(t, int64(1), s.Stats().Invalidations)
	// The next holder of the write lock removes them; a new value stays.
	require.True(t, put(t, s, "k", "v2"))
	v, _, ok := s.GetString("k")
	require.True(t, ok)
	assert.Equal(t, "v2", v)
	assert.Equal(t, int64(1), s.Stats().Entries)
}

// An invalidation while a writer holds the lock is recorded and applied
// before anything else: a fill begun before it stores nothing, and no hit
// is served until it has been applied.
func TestInvalidateUnderWriter(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	require.True(t, put(t, s, "k", "old"))
	f := s.Begin("k")
	sh := s.shardOf("k")
	sh.mu.Lock() // a writer at work
	returnsSoon(t, "Invalidate", func() { s.Invalidate([]byte("k")) })
	sh.mu.Unlock()
	assert.False(t, f.Put("", Value{Str: "read before the change"}, 1, 0), "the fill is spoiled")
	f.Done()
	_, _, ok := s.GetString("k")
	assert.False(t, ok)
	assert.Equal(t, int64(0), s.Stats().Entries)

	// A value stored by a writer that was in its critical section when
	// the invalidation came is not served either.
	require.True(t, put(t, s, "k", "v"))
	sh.mu.Lock()
	returnsSoon(t, "Invalidate", func() { s.InvalidateString("k") })
	sh.mu.Unlock()
	other := "o"
	for s.shardOf(other) != sh {
		other += "o"
	}
	require.True(t, put(t, s, other, "v"))
	sh.mu.Lock()
	returnsSoon(t, "Invalidate", func() { s.InvalidateString("k") })
	sh.mu.Unlock()
	sh.mu.RLock() // the write lock is busy: a hit cannot apply it, and misses
	_, _, ok = s.GetString(other)
	assert.False(t, ok)
	sh.mu.RUnlock()
	v, _, ok := s.GetString(other)
	assert.True(t, ok, "served again once applied")
	assert.Equal(t, "v", v)
	_, _, ok = s.GetString("k")
	assert.False(t, ok)
	assert.Equal(t, int64(1), s.Stats().Entries, "the other key stays")
}

func TestDropIf(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	for i, k := range []string{"a", "b", "c"} {
		f := s.Begin(k)
		require.True(t, f.Put("", Value{Str: k, Tag: uint64(i % 2)}, 1, 0))
		require.True(t, f.Put("sub", Value{Str: k, Tag: uint64(i % 2)}, 1, 0))
		f.Done()
	}
	n := s.DropIf(func(_ string, v *Value) bool { return v.Tag == 0 })
	assert.Equal(t, 4, n)
	_, _, ok := s.GetString("a")
	assert.False(t, ok)
	v, tag, _, ok := s.GetStringTag("b")
	require.True(t, ok)
	assert.Equal(t, "b", v)
	assert.Equal(t, uint64(1), tag)
	assert.Equal(t, int64(2), s.Stats().Entries)
}

// Hits call the tick now and then, never more often than TickEvery.
func TestTick(t *testing.T) {
	ticks := 0
	s := New(Config{MaxBytes: 1 << 20, Tick: func() { ticks++ }, TickEvery: time.Hour})
	require.True(t, put(t, s, "k", "v"))
	for range 10 * tickHits {
		_, _, ok := s.GetString("k")
		require.True(t, ok)
	}
	assert.Zero(t, ticks, "not within TickEvery of the store's start")

	ticks = 0
	s = New(Config{MaxBytes: 1 << 20, Tick: func() { ticks++ }, TickEvery: time.Nanosecond})
	require.True(t, put(t, s, "k", "v"))
	for range 10 * tickHits {
		_, _, ok := s.GetString("k")
		require.True(t, ok)
	}
	assert.Equal(t, 10, ticks, "every tickHits hits")
}
