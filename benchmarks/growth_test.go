package benchmarks

import (
	"context"
	"fmt"
	"testing"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
)

// How cost grows with the size of a value and of a reply: the load tool's
// growth shapes of 100 KiB and 1 MiB values, one caller and 16, and MGET
// of 100 keys. ns/op is per command.

// growthCallers is the number of goroutines of the conc16 shapes.
const growthCallers = 16

func BenchmarkGet100KSeq(b *testing.B) {
	eachClient(b, seq(getOp(fixture.KeyGet100K, fixture.Value100K)))
}
func BenchmarkGet100KConc16(b *testing.B) {
	eachClient(b, parN(getOp(fixture.KeyGet100K, fixture.Value100K), growthCallers))
}
func BenchmarkGet1MSeq(b *testing.B) { eachClient(b, seq(getOp(fixture.KeyGet1M, fixture.Value1M))) }
func BenchmarkGet1MConc16(b *testing.B) {
	eachClient(b, parN(getOp(fixture.KeyGet1M, fixture.Value1M), growthCallers))
}
func BenchmarkSet100KSeq(b *testing.B) {
	eachClient(b, seq(setOp(fixture.KeySet100K, fixture.Value100K)))
}
func BenchmarkSet100KConc16(b *testing.B) {
	eachClient(b, parN(setOp(fixture.KeySet100K, fixture.Value100K), growthCallers))
}
func BenchmarkSet1MSeq(b *testing.B) { eachClient(b, seq(setOp(fixture.KeySet1M, fixture.Value1M))) }
func BenchmarkSet1MConc16(b *testing.B) {
	eachClient(b, parN(setOp(fixture.KeySet1M, fixture.Value1M), growthCallers))
}
func BenchmarkMGet100Seq(b *testing.B)    { eachClient(b, seq(mgetOp(fixture.MGet))) }
func BenchmarkMGet100Conc16(b *testing.B) { eachClient(b, parN(mgetOp(fixture.MGet), growthCallers)) }

// mgetOp reads every key of ks with one MGET and checks every value.
func mgetOp(ks *fixture.Keyset) opMaker {
	return func() op {
		keys := make([]string, ks.N)
		for i := range keys {
			keys[i] = ks.Key(i)
		}
		vals := make([]string, ks.N)
		return func(ctx context.Context, c clients.Client) error {
			clear(vals)
			if err := c.MGet(ctx, keys, vals); err != nil {
				return err
			}
			for i, v := range vals {
				if !fixture.Check(ks, i, v) {
					return fmt.Errorf("MGET %s: %d bytes differ from the %d written", keys[i], len(v), ks.Size)
				}
			}
			return nil
		}
	}
}
