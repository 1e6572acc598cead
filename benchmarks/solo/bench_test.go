// Package solo holds testing.B benchmarks of the Respire client alone (no
// peers): the plain, leased and appending forms of GET, SET, MGET and
// scripts, against a server the benchmark starts itself:
//
//	cd benchmarks && go test -run=NONE -bench=. -benchmem -count=6 ./solo/
//
// The peer comparisons are in the parent package, benchmarks.
package solo

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

var (
	srvOnce sync.Once
	srv     *harness.Server
)

// server starts one server for the whole run (the first benchmark owns
// its lifetime; later ones reuse it while it lives).
func server(b *testing.B) *harness.Server {
	srvOnce.Do(func() { srv = harness.Start(&keepAlive{b}, harness.Config{Flavor: harness.Redis80}) })
	return srv
}

// keepAlive lets the server outlive the benchmark that started it: its
// cleanups never run, and the process dies with the test binary.
type keepAlive struct{ testing.TB }

func (k *keepAlive) Cleanup(func()) {}

// modes are the read modes: direct (a lone caller reads its own reply;
// the default), bgreader (a goroutine always reads), filler (a goroutine
// always reads, fed by a second one reading the socket).
var modes = []struct {
	name     string
	readMode respire.ReadMode
}{{"direct", respire.ReadModeDefault}, {"bgreader", respire.ReadModeBackground}, {"filler", respire.ReadModeFiller}}

func client(b *testing.B, mode respire.ReadMode) *respire.Client {
	c, err := respire.Connect(context.Background(), respire.Options{Addr: server(b).Addr, ReadMode: mode})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func BenchmarkGet(b *testing.B) {
	ctx := context.Background()
	for _, size := range []int{16, 1024} {
		val := strings.Repeat("v", size)
		for _, m := range modes {
			c := client(b, m.readMode)
			if err := c.Set(ctx, "bench:get", val, nil); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%dB/seq/%s", size, m.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				for b.Loop() {
					v, err := c.Get(ctx, "bench:get")
					if err != nil || len(v) != size {
						b.Fatal(err, len(v))
					}
				}
			})
			b.Run(fmt.Sprintf("%dB/par64/%s", size, m.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(size))
				b.SetParallelism(32) // 64 goroutines on 2 cores
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						v, err := c.Get(ctx, "bench:get")
						if err != nil || len(v) != size {
							b.Error(err, len(v))
							return
						}
					}
				})
			})
		}
	}
}

func BenchmarkSet(b *testing.B) {
	ctx := context.Background()
	val := strings.Repeat("v", 1024)
	for _, m := range modes {
		c := client(b, m.readMode)
		b.Run("1KiB/seq/"+m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.Set(ctx, "bench:set", val, nil); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("1KiB/par64/"+m.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := c.Set(ctx, "bench:set", val, nil); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

func BenchmarkIncr(b *testing.B) {
	ctx := context.Background()
	for _, m := range modes {
		c := client(b, m.readMode)
		b.Run("seq/"+m.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Incr(ctx, "bench:incr"); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("par64/"+m.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(32)
			before := c.Stats()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := c.Incr(ctx, "bench:incr"); err != nil {
						b.Error(err)
						return
					}
				}
			})
			after := c.Stats()
			if reads := after.Reads - before.Reads; reads > 0 {
				b.ReportMetric(float64(after.Bytes-before.Bytes)/float64(reads), "bytes/read")
				b.ReportMetric(float64(after.Replies-before.Replies)/float64(reads), "replies/read")
			}
		})
	}
}
