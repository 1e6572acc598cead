package respire

import (
	"math"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplyAccessors(t *testing.T) {
	str := Reply{resp.Value{Type: resp.TypeBulkString, Str: "42"}}
	s, err := str.Text()
	require.NoError(t, err)
	assert.Equal(t, "42", s)
	i, err := str.Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(42), i)
	f, err := str.Float64()
	require.NoError(t, err)
	assert.Equal(t, 42.0, f)
	b, err := str.Bytes()
	require.NoError(t, err)
	assert.Equal(t, []byte("42"), b)

	inf := Reply{resp.Value{Type: resp.TypeBulkString, Str: "-inf"}}
	f, err = inf.Float64()
	require.NoError(t, err)
	assert.True(t, math.IsInf(f, -1))

	dbl := Reply{resp.Value{Type: resp.TypeDouble, Float: 1.5, Str: "1.5"}}
	f, err = dbl.Float64()
	require.NoError(t, err)
	assert.Equal(t, 1.5, f)

	bl := Reply{resp.Value{Type: resp.TypeBoolean, Int: 1}}
	ok, err := bl.Bool()
	require.NoError(t, err)
	assert.True(t, ok)

	// RESP2 flat map and RESP3 map read the same.
	flat := Reply{resp.Value{Type: resp.TypeArray, Elems: []resp.Value{
		{Type: resp.TypeBulkString, Str: "a"}, {Type: resp.TypeInteger, Int: 1},
	}}}
	m3 := Reply{resp.Value{Type: resp.TypeMap, Elems: flat.v.Elems}}
	for _, r := range []Reply{flat, m3} {
		m, err := r.Map()
		require.NoError(t, err)
		n, err := m["a"].Int64()
		require.NoError(t, err)
		assert.Equal(t, int64(1), n)
	}
	sl, err := flat.Slice()
	require.NoError(t, err)
	assert.Len(t, sl, 2)

	odd := Reply{resp.Value{Type: resp.TypeArray, Elems: flat.v.Elems[:1]}}
	_, err = odd.Map()
	assert.Error(t, err)

	null := Reply{resp.Value{Type: resp.TypeBulkString, Null: true}}
	assert.True(t, null.IsNull())
	_, err = null.Text()
	assert.ErrorIs(t, err, Nil)

	e := Reply{resp.Value{Type: resp.TypeSimpleError, Str: "WRONGTYPE Operation against a key"}}
	_, err = e.Int64()
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "WRONGTYPE", se.Prefix)

	_, err = str.Slice()
	assert.ErrorContains(t, err, "not an array")
	_, err = Reply{resp.Value{Type: resp.TypeBulkString, Str: "x"}}.Int64()
	assert.ErrorContains(t, err, "not an integer")
}

func TestCommandEncoding(t *testing.T) {
	x := newCmd(&cmdInfo{name: "CLIENT KILL"})
	x.arg("ID")
	x.argInt(-7)
	x.argKey("k")
	x.seal()
	assert.Equal(t, "*5\r\n$6\r\nCLIENT\r\n$4\r\nKILL\r\n$2\r\nID\r\n$2\r\n-7\r\n$1\r\nk\r\n", string(x.buf[x.start:]))
	assert.Equal(t, routeOf("k"), x.Route)
	x.Recycle()
}

func TestCommandEncodingAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	info := &cmdInfo{name: "SET"}
	allocs := testing.AllocsPerRun(1000, func() {
		x := newCmd(info)
		x.argKey("key")
		x.arg("value")
		x.argInt(100)
		x.argFloat(1.5)
		x.seal()
		x.Recycle()
	})
	assert.Zero(t, allocs)
}
