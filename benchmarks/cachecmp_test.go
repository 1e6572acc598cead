package benchmarks

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/respire-go/respire/respire"
)

// Client-side cache hits: a cached GET of a 64-byte string that the cache
// holds, Respire's Cached.Get beside rueidis's DoCache. Neither sends
// anything to the server once warmed; this measures the hit path.
func BenchmarkCacheHit(b *testing.B) {
	addr := benchServer(b).Addr
	ctx := context.Background()
	const key = "cachecmp:hit"
	val := strings.Repeat("c", 64)

	rc, err := respire.Connect(ctx, respire.Options{Addr: addr, ClientCache: &respire.CacheOptions{}})
	if err != nil {
		b.Fatal(err)
	}
	defer rc.Close()
	if err := rc.Set(ctx, key, val, nil); err != nil {
		b.Fatal(err)
	}
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	if err != nil {
		b.Fatal(err)
	}
	defer ru.Close()

	b.Run("client=respire", func(b *testing.B) {
		cached := rc.Cached(time.Minute)
		if v, err := cached.Get(ctx, key); err != nil || v != val {
			b.Fatal(v, err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			v, err := cached.Get(ctx, key)
			if err != nil || len(v) != len(val) {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("client=rueidis", func(b *testing.B) {
		get := func() (string, error) {
			return ru.DoCache(ctx, ru.B().Get().Key(key).Cache(), time.Minute).ToString()
		}
		if v, err := get(); err != nil || v != val {
			b.Fatal(v, err)
		}
		b.ReportAllocs()
		b.ResetTimer()
		for b.Loop() {
			v, err := get()
			if err != nil || len(v) != len(val) {
				b.Fatal(v, err)
			}
		}
	})
	b.Run("client=respire/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			cached := rc.Cached(time.Minute)
			for pb.Next() {
				if v, err := cached.Get(ctx, key); err != nil || len(v) != len(val) {
					b.Error(v, err)
					return
				}
			}
		})
	})
	b.Run("client=rueidis/parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				v, err := ru.DoCache(ctx, ru.B().Get().Key(key).Cache(), time.Minute).ToString()
				if err != nil || len(v) != len(val) {
					b.Error(v, err)
					return
				}
			}
		})
	})
}
