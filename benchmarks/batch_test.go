package benchmarks

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	redigo "github.com/gomodule/redigo/redis"
	"github.com/respire-go/respire/benchmarks/internal/clients"
)

// BenchmarkBatchGet1000: one explicit pipeline of batchSize GETs per op,
// each of a distinct key holding a distinct 16-byte value: Respire's Batch,
// go-redis's Pipeline, rueidis's DoMulti, redigo's Send/Flush/Receive (the
// GetPipe of internal/clients). Every reply is compared with the value
// written. GETs/s is the number of GET replies per second.

const batchSize = 1000

// batchClients maps the sub-benchmark names to internal/clients names:
// "respire" is Respire with its defaults (filler off).
var batchClients = []struct{ name, client string }{
	{"respire", "respire-nofiller"},
	{"goredis", "goredis"},
	{"rueidis", "rueidis"},
	{"redigo", "redigo"},
}

var (
	batchOnce sync.Once
	batchErr  error
	batchKeys []string
	batchVals []string
)

// batchKeyVal returns the i-th key and its 16-byte value.
func batchKeyVal(i int) (key, val string) {
	return fmt.Sprintf("bench:batch16:%04d", i), fmt.Sprintf("b16-%04d-%07d", i, (i*7919+13)%10000000)
}

// seedBatch writes the batchSize keys once per server.
func seedBatch(b *testing.B, addr string) {
	batchOnce.Do(func() {
		c, err := redigo.Dial("tcp", addr, redigo.DialConnectTimeout(5*time.Second))
		if err != nil {
			batchErr = err
			return
		}
		defer c.Close()
		args := redigo.Args{}
		for i := range batchSize {
			k, v := batchKeyVal(i)
			if len(v) != 16 {
				batchErr = fmt.Errorf("value %q is not 16 bytes", v)
				return
			}
			batchKeys = append(batchKeys, k)
			batchVals = append(batchVals, v)
			args = args.Add(k, v)
		}
		if _, err := c.Do("MSET", args...); err != nil {
			batchErr = fmt.Errorf("seeding batch keys: %w", err)
		}
	})
	if batchErr != nil {
		b.Fatal(batchErr)
	}
}

func BenchmarkBatchGet1000(b *testing.B) {
	addr := benchServer(b).Addr
	seedBatch(b, addr)
	for _, bc := range batchClients {
		b.Run("client="+bc.name, func(b *testing.B) {
			ctx := context.Background()
			c, err := clients.New(ctx, bc.client, addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			vals := make([]string, batchSize)
			check := func() {
				for i, v := range vals {
					if v != batchVals[i] {
						b.Fatalf("GET %s: %q, want %q", batchKeys[i], v, batchVals[i])
					}
				}
			}
			// Warm up, and fail fast.
			if err := c.GetPipe(ctx, batchKeys, vals); err != nil {
				b.Fatal(err)
			}
			check()
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				clear(vals)
				if err := c.GetPipe(ctx, batchKeys, vals); err != nil {
					b.Fatal(err)
				}
				check()
			}
			b.StopTimer()
			b.ReportMetric(float64(b.N)*batchSize/b.Elapsed().Seconds(), "GETs/s")
		})
	}
}
