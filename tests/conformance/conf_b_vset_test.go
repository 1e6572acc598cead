package conformance

import (
	"encoding/binary"
	"errors"
	"math"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// bFP32 is a vector as VADD and VSIM take it after FP32: little-endian
// float32s.
func bFP32(v ...float32) string {
	b := make([]byte, 0, 4*len(v))
	for _, f := range v {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return string(b)
}

// Vector sets (Redis 8 module commands).
func init() {
	register(Case{
		Name: "B_vector_set",
		Commands: []string{"VADD", "VCARD", "VDIM", "VEMB", "VGETATTR", "VINFO", "VISMEMBER",
			"VLINKS", "VRANDMEMBER", "VREM", "VSETATTR", "VSIM"},
		Probe: func(e *Env) error {
			_, err := e.C.VAdd(e.Ctx, e.Key("v"), respire.Vector{FP32: bFP32(1, 0)}, "a", nil)
			return err
		},
		Run: func(e *Env) {
			k := e.Key("v")
			_, err := e.C.VInfo(e.Ctx, k)
			require.True(e, errors.Is(err, respire.Nil), "VINFO missing key: %v", err)

			ok, err := e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(1, 0, 0)}, "a", nil)
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(0, 1, 0)}, "b", &respire.VAddOptions{SetAttr: `{"x":1}`})
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, respire.Vector{Values: &respire.Values{Value: []float64{0.9, 0.1, 0}}}, "c", nil)
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(1, 0, 0)}, "a", nil)
			require.NoError(e, err)
			require.False(e, ok, "VADD of an existing element with the same vector")

			n, err := e.C.VCard(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			// Module commands work through Do and Batch.Do as well.
			r, err := e.C.Do(e.Ctx, "VCARD", k)
			require.NoError(e, err)
			n, err = r.Int64()
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			b := e.C.NewBatch()
			fc := b.Do("VCARD", k)
			fd := b.Do("VDIM", k)
			require.NoError(e, b.Exec(e.Ctx))
			for _, f := range []*respire.Future[respire.Reply]{fc, fd} {
				r, err := f.Result()
				require.NoError(e, err)
				n, err = r.Int64()
				require.NoError(e, err)
				require.Equal(e, int64(3), n)
			}
			n, err = e.C.VDim(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)

			emb, err := e.C.VEmb(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Len(e, emb, 3)
			require.InDelta(e, 1, emb[0], 0.02)
			require.InDelta(e, 0, emb[1], 0.02)
			require.InDelta(e, 0, emb[2], 0.02)

			two := int64(2)
			sim, err := e.C.VSim(e.Ctx, k, respire.Query{FP32: bFP32(0, 0.95, 0.05)}, nil)
			require.NoError(e, err)
			require.Len(e, sim, 3)
			require.Equal(e, "b", sim[0], "nearest element first")
			byValues, err := e.C.VSim(e.Ctx, k, respire.Query{Values: &respire.Values{Value: []float64{0, 0.95, 0.05}}}, nil)
			require.NoError(e, err)
			require.Equal(e, sim, byValues)
			sim, err = e.C.VSim(e.Ctx, k, respire.Query{Ele: "a"}, &respire.VSimOptions{Count: two})
			require.NoError(e, err)
			require.Equal(e, []string{"a", "c"}, sim)

			attr, err := e.C.VGetAttr(e.Ctx, k, "b")
			require.NoError(e, err)
			require.JSONEq(e, `{"x":1}`, attr)
			_, err = e.C.VGetAttr(e.Ctx, k, "a")
			require.True(e, errors.Is(err, respire.Nil), "VGETATTR without attributes: %v", err)
			ok, err = e.C.VSetAttr(e.Ctx, k, "a", `{"color":"red"}`)
			require.NoError(e, err)
			require.True(e, ok)
			attr, err = e.C.VGetAttr(e.Ctx, k, "a")
			require.NoError(e, err)
			require.JSONEq(e, `{"color":"red"}`, attr)
			sim, err = e.C.VSim(e.Ctx, k, respire.Query{Ele: "c"}, &respire.VSimOptions{Filter: `.color == "red"`})
			require.NoError(e, err)
			require.Equal(e, []string{"a"}, sim)

			ok, err = e.C.VIsMember(e.Ctx, k, "c")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VIsMember(e.Ctx, k, "zz")
			require.NoError(e, err)
			require.False(e, ok)

			links, err := e.C.VLinks(e.Ctx, k, "a")
			require.NoError(e, err)
			// One list of neighbours per HNSW level the element is on; which
			// levels hold which neighbours is random, their union is not.
			require.NotEmpty(e, links)
			seen := map[string]bool{}
			for _, level := range links {
				for _, x := range level {
					seen[x] = true
				}
			}
			require.Equal(e, map[string]bool{"b": true, "c": true}, seen)
			_, err = e.C.VLinks(e.Ctx, k, "zz")
			require.True(e, errors.Is(err, respire.Nil), "VLINKS missing element: %v", err)

			m, err := e.C.VRandMember(e.Ctx, k)
			require.NoError(e, err)
			require.Contains(e, []string{"a", "b", "c"}, m)
			ms, err := e.C.VRandMemberCount(e.Ctx, k, 5)
			require.NoError(e, err)
			require.ElementsMatch(e, []string{"a", "b", "c"}, ms, "a positive count gives distinct members")
			ms, err = e.C.VRandMemberCount(e.Ctx, k, -4)
			require.NoError(e, err)
			require.Len(e, ms, 4, "a negative count may repeat")

			scored, err := e.C.VSimWithScores(e.Ctx, k, respire.Query{Ele: "a"}, nil)
			require.NoError(e, err)
			require.Len(e, scored, 3)
			require.Equal(e, "a", scored[0].Member, "nearest first, in the server's order")
			require.InDelta(e, 1, scored[0].Score, 0.01)
			require.Equal(e, "c", scored[1].Member)
			require.Less(e, scored[2].Score, scored[1].Score)

			raw, err := e.C.VEmbRaw(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Equal(e, "int8", raw.Quantization)
			require.Len(e, raw.Data, 3)
			require.InDelta(e, 1, raw.Norm, 0.01)
			_, err = e.C.VEmbRaw(e.Ctx, k, "zz")
			require.True(e, errors.Is(err, respire.Nil), "VEMB RAW missing element: %v", err)

			lws, err := e.C.VLinksWithScores(e.Ctx, k, "a")
			require.NoError(e, err)
			seen = map[string]bool{}
			for _, level := range lws {
				for _, sm := range level {
					seen[sm.Member] = true
					require.Greater(e, sm.Score, 0.0)
				}
			}
			require.Equal(e, map[string]bool{"b": true, "c": true}, seen)

			info, err := e.C.VInfo(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, "int8", info.QuantType)
			require.Equal(e, int64(16), info.HnswM)
			require.Equal(e, int64(3), info.VectorDim)
			require.Equal(e, int64(0), info.ProjectionInputDim)
			require.Equal(e, int64(3), info.Size)
			require.Equal(e, int64(2), info.AttributesCount)
			require.GreaterOrEqual(e, info.MaxLevel, int64(0))
			require.GreaterOrEqual(e, info.HnswMaxNodeUid, int64(3))

			ok, err = e.C.VRem(e.Ctx, k, "c")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VRem(e.Ctx, k, "c")
			require.NoError(e, err)
			require.False(e, ok)
			n, err = e.C.VCard(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)

			_, err = e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(1, 0)}, "d", nil)
			e.ServerError(err, "ERR")
		},
	})
}

