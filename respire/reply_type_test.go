package respire

import (
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReplyType(t *testing.T) {
	for _, tc := range []struct {
		v    resp.Value
		want ReplyType
		name string
	}{
		{resp.Value{Type: resp.TypeSimpleString, Str: "OK"}, ReplyStatus, "status"},
		{resp.Value{Type: resp.TypeSimpleError, Str: "ERR x"}, ReplyError, "error"},
		{resp.Value{Type: resp.TypeBulkError, Str: "ERR x"}, ReplyError, "error"},
		{resp.Value{Type: resp.TypeInteger, Int: 1}, ReplyInteger, "integer"},
		{resp.Value{Type: resp.TypeBulkString, Str: "v"}, ReplyString, "string"},
		{resp.Value{Type: resp.TypeArray}, ReplyArray, "array"},
		{resp.Value{Type: resp.TypeNull}, ReplyNull, "null"},
		{resp.Value{Type: resp.TypeBulkString, Null: true}, ReplyNull, "null"},
		{resp.Value{Type: resp.TypeArray, Null: true}, ReplyNull, "null"},
		{resp.Value{Type: resp.TypeBoolean}, ReplyBool, "boolean"},
		{resp.Value{Type: resp.TypeDouble, Str: "1.5", Float: 1.5}, ReplyDouble, "double"},
		{resp.Value{Type: resp.TypeBigNumber, Str: "1"}, ReplyBigNumber, "big number"},
		{resp.Value{Type: resp.TypeVerbatim, Str: "hi", Format: "txt"}, ReplyVerbatim, "verbatim string"},
		{resp.Value{Type: resp.TypeMap}, ReplyMap, "map"},
		{resp.Value{Type: resp.TypeSet}, ReplySet, "set"},
		{resp.Value{Type: resp.TypePush}, ReplyPush, "push"},
		{resp.Value{}, ReplyInvalid, "invalid"},
	} {
		r := Reply{tc.v}
		assert.Equal(t, tc.want, r.Type(), "%+v", tc.v)
		assert.Equal(t, tc.name, r.Type().String())
		assert.Equal(t, tc.want == ReplyNull, r.IsNull(), "%+v", tc.v)
		assert.Equal(t, tc.want == ReplyArray || tc.want == ReplyMap || tc.want == ReplySet || tc.want == ReplyPush,
			r.Type().IsAggregate(), tc.name)
	}
	assert.Equal(t, "ReplyType(99)", ReplyType(99).String())
}

func TestReplyIndex(t *testing.T) {
	arr := Reply{resp.Value{Type: resp.TypeArray, Elems: []resp.Value{
		{Type: resp.TypeBulkString, Str: "a"},
		{Type: resp.TypeInteger, Int: 7},
		{Type: resp.TypeNull},
	}}}
	require.Equal(t, 3, arr.Len())
	s, err := arr.Index(0).Text()
	require.NoError(t, err)
	assert.Equal(t, "a", s)
	n, err := arr.Index(1).Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(7), n)
	assert.True(t, arr.Index(2).IsNull())

	// Out of range gives an invalid reply whose accessors fail, not a panic.
	for _, i := range []int{-1, 3} {
		bad := arr.Index(i)
		assert.Equal(t, ReplyInvalid, bad.Type())
		_, err := bad.Text()
		assert.ErrorContains(t, err, "reply is invalid, not a string")
	}

	// A map alternates keys and values.
	m := Reply{resp.Value{Type: resp.TypeMap, Elems: []resp.Value{
		{Type: resp.TypeBulkString, Str: "k"}, {Type: resp.TypeInteger, Int: 1},
	}}}
	assert.Equal(t, 2, m.Len())
	k, _ := m.Index(0).Text()
	assert.Equal(t, "k", k)

	// Scalars and nulls have no elements.
	assert.Equal(t, 0, Reply{resp.Value{Type: resp.TypeBulkString, Str: "abc"}}.Len())
	assert.Equal(t, 0, Reply{resp.Value{Type: resp.TypeArray, Null: true}}.Len())
	assert.Equal(t, ReplyInvalid, Reply{resp.Value{Type: resp.TypeInteger, Int: 1}}.Index(0).Type())

	// Walking with Len and Index does not allocate.
	if raceEnabled {
		return
	}
	allocs := testing.AllocsPerRun(100, func() {
		for i := 0; i < arr.Len(); i++ {
			_ = arr.Index(i).Type()
		}
	})
	assert.Zero(t, allocs)
}

func TestReplyVerbatimAndAttributes(t *testing.T) {
	v := Reply{resp.Value{Type: resp.TypeVerbatim, Str: "# hi", Format: "mkd"}}
	assert.Equal(t, "mkd", v.VerbatimFormat())
	s, err := v.Text()
	require.NoError(t, err)
	assert.Equal(t, "# hi", s)
	assert.Empty(t, Reply{resp.Value{Type: resp.TypeBulkString, Str: "x"}}.VerbatimFormat())

	_, ok := v.Attributes()
	assert.False(t, ok)
	withAttrs := Reply{resp.Value{Type: resp.TypeBulkString, Str: "v", Attrs: []resp.Value{
		{Type: resp.TypeBulkString, Str: "ttl"}, {Type: resp.TypeInteger, Int: 3},
	}}}
	a, ok := withAttrs.Attributes()
	require.True(t, ok)
	assert.Equal(t, ReplyMap, a.Type())
	m, err := a.Map()
	require.NoError(t, err)
	ttl, err := m["ttl"].Int64()
	require.NoError(t, err)
	assert.Equal(t, int64(3), ttl)
}
