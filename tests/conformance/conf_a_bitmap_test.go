package conformance

import (
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// end is a BitRange's End.
func end(n int64) *int64 { return &n }

// Bitmap commands.
func init() {
	register(
		Case{
			Name:     "bitmap-bits",
			Commands: []string{"SETBIT", "GETBIT", "BITCOUNT", "BITPOS", "BITOP"},
			Run: func(e *Env) {
				k := e.Key("bits")
				n, err := e.C.SetBit(e.Ctx, k, 7, 1)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.SetBit(e.Ctx, k, 7, 0)
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.SetBit(e.Ctx, k, 7, 1)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				v, err := e.C.Get(e.Ctx, k)
				require.NoError(e, err)
				require.Equal(e, "\x01", v)
				n, err = e.C.GetBit(e.Ctx, k, 7)
				require.NoError(e, err)
				require.Equal(e, int64(1), n)
				n, err = e.C.GetBit(e.Ctx, k, 6)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.GetBit(e.Ctx, k, 1000)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				n, err = e.C.GetBit(e.Ctx, e.Key("missing"), 0)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
				_, err = e.C.SetBit(e.Ctx, k, 0, 2)
				e.ServerError(err, "ERR")

				// BITCOUNT, the examples of the command's documentation.
				f := e.Key("foobar")
				e.Do("SET", f, "foobar")
				for _, c := range []struct {
					r    *respire.BitRange
					want int64
				}{
					{nil, 26},
					{&respire.BitRange{Start: 0, End: end(0)}, 4},
					{&respire.BitRange{Start: 1, End: end(1)}, 6},
					{&respire.BitRange{Start: 1, End: end(1), Unit: respire.BitUnitByte}, 6},
					{&respire.BitRange{Start: 5, End: end(30), Unit: respire.BitUnitBit}, 17},
				} {
					var opts *respire.BitCountOptions
					if c.r != nil {
						opts = &respire.BitCountOptions{Range: c.r}
					}
					n, err = e.C.BitCount(e.Ctx, f, opts)
					require.NoError(e, err)
					require.Equal(e, c.want, n, "%+v", c.r)
				}
				n, err = e.C.BitCount(e.Ctx, e.Key("missing"), nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				// BITPOS.
				p := e.Key("pos")
				e.Do("SET", p, "\xff\xf0\x00")
				n, err = e.C.BitPos(e.Ctx, p, 0, nil)
				require.NoError(e, err)
				require.Equal(e, int64(12), n)
				e.Do("SET", p, "\x00\xff\xf0")
				for _, c := range []struct {
					r    *respire.BitRange
					want int64
				}{
					{nil, 8},
					{&respire.BitRange{Start: 0}, 8},
					{&respire.BitRange{Start: 2}, 16},
					{&respire.BitRange{Start: 2, End: end(-1), Unit: respire.BitUnitByte}, 16},
					{&respire.BitRange{Start: 7, End: end(15), Unit: respire.BitUnitBit}, 8},
					{&respire.BitRange{Start: 7, End: end(-1), Unit: respire.BitUnitBit}, 8},
				} {
					var opts *respire.BitPosOptions
					if c.r != nil {
						opts = &respire.BitPosOptions{Range: c.r}
					}
					n, err = e.C.BitPos(e.Ctx, p, 1, opts)
					require.NoError(e, err)
					require.Equal(e, c.want, n, "%+v", c.r)
				}
				n, err = e.C.BitPos(e.Ctx, e.Key("missing"), 1, nil)
				require.NoError(e, err)
				require.Equal(e, int64(-1), n)
				n, err = e.C.BitPos(e.Ctx, e.Key("missing"), 0, nil)
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				// BITOP.
				a, b, d := e.Key("a"), e.Key("b"), e.Key("dest")
				e.Do("MSET", a, "foobar", b, "abcdef")
				for _, c := range []struct {
					op   respire.BitOpOperation
					want string
				}{
					{respire.BitOpOperationAnd, "`bc`ab"},
					{respire.BitOpOperationOr, "goofev"},
					{respire.BitOpOperationXOr, "\x07\x0d\x0c\x06\x04\x14"},
				} {
					n, err = e.C.BitOp(e.Ctx, c.op, d, a, b)
					require.NoError(e, err)
					require.Equal(e, int64(6), n)
					v, err = e.C.Get(e.Ctx, d)
					require.NoError(e, err)
					require.Equal(e, c.want, v, c.op)
				}
				e.Do("SET", a, "\x0f\xf0")
				n, err = e.C.BitOp(e.Ctx, respire.BitOpOperationNot, d, a)
				require.NoError(e, err)
				require.Equal(e, int64(2), n)
				v, err = e.C.Get(e.Ctx, d)
				require.NoError(e, err)
				require.Equal(e, "\xf0\x0f", v)
				_, err = e.C.BitOp(e.Ctx, respire.BitOpOperationNot, d, a, b)
				e.ServerError(err, "ERR") // NOT takes one key

				// DIFF came with Redis 8.2: refused before sending where the
				// server lacks it (Redis 7.0 and 8.0, Valkey).
				e.Do("MSET", a, "\xff", b, "\x0f")
				n, err = e.C.BitOp(e.Ctx, respire.BitOpOperationDiff, d, a, b)
				switch e.Flavor {
				case harness.Redis86:
					require.NoError(e, err)
					require.Equal(e, int64(1), n)
					v, err = e.C.Get(e.Ctx, d)
					require.NoError(e, err)
					require.Equal(e, "\xf0", v)
				default:
					dUnsupportedArg(e, err, "BITOP", "DIFF")
				}
			},
		},
		Case{
			Name:     "bitmap-bitfield",
			Commands: []string{"BITFIELD", "BITFIELD_RO"},
			Run: func(e *Env) {
				k := e.Key("bf")
				set := func(enc string, off, val int64) respire.BitFieldOp {
					return respire.BitFieldOp{Set: &respire.BitFieldSet{Encoding: enc, Offset: off, Value: val}}
				}
				incr := func(ov respire.BitFieldOverflow, enc string, off, by int64) respire.BitFieldOp {
					return respire.BitFieldOp{Overflow: ov, IncrBy: &respire.BitFieldIncrBy{Encoding: enc, Offset: off, Increment: by}}
				}
				get := func(enc string, off int64) respire.BitFieldOp {
					return respire.BitFieldOp{Get: &respire.BitFieldGet{Encoding: enc, Offset: off}}
				}
				valid := func(ns ...int64) []respire.Null[int64] {
					out := make([]respire.Null[int64], len(ns))
					for i, n := range ns {
						out[i] = respire.Null[int64]{V: n, Valid: true}
					}
					return out
				}

				r, err := e.C.BitField(e.Ctx, k, incr("", "i5", 100, 1), get("u4", 0))
				require.NoError(e, err)
				require.Equal(e, valid(1, 0), r)

				r, err = e.C.BitField(e.Ctx, k, set("u8", 0, 255), set("i8", 8, -2), get("u8", 0))
				require.NoError(e, err)
				require.Equal(e, valid(0, 0, 255), r)

				// OVERFLOW: WRAP (default), SAT and FAIL, which gives a null.
				r, err = e.C.BitField(e.Ctx, k, incr(respire.BitFieldOverflowWrap, "u8", 0, 1))
				require.NoError(e, err)
				require.Equal(e, valid(0), r)
				r, err = e.C.BitField(e.Ctx, k, incr(respire.BitFieldOverflowSat, "i8", 8, -200))
				require.NoError(e, err)
				require.Equal(e, valid(-128), r)
				f := e.Key("fail")
				var got []respire.Null[int64]
				for i := 0; i < 4; i++ {
					r, err = e.C.BitField(e.Ctx, f, incr(respire.BitFieldOverflowFail, "u2", 102, 1))
					require.NoError(e, err)
					require.Len(e, r, 1)
					got = append(got, r[0])
				}
				require.Equal(e, append(valid(1, 2, 3), respire.Null[int64]{}), got)

				ro, err := e.C.BitFieldRO(e.Ctx, k, &respire.BitFieldROOptions{Get: []respire.BitFieldGet{
					{Encoding: "u8", Offset: 0}, {Encoding: "i8", Offset: 8}, {Encoding: "u4", Offset: 8}, {Encoding: "u8", Offset: 1000}}})
				require.NoError(e, err)
				require.Equal(e, []int64{0, -128, 8, 0}, ro)
				ro, err = e.C.BitFieldRO(e.Ctx, e.Key("missing"), &respire.BitFieldROOptions{Get: []respire.BitFieldGet{{Encoding: "i16", Offset: 0}}})
				require.NoError(e, err)
				require.Equal(e, []int64{0}, ro)

				_, err = e.C.BitField(e.Ctx, k, get("x8", 0))
				e.ServerError(err, "ERR") // bad encoding
			},
		},
	)
}
