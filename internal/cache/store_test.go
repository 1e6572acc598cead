package cache

import (
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var policies = []Policy{S3FIFO, CLOCK, LRU}

func put(t testing.TB, s *Store, key, val string) bool {
	t.Helper()
	f := s.Begin(key)
	defer f.Done()
	return f.Put("", Value{Str: val}, StringSize(len(val)), 0)
}

func TestGetPutInvalidate(t *testing.T) {
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			s := New(Config{MaxBytes: 1 << 20, Policy: p})
			_, _, ok := s.GetString("k")
			require.False(t, ok)
			require.True(t, put(t, s, "k", "v1"))
			v, miss, ok := s.GetString("k")
			require.True(t, ok)
			require.False(t, miss)
			require.Equal(t, "v1", v)

			// Variants of one key are dropped together.
			f := s.Begin("k")
			require.True(t, f.Put("HGET\x00f", Value{Str: "x"}, 1, 0))
			f.Done()
			got, ok := s.Get("k", []byte("HGET\x00f"))
			require.True(t, ok)
			require.Equal(t, "x", got.Str)

			s.Invalidate([]byte("k"))
			_, _, ok = s.GetString("k")
			require.False(t, ok)
			_, ok = s.Get("k", []byte("HGET\x00f"))
			require.False(t, ok)
			st := s.Stats()
			assert.Equal(t, int64(0), st.Bytes)
			assert.Equal(t, int64(0), st.Entries)
			assert.Equal(t, int64(1), st.Invalidations)
			assert.Equal(t, int64(2), st.Hits)
		})
	}
}

func TestMissEntry(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	f := s.Begin("gone")
	require.True(t, f.Put("", Value{Miss: true}, 0, 0))
	f.Done()
	_, miss, ok := s.GetString("gone")
	require.True(t, ok)
	require.True(t, miss)
}

func TestExpiry(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	f := s.Begin("k")
	require.True(t, f.Put("", Value{Str: "v"}, 1, s.Now()-1))
	f.Done()
	_, _, ok := s.GetString("k")
	require.False(t, ok, "an expired entry is never served")
	f = s.Begin("k")
	require.True(t, f.Put("", Value{Str: "v"}, 1, s.Now()+int64(1<<40)))
	f.Done()
	_, _, ok = s.GetString("k")
	require.True(t, ok)
}

// An invalidation or a flush between Begin and Put keeps the value out.
func TestFillSpoiledByInvalidation(t *testing.T) {
	s := New(Config{MaxBytes: 1 << 20})
	f := s.Begin("k")
	s.InvalidateString("k")
	require.False(t, f.Put("", Value{Str: "old"}, 3, 0))
	f.Done()
	_, _, ok := s.GetString("k")
	require.False(t, ok)

	f = s.Begin("k")
	s.Flush()
	require.False(t, f.Put("", Value{Str: "old"}, 3, 0))
	f.Done()

	// Another key's invalidation does not matter.
	f = s.Begin("k")
	s.InvalidateString("other")
	require.True(t, f.Put("", Value{Str: "new"}, 3, 0))
	f.Done()

	// Two fills of one key overlap: an invalidation spoils both, and the
	// pending record is dropped once both are done.
	f1, f2 := s.Begin("j"), s.Begin("j")
	s.InvalidateString("j")
	f3 := s.Begin("j")
	require.False(t, f1.Put("", Value{Str: "a"}, 1, 0))
	require.False(t, f2.Put("", Value{Str: "b"}, 1, 0))
	require.True(t, f3.Put("", Value{Str: "c"}, 1, 0))
	f1.Done()
	f2.Done()
	f3.Done()
	sh := s.shardOf("j")
	sh.mu.RLock()
	require.Empty(t, sh.pending)
	sh.mu.RUnlock()
}

// The bound holds under 10x oversubscription for every policy, with
// concurrent writers, readers and invalidations.
func TestMemoryBound(t *testing.T) {
	const max = 256 << 10
	for _, p := range policies {
		t.Run(p.String(), func(t *testing.T) {
			s := New(Config{MaxBytes: max, Policy: p})
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					val := string(make([]byte, 100+g*50))
					for i := range 2000 {
						k := "k" + strconv.Itoa((i*7+g)%3000)
						f := s.Begin(k)
						f.Put("", Value{Str: val}, StringSize(len(val)), 0)
						if i%5 == 0 {
							f.Put("sub", Value{Str: val}, StringSize(len(val)), 0)
						}
						f.Done()
						s.GetString("k" + strconv.Itoa(i%100))
						if i%50 == 0 {
							s.InvalidateString(k)
						}
						if st := s.Stats(); st.Bytes > max {
							t.Errorf("bytes %d over %d", st.Bytes, max)
							return
						}
					}
				}()
			}
			wg.Wait()
			st := s.Stats()
			assert.LessOrEqual(t, st.Bytes, int64(max))
			assert.Positive(t, st.Evictions)
			s.Flush()
			assert.Equal(t, int64(0), s.Stats().Bytes)
		})
	}
}

// The accounted bytes track the real heap the entries take.
func TestAccountingMatchesHeap(t *testing.T) {
	for _, size := range []int{10, 100, 1000} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			const n = 20000
			keys := make([]string, n)
			for i := range keys {
				keys[i] = fmt.Sprintf("user:%08d", i)
			}
			val := string(make([]byte, size))
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s := New(Config{MaxBytes: 1 << 40, Shards: 16})
			for _, k := range keys {
				f := s.Begin(k)
				// A fresh copy, as a decoder makes.
				f.Put("", Value{Str: string([]byte(val))}, StringSize(size), 0)
				f.Done()
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			real := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			acct := s.Stats().Bytes
			ratio := float64(acct) / float64(real)
			t.Logf("value %d B: accounted %d, heap %d, ratio %.2f", size, acct, real, ratio)
			assert.InDelta(t, 1.0, ratio, 0.25)
			runtime.KeepAlive(s)
		})
	}
}
