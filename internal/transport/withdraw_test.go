package transport

import (
	"bytes"
	"io"
	"testing"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestFillPings: wherever fillPings says it could, the bytes are exactly
// n well-formed PING commands; and it can for every length but the few no
// PING fits (a lone command of 15-19, 30, 121 or 1,022 bytes).
func TestFillPings(t *testing.T) {
	failed := map[int]bool{}
	for n := 1; n <= 6; n++ {
		for size := 11 * n; size <= 1300*n; size++ {
			b := bytes.Repeat([]byte{'#'}, size)
			if !fillPings(b, n) {
				require.True(t, bytes.Equal(b, bytes.Repeat([]byte{'#'}, size)), "b changed though no PINGs fit")
				if n == 1 {
					failed[size] = true
				}
				continue
			}
			rd := resp.NewReader(bytes.NewReader(b), resp.Limits{})
			for i := 0; i < n; i++ {
				m, err := rd.Next()
				require.NoError(t, err, "size %d, n %d, command %d", size, n, i)
				top := m.Value(0)
				require.Equal(t, resp.TypeArray, m[top].Type)
				require.Equal(t, "PING", string(m[m.Child(top, 0)].Data))
			}
			_, err := rd.Next()
			require.ErrorIs(t, err, io.EOF, "size %d, n %d: bytes past the PINGs", size, n)
		}
	}
	want := map[int]bool{30: true, 121: true, 1022: true}
	for l := 11; l < 20; l++ {
		want[l] = l != 14
	}
	for l := range failed {
		assert.True(t, want[l], "a lone command of %d bytes could not be withdrawn", l)
	}
	assert.Len(t, failed, 3+8)
}

// TestWithdrawQueued: a caller whose request waits in the write buffer
// behind a write in progress leaves it withdrawn: the request's bytes
// become PINGs, its error says it was not sent, and the stream stays in
// step for the request queued after it.
func TestWithdrawQueued(t *testing.T) {
	c, srv := pipeConn(t)
	a := refReq(bytes.Repeat([]byte{'a'}, 100<<10))
	_, sentA := stuck(t, c, srv, &a.Request)

	b := &testReq{}
	b.Init(b)
	b.SetPayload([]byte("*2\r\n$4\r\nINCR\r\n$1\r\nk\r\n"))
	b.state.Store(stateWaiting)
	require.NoError(t, c.send(&b.Request))
	left, withdrawn := c.leave(&b.Request)
	require.True(t, left)
	require.True(t, withdrawn)
	assert.ErrorIs(t, leftErr(t.Context(), true), ErrNotSent)

	d := &testReq{}
	d.Init(d)
	d.SetPayload([]byte("*1\r\n$4\r\nTIME\r\n"))
	d.state.Store(stateWaiting)
	require.NoError(t, c.send(&d.Request))

	want := append(JoinRefs(a.payload, a.refs)[1:], "*2\r\n$4\r\nPING\r\n$1\r\n.\r\n*1\r\n$4\r\nTIME\r\n"...)
	got := make([]byte, len(want))
	_, err := io.ReadFull(srv, got)
	require.NoError(t, err)
	require.NoError(t, <-sentA)
	assert.Equal(t, string(want[len(want)-40:]), string(got[len(got)-40:]))
	assert.True(t, bytes.Equal(want, got))
}

// TestLeaveWrittenNotWithdrawn: a request already handed to a write is
// abandoned, not withdrawn: its outcome is unknown.
func TestLeaveWrittenNotWithdrawn(t *testing.T) {
	c, srv := pipeConn(t)
	a := refReq(bytes.Repeat([]byte{'a'}, 100<<10))
	_, sentA := stuck(t, c, srv, &a.Request)
	left, withdrawn := c.leave(&a.Request)
	assert.True(t, left)
	assert.False(t, withdrawn)
	go func() { _, _ = io.Copy(io.Discard, srv) }()
	require.NoError(t, <-sentA)
}
