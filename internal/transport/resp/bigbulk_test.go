package resp

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pieces reads a stream at most size bytes at a time, with a deadline
// error between reads when gaps is set.
type pieces struct {
	b    []byte
	size int
	gaps bool
	gap  bool
}

func (p *pieces) Read(b []byte) (int, error) {
	if p.gaps && p.gap {
		p.gap = false
		return 0, os.ErrDeadlineExceeded
	}
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(b[:min(len(b), p.size)], p.b)
	p.b = p.b[n:]
	p.gap = true
	return n, nil
}

func bulkOf(v []byte) string { return "$" + strconv.Itoa(len(v)) + "\r\n" + string(v) + "\r\n" }

func payload(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7) ^ seed
	}
	return b
}

// next reads one value, going on after deadline errors.
func next(t *testing.T, rd *Reader) Msg {
	t.Helper()
	for {
		m, err := rd.Next()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			continue
		}
		require.NoError(t, err)
		return m
	}
}

// TestLargeBulkOwnBuffer: a large bulk string that arrives in pieces is
// read into a buffer of its own, which Take hands over for good; a buffer
// nobody took serves the next one; values around it parse as usual.
func TestLargeBulkOwnBuffer(t *testing.T) {
	a, b, c := payload(SideBulk, 1), payload(200<<10, 2), payload(SideBulk+5, 3)
	stream := bulkOf(a) + "*3\r\n" + bulkOf(b) + "$2\r\nhi\r\n" + bulkOf(c) + ":7\r\n" + bulkOf(c)
	for _, gaps := range []bool{false, true} {
		rd := NewReader(&pieces{b: []byte(stream), size: 1000, gaps: gaps}, Limits{})

		m := next(t, rd)
		got, own := m.Take(0)
		require.True(t, own, "a large bulk string read in pieces is its own")
		require.True(t, bytes.Equal(a, got))
		_, again := m.Take(0)
		assert.False(t, again, "taken once")

		m = next(t, rd)
		require.Equal(t, 3, int(m[0].Int))
		require.True(t, bytes.Equal(b, m[1].Data))
		assert.Equal(t, "hi", string(m[2].Data))
		require.True(t, bytes.Equal(c, m[3].Data))
		_, own = m.Take(2)
		assert.False(t, own, "a small bulk string aliases the read buffer")
		notTaken := m[1].Data // left to the reader: its buffer is reused

		m = next(t, rd)
		assert.Equal(t, int64(7), m[0].Int)
		m = next(t, rd)
		require.True(t, bytes.Equal(c, m[0].Data))
		assert.Same(t, &notTaken[0], &m[0].Data[0], "the buffer nobody took is reused")
		require.True(t, bytes.Equal(a, got), "the taken buffer is never written again")
		_, err := rd.Next()
		if gaps {
			_, err = rd.Next()
		}
		require.ErrorIs(t, err, io.EOF)
		assert.Equal(t, int64(len(stream)), rd.Stats().Bytes)
	}
}

// TestLargeBulkBuffered: a large bulk string that arrived whole with its
// header stays in the read buffer.
func TestLargeBulkBuffered(t *testing.T) {
	a := payload(SideBulk, 1)
	rd := NewReader(&pieces{b: []byte(bulkOf(a)), size: 1 << 20}, Limits{})
	rd.buf = make([]byte, 1<<20)
	m := next(t, rd)
	require.True(t, bytes.Equal(a, m[0].Data))
	_, own := m.Take(0)
	assert.False(t, own)
}

// TestLargeBulkBadTerminator: a large payload not followed by CRLF is a
// protocol error at the payload's offset.
func TestLargeBulkBadTerminator(t *testing.T) {
	a := payload(SideBulk, 1)
	s := "$" + strconv.Itoa(len(a)) + "\r\n" + string(a) + "XY"
	rd := NewReader(&pieces{b: []byte(s), size: 4096}, Limits{})
	_, err := rd.Next()
	var pe *ProtocolError
	require.ErrorAs(t, err, &pe)
	assert.Contains(t, pe.Reason, "not followed by CRLF")
}

// TestLargeBulkErrorOffsets: offsets of errors after a large payload count
// its bytes.
func TestLargeBulkErrorOffsets(t *testing.T) {
	a := payload(SideBulk, 1)
	s := bulkOf(a) + "?bad\r\n"
	rd := NewReader(&pieces{b: []byte(s), size: 4096}, Limits{})
	next(t, rd)
	_, err := rd.Next()
	var pe *ProtocolError
	require.ErrorAs(t, err, &pe)
	assert.Equal(t, int64(len(bulkOf(a))), pe.Offset)
}

// TestLargeBulkBeyondSideLimit: a length above maxSideBulk is read into
// the read buffer as it arrives, as before.
func TestLargeBulkBeyondSideLimit(t *testing.T) {
	a := payload(maxSideBulk+1, 4)
	rd := NewReader(&pieces{b: []byte(bulkOf(a)), size: 1 << 20}, Limits{})
	m := next(t, rd)
	require.True(t, bytes.Equal(a, m[0].Data))
	_, own := m.Take(0)
	assert.False(t, own)
}

func TestLastLarge(t *testing.T) {
	// A large bulk (in a side buffer), an array of many small bulks that
	// adds up to 64 KiB, and small values between them.
	var arr bytes.Buffer
	arr.WriteString("*100\r\n")
	for range 100 {
		arr.WriteString(bulkOf(payload(700, 3)))
	}
	stream := "+OK\r\n" + bulkOf(payload(SideBulk+10, 1)) + ":1\r\n" + arr.String() + "$3\r\nabc\r\n"
	r := NewReader(&pieces{b: []byte(stream), size: 4096}, Limits{})
	for i, want := range []bool{false, true, false, true, false} {
		_, err := r.Next()
		require.NoError(t, err)
		assert.Equal(t, want, r.LastLarge(), "value %d", i)
	}
}
