package conformance

import (
	"github.com/stretchr/testify/require"
)

// HyperLogLog commands.
func init() {
	register(
		Case{
			Name:     "hll",
			Commands: []string{"PFADD", "PFCOUNT", "PFMERGE", "PFDEBUG"},
			Run: func(e *Env) {
				h1, h2, h3 := e.Key("h1"), e.Key("h2"), e.Key("h3")
				ok, err := e.C.PFAdd(e.Ctx, h1, "a", "b", "c", "d")
				require.NoError(e, err)
				require.True(e, ok)
				ok, err = e.C.PFAdd(e.Ctx, h1, "a")
				require.NoError(e, err)
				require.False(e, ok)
				ok, err = e.C.PFAdd(e.Ctx, e.Key("empty"))
				require.NoError(e, err)
				require.True(e, ok, "creates the key")
				ok, err = e.C.PFAdd(e.Ctx, e.Key("empty"))
				require.NoError(e, err)
				require.False(e, ok)

				n, err := e.C.PFCount(e.Ctx, h1)
				require.NoError(e, err)
				require.Equal(e, int64(4), n)
				_, err = e.C.PFAdd(e.Ctx, h2, "c", "d", "e", "f", "g")
				require.NoError(e, err)
				n, err = e.C.PFCount(e.Ctx, h1, h2)
				require.NoError(e, err)
				require.Equal(e, int64(7), n)
				n, err = e.C.PFCount(e.Ctx, e.Key("missing"))
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				require.NoError(e, e.C.PFMerge(e.Ctx, h3, h1, h2))
				n, err = e.C.PFCount(e.Ctx, h3)
				require.NoError(e, err)
				require.Equal(e, int64(7), n)
				require.NoError(e, e.C.PFMerge(e.Ctx, e.Key("alone")))
				n, err = e.C.PFCount(e.Ctx, e.Key("alone"))
				require.NoError(e, err)
				require.Equal(e, int64(0), n)

				e.Do("SET", e.Key("str"), "not an hll")
				_, err = e.C.PFCount(e.Ctx, e.Key("str"))
				e.ServerError(err, "WRONGTYPE")
				e.Do("RPUSH", e.Key("list"), "a")
				_, err = e.C.PFAdd(e.Ctx, e.Key("list"), "a")
				e.ServerError(err, "WRONGTYPE")

				// PFDEBUG answers with a Reply.
				r, err := e.C.PFDebug(e.Ctx, "ENCODING", h1)
				require.NoError(e, err)
				enc, err := r.Text()
				require.NoError(e, err)
				require.Equal(e, "sparse", enc)
				r, err = e.C.PFDebug(e.Ctx, "GETREG", h1) // converts to dense
				require.NoError(e, err)
				regs, err := r.Slice()
				require.NoError(e, err)
				require.Len(e, regs, 16384)
				nonzero := 0
				for _, reg := range regs {
					v, err := reg.Int64()
					require.NoError(e, err)
					require.True(e, v >= 0 && v <= 63, "register %d", v)
					if v != 0 {
						nonzero++
					}
				}
				require.True(e, nonzero >= 1 && nonzero <= 4, "nonzero registers %d", nonzero)
				r, err = e.C.PFDebug(e.Ctx, "ENCODING", h1)
				require.NoError(e, err)
				enc, err = r.Text()
				require.NoError(e, err)
				require.Equal(e, "dense", enc)
				_, err = e.C.PFDebug(e.Ctx, "NOSUCHSUB", h1)
				e.ServerError(err, "ERR")
			},
		},
		Case{
			// PFSELFTEST runs the server's own HyperLogLog test (about
			// 0.3s).
			Name:     "hll-selftest",
			Commands: []string{"PFSELFTEST"},
			Run: func(e *Env) {
				require.NoError(e, e.C.PFSelfTest(e.Ctx))
			},
		},
	)
}