// VSIM WITHATTRIBS is newer than Redis 8.0 (argument-level availability).
func init() {
	register(Case{
		Name:     "B_vsim_withattribs",
		Commands: []string{"VSIM"},
		Probe: func(e *Env) error {
			_, err := e.C.VSimWithAttribs(e.Ctx, e.Key("v"), respire.Query{Ele: "a"}, nil)
			return err
		},
		Run: func(e *Env) {
			k := e.Key("v")
			_, err := e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(1, 0)}, "a", &respire.VAddOptions{SetAttr: `{"x":1}`})
			require.NoError(e, err)
			_, err = e.C.VAdd(e.Ctx, k, respire.Vector{FP32: bFP32(0, 1)}, "b", nil)
			require.NoError(e, err)
			got, err := e.C.VSimWithAttribs(e.Ctx, k, respire.Query{Ele: "a"}, nil)
			if e.Flavor == "redis-8.0" {
				// Our supplement (spec/supplement.json) says Redis 8.0,
				// whose COMMAND DOCS give vector sets no arguments, lacks it.
				dUnsupportedArg(e, err, "VSIM", "WITHATTRIBS")
				plain, err := e.C.VSim(e.Ctx, k, respire.Query{Ele: "a"}, nil)
				require.NoError(e, err)
				require.Equal(e, []string{"a", "b"}, plain)
				return
			}
			require.NoError(e, err)
			require.Len(e, got, 2)
			require.Equal(e, "a", got[0].Member)
			require.True(e, got[0].Attributes.Valid)
			require.JSONEq(e, `{"x":1}`, got[0].Attributes.V)
			require.Equal(e, "b", got[1].Member)
			require.False(e, got[1].Attributes.Valid, "no attributes: null")
		},
	})
}
