package resp

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// stutter returns its chunks one per Read, with a deadline error between
// them.
type stutter struct {
	chunks []string
	gap    bool
}

func (s *stutter) Read(p []byte) (int, error) {
	if s.gap {
		s.gap = false
		return 0, os.ErrDeadlineExceeded
	}
	if len(s.chunks) == 0 {
		return 0, io.EOF
	}
	n := copy(p, s.chunks[0])
	s.chunks = s.chunks[1:]
	s.gap = true
	return n, nil
}

func TestDeadlineResumesValue(t *testing.T) {
	rd := NewReader(&stutter{chunks: []string{"*2\r\n$5\r\nhel", "lo\r\n:4", "2\r\n+OK\r\n"}}, Limits{})
	var got []Value
	deadlines := 0
	for {
		m, err := rd.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			deadlines++
			continue
		}
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		got = append(got, m.Tree())
	}
	require.Equal(t, 3, deadlines)
	require.Len(t, got, 2)
	require.Equal(t, "hello", got[0].Elems[0].Str)
	require.Equal(t, int64(42), got[0].Elems[1].Int)
	require.Equal(t, "OK", got[1].Str)
}
