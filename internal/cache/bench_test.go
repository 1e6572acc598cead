package cache

import (
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"testing"
)

// BenchmarkHit is the hit path of a cached GET: one goroutine, one key.
func BenchmarkHit(b *testing.B) {
	for _, p := range policies {
		b.Run(p.String(), func(b *testing.B) {
			s := New(Config{MaxBytes: 64 << 20, Policy: p})
			put(b, s, "user:1000", "some value of moderate length")
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if v, _, ok := s.GetString("user:1000"); !ok || len(v) == 0 {
					b.Fatal("miss")
				}
			}
		})
	}
}

// BenchmarkHitParallel spreads hits over 10,000 keys from every P.
func BenchmarkHitParallel(b *testing.B) {
	for _, p := range policies {
		b.Run(p.String(), func(b *testing.B) {
			s := New(Config{MaxBytes: 64 << 20, Policy: p})
			keys := make([]string, 10000)
			for i := range keys {
				keys[i] = "user:" + strconv.Itoa(i)
				put(b, s, keys[i], "v")
			}
			var seed atomic.Uint64
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				i := int(seed.Add(7919))
				for pb.Next() {
					i++
					s.GetString(keys[i%len(keys)])
				}
			})
		})
	}
}

// BenchmarkPolicy replays a Zipf trace (s=1.01, 100,000 keys, 200-byte
// values) against a budget that holds about a tenth of the keys, four
// goroutines each, and reports the hit ratio beside the cost per access
// (hits and fills).
func BenchmarkPolicy(b *testing.B) {
	const nkeys = 100000
	keys := make([]string, nkeys)
	for i := range keys {
		keys[i] = "key:" + strconv.Itoa(i)
	}
	val := string(make([]byte, 200))
	// Precomputed traces, so that the generator's cost is not measured.
	traces := make([][]uint32, 4)
	for t := range traces {
		z := rand.NewZipf(rand.New(rand.NewPCG(uint64(t), 7)), 1.01, 1, nkeys-1)
		traces[t] = make([]uint32, 1<<20)
		for i := range traces[t] {
			traces[t][i] = uint32(z.Uint64())
		}
	}
	perEntry := entryCost + keyCost + StringSize(len(val)) + StringSize(12)
	for _, p := range policies {
		for _, frac := range []int64{100, 10, 2} {
			b.Run(p.String()+"/cache="+strconv.Itoa(int(1000/frac))+"permille", func(b *testing.B) {
				s := New(Config{MaxBytes: perEntry * nkeys / frac, Policy: p})
				b.SetParallelism(2)
				var seed atomic.Uint64
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					tr := traces[seed.Add(1)%uint64(len(traces))]
					for i := 0; pb.Next(); i++ {
						k := keys[tr[i&(len(tr)-1)]]
						if _, _, ok := s.GetString(k); !ok {
							f := s.Begin(k)
							f.Put("", Value{Str: val}, StringSize(len(val)), 0)
							f.Done()
						}
					}
				})
				st := s.Stats()
				b.ReportMetric(100*float64(st.Hits)/float64(st.Hits+st.Misses), "hit%")
			})
		}
	}
}

// BenchmarkHitExpiring is BenchmarkHit for an entry with a deadline, which
// makes the hit read the clock.
func BenchmarkHitExpiring(b *testing.B) {
	s := New(Config{MaxBytes: 64 << 20})
	f := s.Begin("user:1000")
	f.Put("", Value{Str: "some value of moderate length"}, 29, s.Now()+int64(1<<50))
	f.Done()
	b.ReportAllocs()
	for b.Loop() {
		if v, _, ok := s.GetString("user:1000"); !ok || len(v) == 0 {
			b.Fatal("miss")
		}
	}
}
