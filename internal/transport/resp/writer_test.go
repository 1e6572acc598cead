package resp

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAppendCommand(t *testing.T) {
	got := AppendCommand([]byte("prefix:"), "SET", "k", "", "a\r\nb")
	assert.Equal(t, "prefix:*4\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n$4\r\na\r\nb\r\n", string(got))
	assert.Equal(t, "*0\r\n", string(AppendCommand(nil)))
}

func TestAppendBulkForms(t *testing.T) {
	cases := []struct {
		got  []byte
		want string
	}{
		{AppendArrayLen(nil, 12), "*12\r\n"},
		{AppendBulk(nil, []byte("hi")), "$2\r\nhi\r\n"},
		{AppendBulk(nil, nil), "$0\r\n\r\n"},
		{AppendBulkString(nil, "hello"), "$5\r\nhello\r\n"},
		{AppendBulkInt(nil, 0), "$1\r\n0\r\n"},
		{AppendBulkInt(nil, -1234567890), "$11\r\n-1234567890\r\n"},
		{AppendBulkInt(nil, math.MinInt64), "$20\r\n-9223372036854775808\r\n"},
		{AppendBulkUint(nil, math.MaxUint64), "$20\r\n18446744073709551615\r\n"},
		{AppendBulkFloat(nil, 1.5), "$3\r\n1.5\r\n"},
		{AppendBulkFloat(nil, -0.1), "$4\r\n-0.1\r\n"},
		{AppendBulkFloat(nil, 1e21), "$22\r\n1000000000000000000000\r\n"},
		{AppendBulkFloat(nil, math.Inf(1)), "$3\r\ninf\r\n"},
		{AppendBulkFloat(nil, math.Inf(-1)), "$4\r\n-inf\r\n"},
		{AppendBulkInt([]byte("ab"), 7), "ab$1\r\n7\r\n"},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, string(c.got))
	}
	// Formatting in place must work whatever the spare capacity.
	for capacity := range 40 {
		dst := make([]byte, 3, 3+capacity)
		copy(dst, "xyz")
		assert.Equal(t, "xyz$12\r\n123456789012\r\n", string(AppendBulkInt(dst, 123456789012)))
	}
}

func TestCommandsParseBack(t *testing.T) {
	var dst []byte
	dst = AppendArrayLen(dst, 5)
	dst = AppendBulkString(dst, "ZADD")
	dst = AppendBulk(dst, []byte("key"))
	dst = AppendBulkFloat(dst, math.SmallestNonzeroFloat64)
	dst = AppendBulkInt(dst, -3)
	dst = AppendBulkUint(dst, 3)
	vals, err := readAll(strings.NewReader(string(dst)), Limits{})
	require.NoError(t, err)
	require.Len(t, vals, 1)
	e := vals[0].Elems
	require.Len(t, e, 5)
	assert.Equal(t, "ZADD", e[0].Str)
	assert.Equal(t, "-3", e[3].Str)
	assert.True(t, strings.HasPrefix(e[2].Str, "0.000"))
}

func TestAppendZeroAlloc(t *testing.T) {
	buf := make([]byte, 0, 4096)
	allocs := testing.AllocsPerRun(100, func() {
		b := AppendArrayLen(buf[:0], 6)
		b = AppendBulkString(b, "SET")
		b = AppendBulk(b, []byte("key"))
		b = AppendBulkInt(b, 42)
		b = AppendBulkUint(b, 42)
		b = AppendBulkFloat(b, 3.25)
		b = AppendBulkFloat(b, math.Inf(1))
		_ = b
	})
	assert.Zero(t, allocs)
}
