//go:build linux

package transport

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

func TestSpinReaderPollsThenParks(t *testing.T) {
	client, server := tcpPair(t)
	s := newSpinReader(client, 20*time.Microsecond)
	require.NotNil(t, s, "TCP connections expose their descriptor")
	s.on = true
	s.slots = 1 << 20 // not limited by pollers elsewhere in the process
	buf := make([]byte, 16)

	// Data already there: the poll gets it.
	_, err := server.Write([]byte("ab"))
	require.NoError(t, err)
	n, err := s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "ab", string(buf[:n]))
	assert.Zero(t, s.fails)

	// Data late (a slow server, which sends only once the poll gave up):
	// the read parks and still gets it, and polling is skipped for the
	// next two reads.
	s.onGiveUp = func() { _, _ = server.Write([]byte("late")) }
	n, err = s.Read(buf)
	s.onGiveUp = nil
	require.NoError(t, err)
	assert.Equal(t, "late", string(buf[:n]))
	assert.Equal(t, 1, s.fails)
	assert.Equal(t, 2, s.skip)
	for i := range 2 {
		_, err = server.Write([]byte{'0' + byte(i)})
		require.NoError(t, err)
		n, err = s.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, string([]byte{'0' + byte(i)}), string(buf[:n]))
	}
	assert.Zero(t, s.skip)
	assert.Equal(t, 1, s.fails, "skipped reads do not count as polls")

	// A poll that succeeds again resets the back-off.
	_, err = server.Write([]byte("x"))
	require.NoError(t, err)
	_, err = s.Read(buf)
	require.NoError(t, err)
	assert.Zero(t, s.fails)
}

func TestSpinReaderBackOffIsBounded(t *testing.T) {
	client, server := tcpPair(t)
	s := newSpinReader(client, time.Microsecond)
	require.NotNil(t, s)
	s.on = true
	buf := make([]byte, 1)
	s.slots = 1 << 20
	s.onGiveUp = func() { _, _ = server.Write([]byte("z")) }
	for range 10 {
		s.skip = 0 // force a poll that gives up each time
		_, err := s.Read(buf)
		require.NoError(t, err)
	}
	assert.Equal(t, 10, s.fails)
	assert.Equal(t, maxSpinSkip, s.skip)
}

func TestSpinReaderEndsAndDeadlines(t *testing.T) {
	client, server := tcpPair(t)
	s := newSpinReader(client, time.Millisecond)
	require.NotNil(t, s)
	s.on = true
	s.slots = 1 << 20
	s.onGiveUp = func() { t.Error("the poll gave up instead of returning what it found") }
	buf := make([]byte, 8)

	// A read deadline in the past (how a cancelled caller interrupts its
	// read) is honoured by the poll itself.
	require.NoError(t, client.SetReadDeadline(time.Unix(1, 0)))
	_, err := s.Read(buf)
	assert.ErrorIs(t, err, os.ErrDeadlineExceeded)
	require.NoError(t, client.SetReadDeadline(time.Time{}))

	// The peer closing gives io.EOF, as net.Conn does, from the poll.
	require.NoError(t, server.Close())
	_, err = s.Read(buf)
	assert.True(t, errors.Is(err, io.EOF), "got %v", err)
	assert.Zero(t, s.fails)
}

func TestSpinReaderNotForPipes(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	assert.Nil(t, newSpinReader(a, time.Millisecond), "net.Pipe has no descriptor")
	c, _ := tcpPair(t)
	assert.Nil(t, newSpinReader(c, 0), "zero turns polling off")
}

// A lone caller with polling on gets fast and slow replies alike, and its
// context still interrupts a read for a reply that never comes.
func TestDirectReadWithPolling(t *testing.T) {
	release := make(chan struct{})
	p := newPeer(t, func(args []string) string {
		switch {
		case args[0] == "HELLO":
			return helloReply
		case args[1] == "never":
			<-release
			return ""
		case args[1] == "slow":
			time.Sleep(3 * time.Millisecond) // a slow server, the subject of the test
		}
		return "+" + args[1] + "\r\n"
	})
	defer close(release)
	m := NewMux(Config{Addr: p.Addr(), ReadSpin: 50 * time.Microsecond})
	defer m.Close()
	ctx := context.Background()
	for _, arg := range []string{"fast", "slow", "fast", "slow", "fast"} {
		r := newTestReq("ECHO", arg)
		require.NoError(t, m.Do(ctx, &r.Request))
		assert.Equal(t, arg, r.got)
	}
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	r := newTestReq("ECHO", "never")
	start := time.Now()
	err := m.Do(cctx, &r.Request)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(start), 2*time.Second)
}
