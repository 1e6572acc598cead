package resp

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func parseOne(t *testing.T, in string) Msg {
	t.Helper()
	m, err := NewReader(strings.NewReader(in), Limits{}).Next()
	require.NoError(t, err)
	return m
}

func TestMsgWalk(t *testing.T) {
	// [ attr{ttl:3600} "a", {k: [1 2]}, attr{x:y} attr{} "z" ]
	m := parseOne(t, "*3\r\n|1\r\n+ttl\r\n:3600\r\n+a\r\n%1\r\n+k\r\n*2\r\n:1\r\n:2\r\n|1\r\n+x\r\n+y\r\n|0\r\n+z\r\n")
	require.Len(t, m, 15)

	assert.Equal(t, 15, m.Next(0))
	assert.Equal(t, 0, m.Value(0))
	assert.Equal(t, TypeArray, m.Top().Type)

	c0 := m.Child(0, 0)
	c1 := m.Child(0, 1)
	c2 := m.Child(0, 2)
	assert.Equal(t, []int{1, 5, 10}, []int{c0, c1, c2})
	assert.Equal(t, -1, m.Child(0, 3))
	assert.Equal(t, -1, m.Child(0, -1))
	assert.Equal(t, -1, m.Child(4, 0), "scalar has no children")

	assert.Equal(t, 4, m.Value(c0))
	assert.Equal(t, "a", string(m[m.Value(c0)].Data))
	assert.Equal(t, 5, m.Next(c0))
	s, e, ok := m.Attrs(c0)
	assert.True(t, ok)
	assert.Equal(t, []int{1, 4}, []int{s, e})

	_, _, ok = m.Attrs(c1)
	assert.False(t, ok)
	assert.Equal(t, 10, m.Next(c1))
	assert.Equal(t, 7, m.Child(c1, 1), "map value")
	assert.Equal(t, 9, m.Child(m.Child(c1, 1), 1))

	assert.Equal(t, 14, m.Value(c2))
	s, e, ok = m.Attrs(c2)
	assert.True(t, ok, "two attributes")
	assert.Equal(t, []int{10, 14}, []int{s, e})
	assert.Equal(t, 15, m.Next(c2))

	// The documented loop.
	var got []string
	v := m.Value(0)
	j := v + 1
	for k := 0; k < int(m[v].Int); k++ {
		c := m.Value(j)
		got = append(got, m[c].Type.String())
		j = m.Next(j)
	}
	assert.Equal(t, []string{"simple string", "map", "simple string"}, got)
	assert.Equal(t, len(m), j)
}

func TestMsgTopSkipsAttributes(t *testing.T) {
	m := parseOne(t, "|1\r\n+a\r\n+b\r\n>2\r\n+message\r\n+x\r\n")
	assert.Equal(t, TypePush, m.Top().Type)
	assert.Nil(t, Msg(nil).Top())
}

func TestMsgHelpersOnMalformed(t *testing.T) {
	// Hand-made Msgs that claim more children than they have must not panic.
	m := Msg{{Type: TypeArray, Int: 5}, {Type: TypeAttribute, Int: 4}, {Type: TypeInteger}}
	for i := -1; i <= len(m); i++ {
		assert.NotPanics(t, func() {
			m.Next(i)
			m.Value(i)
			m.Attrs(i)
			m.Child(i, 0)
			m.Child(i, 3)
		})
	}
	assert.NotPanics(t, func() { _ = m.Tree() })
	assert.Equal(t, Value{}, Msg{}.Tree())
}

func TestIsError(t *testing.T) {
	assert.True(t, (&Node{Type: TypeSimpleError}).IsError())
	assert.True(t, (&Node{Type: TypeBulkError}).IsError())
	assert.False(t, (&Node{Type: TypeSimpleString}).IsError())
}

func TestTreeAndAppendValueDeep(t *testing.T) {
	// Far deeper than any reader limit: Tree, Next and AppendValue use
	// explicit stacks, so this must not overflow the goroutine stack.
	const depth = 200_000
	m := make(Msg, depth+1)
	for i := range depth {
		m[i] = Node{Type: TypeArray, Int: 1}
	}
	m[depth] = Node{Type: TypeInteger, Int: 7}
	assert.Equal(t, depth+1, m.Next(0))
	v := m.Tree()
	enc := AppendValue(nil, v)
	assert.Equal(t, strings.Repeat("*1\r\n", depth)+":7\r\n", string(enc))
	got, err := NewReader(strings.NewReader(string(enc)), Limits{MaxDepth: depth}).Next()
	require.NoError(t, err)
	assert.Len(t, got, depth+1)
}

func TestAppendValueRules(t *testing.T) {
	cases := []struct {
		v    Value
		want string
	}{
		{Value{}, "_\r\n"},
		{Value{Type: TypeSimpleString, Null: true}, "_\r\n"},
		{Value{Type: TypeMap, Null: true}, "_\r\n"},
		{nullBulk(), "$-1\r\n"},
		{nullArray(), "*-1\r\n"},
		{Value{Type: TypeDouble, Float: 1.5}, ",1.5\r\n"},
		{Value{Type: TypeDouble, Float: 1e300}, ",1e+300\r\n"},
		{Value{Type: TypeDouble, Float: -inf()}, ",-inf\r\n"},
		{Value{Type: TypeDouble, Float: nan()}, ",nan\r\n"},
		{Value{Type: TypeVerbatim, Str: "x"}, "=5\r\ntxt:x\r\n"},
		{Value{Type: TypeVerbatim, Format: "m", Str: "x"}, "=5\r\nm  :x\r\n"},
		{Value{Type: TypeMap, Elems: []Value{simple("a"), simple("b"), simple("c")}}, "%1\r\n+a\r\n+b\r\n"},
		{Value{Type: TypeBoolean, Int: 5}, "#t\r\n"},
		{Value{Type: '?'}, "_\r\n"},
		{attrs(push(), simple("a")), "|0\r\n>0\r\n"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, string(AppendValue(nil, c.v)), "%#v", c.v)
	}
}
