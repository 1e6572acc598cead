package benchmarks

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
)

// Concurrent pipelines: n goroutines share one client, each sending
// pipelines of 32 GETs of consecutive keys of a 1,000-key set of distinct
// values (fixture.Pipe1K, Pipe8K), every reply checked. ns/op is per GET.

func BenchmarkGet1KPipe32x1(b *testing.B)  { eachClient(b, pipeConc(fixture.Pipe1K, 1)) }
func BenchmarkGet1KPipe32x4(b *testing.B)  { eachClient(b, pipeConc(fixture.Pipe1K, 4)) }
func BenchmarkGet1KPipe32x16(b *testing.B) { eachClient(b, pipeConc(fixture.Pipe1K, 16)) }
func BenchmarkGet8KPipe32x1(b *testing.B)  { eachClient(b, pipeConc(fixture.Pipe8K, 1)) }
func BenchmarkGet8KPipe32x4(b *testing.B)  { eachClient(b, pipeConc(fixture.Pipe8K, 4)) }
func BenchmarkGet8KPipe32x16(b *testing.B) { eachClient(b, pipeConc(fixture.Pipe8K, 16)) }

// pipeRunner is one goroutine's pipeline over a keyset.
type pipeRunner struct {
	ks   *fixture.Keyset
	next int
	keys []string
	idx  []int
	vals []string
	ok   func(i int, v []byte) bool
}

func newPipeRunner(ks *fixture.Keyset, start int) *pipeRunner {
	p := &pipeRunner{ks: ks, next: start % ks.N, keys: make([]string, width), idx: make([]int, width), vals: make([]string, width)}
	p.ok = func(i int, v []byte) bool { return fixture.Check(p.ks, p.idx[i], v) }
	return p
}

// run sends one pipeline of n GETs and checks every value.
func (p *pipeRunner) run(ctx context.Context, c clients.Client, names []string, n int) error {
	keys := p.keys[:n]
	for i := range keys {
		p.idx[i] = p.next
		keys[i] = names[p.next]
		p.next = (p.next + 1) % p.ks.N
	}
	if ck, ok := c.(clients.Checker); ok {
		return ck.GetPipeCheck(ctx, keys, p.ok)
	}
	vals := p.vals[:n]
	clear(vals)
	if err := c.GetPipe(ctx, keys, vals); err != nil {
		return err
	}
	for i, v := range vals {
		if !fixture.Check(p.ks, p.idx[i], v) {
			return fmt.Errorf("GET %s: %d bytes differ from the value written", keys[i], len(v))
		}
	}
	return nil
}

// pipeConc runs b.N GETs in all on n goroutines, width per pipeline.
func pipeConc(ks *fixture.Keyset, n int) func(b *testing.B, c clients.Client, m *meter) {
	return func(b *testing.B, c clients.Client, m *meter) {
		ctx := context.Background()
		names := make([]string, ks.N)
		for i := range names {
			names[i] = ks.Key(i)
		}
		runners := make([]*pipeRunner, n)
		for i := range runners {
			runners[i] = newPipeRunner(ks, i*ks.N/n)
			if err := runners[i].run(ctx, c, names, width); err != nil { // warm up, fail fast
				b.Fatal(err)
			}
		}
		var left atomic.Int64
		left.Store(int64(b.N))
		m.start()
		var wg sync.WaitGroup
		for _, r := range runners {
			wg.Go(func() {
				for {
					k := min(left.Add(-width)+width, width)
					if k <= 0 {
						return
					}
					if err := r.run(ctx, c, names, int(k)); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
}
