package benchmarks

import (
	"context"
	"fmt"
	"sync"
	"testing"

	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/respire"
)

// BenchmarkScanAll10K: one op is a whole SCAN iteration (MATCH, COUNT 100)
// over scanKeys keys, through each client's iterator: Respire's ScanAll,
// go-redis's ScanIterator, rueidis's Scanner. Every op must see every key.
// keys/s is the number of keys yielded per second.

const scanKeys = 10000

var (
	scanOnce sync.Once
	scanErr  error
)

// seedScan writes the scanKeys keys once per server.
func seedScan(b *testing.B, addr string) {
	scanOnce.Do(func() {
		ctx := context.Background()
		c, err := respire.Connect(ctx, respire.Options{Addr: addr})
		if err != nil {
			scanErr = err
			return
		}
		defer c.Close()
		kvs := make([]respire.KeyValue, scanKeys)
		for i := range kvs {
			kvs[i] = respire.KeyValue{Key: fmt.Sprintf("bench:scan:%05d", i), Value: "v"}
		}
		scanErr = c.MSet(ctx, kvs...)
	})
	if scanErr != nil {
		b.Fatal(scanErr)
	}
}

const scanMatch = "bench:scan:*"

func BenchmarkScanAll10K(b *testing.B) {
	addr := benchServer(b).Addr
	seedScan(b, addr)
	ctx := context.Background()
	seen := make(map[string]struct{}, scanKeys)
	run := func(b *testing.B, scan func() (int, error)) {
		b.ReportAllocs()
		b.ResetTimer()
		for range b.N {
			clear(seen)
			n, err := scan()
			if err != nil {
				b.Fatal(err)
			}
			if len(seen) != scanKeys || n < scanKeys {
				b.Fatalf("scan saw %d distinct keys in %d, want %d", len(seen), n, scanKeys)
			}
		}
		b.StopTimer()
		b.ReportMetric(float64(b.N)*scanKeys/b.Elapsed().Seconds(), "keys/s")
	}

	b.Run("client=respire", func(b *testing.B) {
		c, err := respire.Connect(ctx, respire.Options{Addr: addr})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		count := int64(100)
		opts := &respire.ScanOptions{Match: scanMatch, Count: count}
		run(b, func() (int, error) {
			n := 0
			for k, err := range c.ScanAll(ctx, opts) {
				if err != nil {
					return n, err
				}
				seen[k] = struct{}{}
				n++
			}
			return n, nil
		})
	})
	b.Run("client=goredis", func(b *testing.B) {
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		defer c.Close()
		run(b, func() (int, error) {
			n := 0
			it := c.Scan(ctx, 0, scanMatch, 100).Iterator()
			for it.Next(ctx) {
				seen[it.Val()] = struct{}{}
				n++
			}
			return n, it.Err()
		})
	})
	b.Run("client=rueidis", func(b *testing.B) {
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableCache: true})
		if err != nil {
			b.Fatal(err)
		}
		defer c.Close()
		run(b, func() (int, error) {
			n := 0
			s := rueidis.NewScanner(func(cursor uint64) (rueidis.ScanEntry, error) {
				return c.Do(ctx, c.B().Scan().Cursor(cursor).Match(scanMatch).Count(100).Build()).AsScanEntry()
			})
			for k := range s.Iter() {
				seen[k] = struct{}{}
				n++
			}
			return n, s.Err()
		})
	})
}
