package conformance

import (
	"errors"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// Vector sets (Redis 8 module commands, raw arguments).
func init() {
	register(Case{
		Name: "B_vector_set",
		Commands: []string{"VADD", "VCARD", "VDIM", "VEMB", "VGETATTR", "VINFO", "VISMEMBER",
			"VLINKS", "VRANDMEMBER", "VREM", "VSETATTR", "VSIM"},
		Probe: func(e *Env) error {
			_, err := e.C.VAdd(e.Ctx, e.Key("v"), "VALUES", "2", "1", "0", "a")
			return err
		},
		Run: func(e *Env) {
			k := e.Key("v")
			_, err := e.C.VInfo(e.Ctx, k)
			require.True(e, errors.Is(err, respire.Nil), "VINFO missing key: %v", err)

			ok, err := e.C.VAdd(e.Ctx, k, "VALUES", "3", "1", "0", "0", "a")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, "VALUES", "3", "0", "1", "0", "b", "SETATTR", `{"x":1}`)
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, "VALUES", "3", "0.9", "0.1", "0", "c")
			require.NoError(e, err)
			require.True(e, ok)
			ok, err = e.C.VAdd(e.Ctx, k, "VALUES", "3", "1", "0", "0", "a")
			require.NoError(e, err)
			require.False(e, ok, "VADD of an existing element with the same vector")

			n, err := e.C.VCard(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)
			n, err = e.C.VDim(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, int64(3), n)

			emb, err := e.C.VEmb(e.Ctx, k, "a")
			require.NoError(e, err)
			require.Len(e, emb, 3)
			require.InDelta(e, 1, emb[0], 0.02)
			require.InDelta(e, 0, emb[1], 0.02)
			require.InDelta(e, 0, emb[2], 0.02)

			sim, err := e.C.VSim(e.Ctx, k, "VALUES", "3", "0", "0.95", "0.05")
			require.NoError(e, err)
			require.Len(e, sim, 3)
			require.Equal(e, "b", sim[0], "nearest element first")
			sim, err = e.C.VSim(e.Ctx, k, "ELE", "a", "COUNT", "2")
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
			sim, err = e.C.VSim(e.Ctx, k, "ELE", "c", "FILTER", `.color == "red"`)
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

			_, err = e.C.VAdd(e.Ctx, k, "VALUES", "2", "1", "0", "d")
			e.ServerError(err, "ERR")
		},
	})
}
