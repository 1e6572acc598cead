package ecosystem

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/respire-go/respire/respire"
)

// The adapter's cost over Respire's own typed methods, and go-redis on its
// own network code, for a sequential GET and a script (what the locking
// and rate-limiting libraries send).
func BenchmarkGoRedisAdapter(b *testing.B) {
	addr := standalone(b)
	ctx := context.Background()
	rdb, rc := adapter(b, respire.Options{Addr: addr})
	native := redis.NewClient(&redis.Options{Addr: addr})
	b.Cleanup(func() { native.Close() })
	if err := rc.Set(ctx, "bench:k", "value", nil); err != nil {
		b.Fatal(err)
	}
	if _, err := rc.Do(ctx, "XADD", "bench:s", "1-1", "f", "v"); err != nil {
		b.Fatal(err)
	}
	sc := redis.NewScript(`return redis.call("GET", KEYS[1])`)

	b.Run("get/respire", func(b *testing.B) {
		for b.Loop() {
			if _, err := rc.Get(ctx, "bench:k"); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, c := range []struct {
		name string
		rdb  redis.UniversalClient
	}{{"adapter", rdb}, {"go-redis", native}} {
		b.Run("get/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.rdb.Get(ctx, "bench:k").Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
		// A reply type go-redis reads itself: replayed by the adapter.
		b.Run("xrange/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if err := c.rdb.XRange(ctx, "bench:s", "-", "+").Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("script/"+c.name, func(b *testing.B) {
			for b.Loop() {
				if err := sc.Run(ctx, c.rdb, []string{"bench:k"}).Err(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
