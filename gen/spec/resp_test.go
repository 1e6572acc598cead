package spec

import (
	"bufio"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func read(s string) (any, error) {
	return readReply(bufio.NewReader(strings.NewReader(s)), 0)
}

func TestReadReply(t *testing.T) {
	cases := []struct {
		in   string
		want any
	}{
		{"+OK\r\n", "OK"},
		{":-42\r\n", int64(-42)},
		{"$5\r\nhe\r\nl\r\n", "he\r\nl"},
		{"$0\r\n\r\n", ""},
		{"$-1\r\n", nil},
		{"*-1\r\n", nil},
		{"*0\r\n", []any{}},
		{"*2\r\n$1\r\na\r\n*1\r\n:1\r\n", []any{"a", []any{int64(1)}}},
	}
	for _, c := range cases {
		got, err := read(c.in)
		require.NoError(t, err, "%q", c.in)
		assert.Equal(t, c.want, got, "%q", c.in)
	}

	v, err := read("-ERR unknown\r\n")
	require.NoError(t, err)
	assert.Equal(t, &serverError{"ERR unknown"}, v)
}

func TestReadReplyErrors(t *testing.T) {
	for _, in := range []string{
		"", "\r\n", "?x\r\n", "+OK\n", ":x\r\n", "$3\r\nab\r\n", "$2\r\nabcd", "$-2\r\n",
		"$99999999999\r\n", "*x\r\n", "*2\r\n:1\r\n", strings.Repeat("*1\r\n", maxReplyDepth+1) + ":1\r\n",
	} {
		_, err := read(in)
		assert.Error(t, err, "%q", in)
	}
}

// FuzzReadReply feeds arbitrary bytes to the reader and what it decodes
// to the COMMAND DOCS and COMMAND INFO decoders: none may panic.
func FuzzReadReply(f *testing.F) {
	for _, seed := range []string{
		"+OK\r\n", "-ERR x\r\n", ":1\r\n", "$3\r\nabc\r\n", "$-1\r\n",
		"*3\r\n$3\r\nget\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := readReply(bufio.NewReader(strings.NewReader(string(data))), 0)
		if err != nil {
			return
		}
		_, _ = parseDocsMap(v, "docs")
		_, _ = parseInfoList(v, "info")
	})
}
