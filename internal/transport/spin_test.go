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

// fakeClock gives s a clock that moves 100 ns per reading and a yield that
// returns at once, so that its polls never see a stall unless a test makes
// one; it clears the process's contention state before and after.
func fakeClock(t *testing.T, s *spinReader) *int64 {
	t.Helper()
	var now int64
	s.now = func() int64 { now += 100; return now }
	s.yield = func() {}
	resetContention()
	t.Cleanup(resetContention)
	return &now
}

// pollingPair returns a connected pair and a reader of its client end that
// polls for budget on a fake clock (fakeClock), reading for itself alone
// and never short of polling slots.
func pollingPair(t *testing.T, budget time.Duration) (client, server net.Conn, s *spinReader, now *int64) {
	t.Helper()
	client, server = tcpPair(t)
	s = newSpinReader(client, budget)
	require.NotNil(t, s)
	now = fakeClock(t, s)
	s.on = true
	s.slots = 1 << 20
	return client, server, s, now
}

func resetContention() {
	contention.until.Store(0)
	contention.level.Store(0)
	contention.last.Store(0)
}

func TestSpinReaderPollsThenParks(t *testing.T) {
	client, server := tcpPair(t)
	s := newSpinReader(client, 20*time.Microsecond)
	require.NotNil(t, s, "TCP connections expose their descriptor")
	fakeClock(t, s)
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
	fakeClock(t, s)
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
	fakeClock(t, s)
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

// On a busy host a yield gives the thread's CPU away for a whole time
// slice. A poll whose yield kept it away that long (sliceStall) stops
// polling for the whole process for a while, whether or not the reply had
// come meanwhile; the pause doubles with each stalled poll, clean polls
// between them or not, and starts over after contendedForget without one.
func TestSpinReaderStallStopsPolling(t *testing.T) {
	const budget = 20 * time.Microsecond
	client, server, s, now := pollingPair(t, budget)
	polls := 0
	s.pollFn = func(fd uintptr) bool { polls++; return s.pollOnce(fd) }
	stall := func() { *now += int64(sliceStall) } // a yield that lost a time slice
	buf := make([]byte, 16)

	// The reply is not there, a yield stalls: the poll gives up at once
	// and the read parks for the reply.
	s.yield = stall
	s.onGiveUp = func() { _, _ = server.Write([]byte("late")) }
	n, err := s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "late", string(buf[:n]))
	assert.Equal(t, 1, polls)
	assert.True(t, contention.active(*now), "a stalled yield stops polling")
	assert.Equal(t, int32(1), contention.level.Load())
	assert.Zero(t, s.skip, "contention is not the slow-server back-off")

	// While it lasts, no reader of the process polls, and a lone caller
	// reads and writes through net.Conn, not the raw system calls ("Not
	// on a busy host" in spin.go).
	other := newSpinReader(client, budget)
	other.now, other.on, other.slots = s.now, true, 1<<20
	other.pollFn = func(fd uintptr) bool { polls++; return other.pollOnce(fd) }
	s.onGiveUp = nil
	raw := pausedIO(t, server, s, other)
	assert.Equal(t, 1, polls, "no poll while the host is contended")
	assert.Zero(t, raw, "no raw system call while the host is contended")

	// After the pause, a poll whose yield stalls again, although the
	// reply came during it: the reply is returned, and the next pause is
	// twice as long.
	*now = contention.until.Load()
	s.yield = func() { stall(); _, _ = server.Write([]byte("during")) }
	n, err = s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "during", string(buf[:n]))
	assert.Equal(t, 2, polls)
	assert.Equal(t, int32(2), contention.level.Load())
	assert.Equal(t, *now+int64(2*contendedMin), contention.until.Load(), "the second pause is twice the first")

	// After it, a poll without a stall polls on, but does not shorten
	// the next pause: on a busy host most polls find a free core.
	*now = contention.until.Load()
	s.yield = func() {}
	_, err = server.Write([]byte("y"))
	require.NoError(t, err)
	_, err = s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 3, polls)
	assert.False(t, contention.active(*now))
	assert.Equal(t, int32(2), contention.level.Load(), "a clean poll keeps the level")

	// The next stall pauses four times as long as the first ...
	s.yield = stall
	s.onGiveUp = func() { _, _ = server.Write([]byte("z")) }
	_, err = s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 4, polls)
	assert.Equal(t, int32(3), contention.level.Load())
	assert.Equal(t, *now+int64(4*contendedMin), contention.until.Load())

	// ... and one long after the last (no stall for contendedForget)
	// starts again from the shortest pause.
	*now = contention.until.Load() + int64(contendedForget)
	_, err = s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, 5, polls)
	assert.Equal(t, int32(1), contention.level.Load())
	assert.Equal(t, *now+int64(contendedMin), contention.until.Load())
}

// pausedIO has each of rs read a byte the server sent and write three
// back, and returns how many raw system calls they made.
func pausedIO(t *testing.T, server net.Conn, rs ...*spinReader) (raw int) {
	t.Helper()
	buf := make([]byte, 16)
	for _, r := range rs {
		r.readFn = func(fd uintptr) bool { raw++; return r.readOnce(fd) }
		r.writeFn = func(fd uintptr) bool { raw++; return r.writeOnce(fd) }
		_, err := server.Write([]byte("x"))
		require.NoError(t, err)
		n, err := r.Read(buf)
		require.NoError(t, err)
		assert.Equal(t, "x", string(buf[:n]))
		n, err = r.writeNow([]byte("out"))
		require.NoError(t, err)
		assert.Equal(t, 3, n)
		got := make([]byte, 3)
		_, err = io.ReadFull(server, got)
		require.NoError(t, err)
		assert.Equal(t, "out", string(got))
	}
	return raw
}

// TestSpinReaderShortStallEndsPollOnly: a yield that kept the thread away
// for longer than the budget but less than a time slice (the server, or a
// thread of the process, ran for a moment) ends that poll, but does not
// pause polling: the next read polls again, with the raw system calls.
func TestSpinReaderShortStallEndsPollOnly(t *testing.T) {
	const budget = 20 * time.Microsecond
	_, server, s, now := pollingPair(t, budget)
	polls := 0
	s.pollFn = func(fd uintptr) bool { polls++; return s.pollOnce(fd) }
	s.yield = func() { *now += int64(3 * budget) }
	s.onGiveUp = func() { _, _ = server.Write([]byte("late")) }
	buf := make([]byte, 16)
	n, err := s.Read(buf)
	require.NoError(t, err)
	assert.Equal(t, "late", string(buf[:n]))
	assert.Equal(t, 1, polls)
	assert.False(t, contention.active(*now), "a stall shorter than a time slice pauses nothing")
	assert.Zero(t, s.skip, "nor is it the slow-server back-off")

	s.onGiveUp = nil
	s.yield = func() {}
	assert.NotZero(t, pausedIO(t, server, s), "raw system calls")
	assert.Equal(t, 2, polls, "the next read polls again")
}

func TestContentionPauseIsBounded(t *testing.T) {
	resetContention()
	t.Cleanup(resetContention)
	for range 40 {
		contention.stalled(0)
	}
	assert.Equal(t, int64(contendedMax), contention.until.Load())
	assert.True(t, contention.active(int64(contendedMax)-1))
	assert.False(t, contention.active(int64(contendedMax)))
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
