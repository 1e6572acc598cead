//go:build linux

package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Reads that do not poll, and the connection's writes, are raw system
// calls that park through the descriptor when the socket is not ready:
// they behave as net.Conn's own Read and Write, waiting included.
func TestRawReadWriteBehaveAsNetConn(t *testing.T) {
	client, server := tcpPair(t)
	s := newSpinReader(client, time.Millisecond)
	require.NotNil(t, s)
	fakeClock(t, s)

	// A write larger than the socket buffers parks until the peer reads,
	// and writes every byte, in order.
	payload := bytes.Repeat([]byte("0123456789abcdef"), 1<<18) // 4 MiB
	got := make(chan []byte, 1)
	go func() {
		b, _ := io.ReadAll(io.LimitReader(server, int64(len(payload))))
		got <- b
	}()
	n, err := s.writeNow(payload)
	require.NoError(t, err)
	assert.Equal(t, len(payload), n)
	assert.True(t, bytes.Equal(payload, <-got), "the bytes arrive whole and in order")

	// A read with nothing there parks until data comes.
	buf := make([]byte, 16)
	go func() { _, _ = server.Write([]byte("later")) }()
	n, err = s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "later", string(buf[:n]))

	// Deadlines are honoured, and named as net.Conn names them.
	require.NoError(t, client.SetReadDeadline(time.Unix(1, 0)))
	_, err = s.Read(buf)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	var oe *net.OpError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "read", oe.Op)
	require.NoError(t, client.SetReadDeadline(time.Time{}))
	require.NoError(t, client.SetWriteDeadline(time.Unix(1, 0)))
	_, err = s.writeNow([]byte("x"))
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "write", oe.Op)
	require.NoError(t, client.SetWriteDeadline(time.Time{}))

	// The peer's close is an end of stream for a read, and an error of the
	// write once the peer has reset the connection.
	require.NoError(t, server.Close())
	_, err = s.Read(buf)
	assert.ErrorIs(t, err, io.EOF)
	for err = nil; err == nil; {
		_, err = s.writeNow([]byte("after close"))
	}
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, "write", oe.Op)

	// Our own close ends both with net.ErrClosed.
	require.NoError(t, client.Close())
	_, err = s.Read(buf)
	assert.True(t, errors.Is(err, net.ErrClosed), "got %v", err)
	_, err = s.writeNow([]byte("x"))
	assert.True(t, errors.Is(err, net.ErrClosed), "got %v", err)
}
