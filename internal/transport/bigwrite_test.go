package transport

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests drive a conn over net.Pipe, whose writes block until the
// other end reads: a write is then in progress, or a request queued behind
// it, exactly when the test says so.

// pipeConn returns a conn writing to one end of a pipe, and the other end.
func pipeConn(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	cfg := Config{Addr: "pipe", NoDirectRead: true}.withDefaults()
	cli, srv := net.Pipe()
	var wg sync.WaitGroup
	c := newConn(&cfg, cli, resp.NewReader(cli, cfg.Limits), ConnInfo{}, &wg, nil)
	// A pipe's write, like a socket's, can be cut part way by a deadline
	// and go on: large arguments are written from the caller's memory.
	c.boundable = true
	t.Cleanup(func() {
		c.fail(ErrClosed)
		_ = srv.Close()
		wg.Wait()
	})
	return c, srv
}

// refReq is a request "SET k <data>" whose value is a Ref to data.
func refReq(data []byte) *testReq {
	r := &testReq{}
	r.Init(r)
	head := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$" + itoa(len(data)) + "\r\n"
	r.SetPayload([]byte(head + "\r\n"))
	r.SetRefs([]Ref{{At: len(head), Data: data}})
	return r
}

// sendAsync sends r from a goroutine (the send writes inline, so it blocks
// on the pipe) and returns the send's outcome.
func sendAsync(t *testing.T, c *conn, r *Request) <-chan error {
	t.Helper()
	r.state.Store(stateWaiting)
	done := make(chan error, 1)
	go func() { done <- c.send(r) }()
	return done
}

// stuck sends r and returns once its write is in progress, and stays so
// (one byte of it read), with the write's number and the send's outcome.
func stuck(t *testing.T, c *conn, srv net.Conn, r *Request) (uint64, <-chan error) {
	t.Helper()
	sent := sendAsync(t, c, r)
	one := make([]byte, 1)
	_, err := io.ReadFull(srv, one)
	require.NoError(t, err)
	c.mu.Lock()
	seq := r.bigSeq
	inWrite := c.wseq >= seq && c.wdone < seq
	c.mu.Unlock()
	require.True(t, inWrite)
	return seq, sent
}

// TestLetGoCopiesQueuedRefs: a request queued behind a write in progress
// whose caller leaves has its bytes copied; the caller may change them at
// once, and the original bytes are what is written.
func TestLetGoCopiesQueuedRefs(t *testing.T) {
	c, srv := pipeConn(t)
	a := refReq(bytes.Repeat([]byte{'a'}, 100<<10))
	_, sentA := stuck(t, c, srv, &a.Request)

	bval := bytes.Repeat([]byte{'b'}, 100<<10)
	b := refReq(bval)
	b.state.Store(stateWaiting)
	require.NoError(t, c.send(&b.Request)) // queued: a holds the write
	c.mu.Lock()
	queued := c.wseq < b.bigSeq
	c.mu.Unlock()
	require.True(t, queued, "b is queued behind a's write")

	c.letGo([]*Request{&b.Request}, b.bigSeq, true)
	for i := range bval {
		bval[i] = 'X'
	}
	want := len(a.payload) + 100<<10 + len(b.payload) + 100<<10 - 1
	got := make([]byte, want)
	_, err := io.ReadFull(srv, got)
	require.NoError(t, err)
	require.NoError(t, <-sentA)
	assert.NotContains(t, string(got), "X", "b's bytes were read after its caller left")
	assert.Equal(t, 100<<10, strings.Count(string(got), "b"))
	assert.NoError(t, c.err)
}

// TestLetGoCutsWriteInProgress: a caller leaving while its own bytes are
// being written gets them back at once, while the server has read almost
// nothing: the rest of the write is copied and written from the copy, so
// the connection stays whole and what is queued behind follows in order.
func TestLetGoCutsWriteInProgress(t *testing.T) {
	c, srv := pipeConn(t)
	val := bytes.Repeat([]byte{'a'}, 100<<10)
	a := refReq(val)
	want := JoinRefs(a.payload, a.refs)
	seq, sentA := stuck(t, c, srv, &a.Request)

	c.letGo([]*Request{&a.Request}, seq, true)
	c.mu.Lock()
	assert.Less(t, c.wdone, seq, "letGo waited for the write")
	c.mu.Unlock()
	for i := range val {
		val[i] = 'X'
	}
	b := &testReq{}
	b.Init(b)
	b.SetPayload([]byte("*1\r\n$4\r\nPING\r\n"))
	b.state.Store(stateWaiting)
	require.NoError(t, c.send(&b.Request))

	got := make([]byte, len(want)-1+len(b.payload))
	_, err := io.ReadFull(srv, got)
	require.NoError(t, err)
	require.NoError(t, <-sentA)
	assert.True(t, bytes.Equal(append(want[1:], b.payload...), got), "the stream differs from what was sent")
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.NoError(t, c.err)
	assert.False(t, c.wdl, "a write deadline outlived the cut write")
}

// TestLetGoCutsInlineWrite: a caller writing a batch inline, under its
// context's long deadline, to a server that reads nothing; another caller
// of the same write leaves. It gets its memory back while the write still
// runs, and the server then reads every original byte, in order.
func TestLetGoCutsInlineWrite(t *testing.T) {
	c, srv := tcpConn(t)
	x, y := patterned(32<<20), patterned(32<<20)
	a, b := refReq(x), refReq(y)
	want := append(JoinRefs(a.payload, a.refs), JoinRefs(b.payload, b.refs)...)
	a.state.Store(stateWaiting)
	b.state.Store(stateWaiting)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sent := make(chan error, 1)
	go func() { sent <- c.sendCtx(ctx, &a.Request, &b.Request) }()
	one := make([]byte, 1)
	_, err := io.ReadFull(srv, one)
	require.NoError(t, err)

	c.mu.Lock()
	seq := b.bigSeq
	c.mu.Unlock()
	c.letGo([]*Request{&b.Request}, seq, true)
	for i := range y {
		y[i] = 'X'
	}
	got := make([]byte, len(want)-1)
	_, err = io.ReadFull(srv, got)
	require.NoError(t, err)
	require.NoError(t, <-sent)
	require.True(t, bytes.Equal(want[1:], got), "the bytes the server read differ from those sent")
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.NoError(t, c.err)
	assert.False(t, c.wdl, "a write deadline outlived the cut write")
}

// TestRefsCopiedWhenUncuttable: on a connection whose writes cannot be cut
// part way (TLS), large arguments are copied when queued, so a caller
// gets its memory back at once whatever the write does.
func TestRefsCopiedWhenUncuttable(t *testing.T) {
	c, srv := pipeConn(t)
	c.boundable = false
	val := bytes.Repeat([]byte{'a'}, 100<<10)
	a := refReq(val)
	want := JoinRefs(a.payload, a.refs)
	a.state.Store(stateWaiting)
	require.NoError(t, c.send(&a.Request)) // handed to the writer goroutine
	c.letGo([]*Request{&a.Request}, a.bigSeq, true)
	for i := range val {
		val[i] = 'X'
	}
	got := make([]byte, len(want))
	_, err := io.ReadFull(srv, got)
	require.NoError(t, err)
	assert.True(t, bytes.Equal(want, got))
}

// TestLetGoWaitsForWriteOfAnsweredRequest: a request whose outcome is
// known (here: its connection failed) while its write still runs is let
// go only once the write returned.
func TestLetGoWaitsForWriteOfAnsweredRequest(t *testing.T) {
	c, srv := pipeConn(t)
	a := refReq(bytes.Repeat([]byte{'a'}, 100<<10))
	seq, sentA := stuck(t, c, srv, &a.Request)

	let := make(chan struct{})
	go func() { c.letGo([]*Request{&a.Request}, seq, false); close(let) }()
	// Reading the rest lets the write finish, and only that releases letGo.
	rest := make([]byte, len(a.payload)+100<<10-1)
	_, err := io.ReadFull(srv, rest)
	require.NoError(t, err)
	<-let
	require.NoError(t, <-sentA)
	c.mu.Lock()
	assert.GreaterOrEqual(t, c.wdone, seq)
	assert.NoError(t, c.err)
	c.mu.Unlock()
}

// TestFlatJoinsRefs: the blocking pool writes a request whole.
func TestFlatJoinsRefs(t *testing.T) {
	r := refReq([]byte("value"))
	assert.Equal(t, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nvalue\r\n", string(r.flat()))
}

// tcpConn returns a conn over a loopback TCP connection, whose writes a
// deadline can cut part way (unlike net.Pipe's), and the server's end,
// which reads nothing until the test does.
func tcpConn(t *testing.T) (*conn, net.Conn) {
	t.Helper()
	return tcpConnRead(t, false)
}

// tcpConnRead is tcpConn, the replies read by callers (direct) or by the
// background reader, which then reads at all times.
func tcpConnRead(t *testing.T, direct bool) (*conn, net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cli, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	srv, err := ln.Accept()
	require.NoError(t, err)
	cfg := Config{Addr: ln.Addr().String(), NoDirectRead: !direct}.withDefaults()
	var wg sync.WaitGroup
	c := newConn(&cfg, cli, resp.NewReader(cli, cfg.Limits), ConnInfo{}, &wg, nil)
	require.True(t, c.boundable)
	t.Cleanup(func() {
		c.fail(ErrClosed)
		_ = srv.Close()
		wg.Wait()
	})
	return c, srv
}

// patterned returns n bytes that differ from their neighbours, so that a
// misplaced or repeated chunk shows.
func patterned(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%23)
	}
	return b
}

// TestInlineWriteHandsOver: a caller writing a large argument to a server
// that reads nothing returns from its send by its context's deadline, the
// rest of the write handed to the writer goroutine, which writes it (and
// what was queued behind it, in order) once the server reads.
func TestInlineWriteHandsOver(t *testing.T) {
	c, srv := tcpConn(t)
	// Far more than the socket buffers hold: the write cannot finish
	// before the server reads.
	data := patterned(64 << 20)
	a := refReq(data)
	a.state.Store(stateWaiting)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	require.NoError(t, c.sendCtx(ctx, &a.Request))
	c.mu.Lock()
	handed := c.wdone < a.bigSeq && c.writing
	c.mu.Unlock()
	require.True(t, handed, "the send returned with its write still in progress")

	b := &testReq{}
	b.Init(b)
	b.SetPayload([]byte("*1\r\n$4\r\nPING\r\n"))
	b.state.Store(stateWaiting)
	require.NoError(t, c.send(&b.Request)) // queued behind the held write

	want := append(JoinRefs(a.payload, a.refs), b.payload...)
	got := make([]byte, len(want))
	_, err := io.ReadFull(srv, got)
	require.NoError(t, err)
	require.True(t, bytes.Equal(want, got), "the bytes the server read differ from those sent")
	c.letGo([]*Request{&a.Request}, a.bigSeq, false) // returns: the write ended
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.GreaterOrEqual(t, c.wdone, a.bigSeq)
	assert.NoError(t, c.err)
}

// TestHeldWriteEndsWithConnection: a write handed over ends when the
// connection breaks, and so does the wait of a caller letting go of its
// bytes.
func TestHeldWriteEndsWithConnection(t *testing.T) {
	c, _ := tcpConn(t)
	a := refReq(patterned(64 << 20))
	a.state.Store(stateWaiting)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.NoError(t, c.sendCtx(ctx, &a.Request))
	c.fail(errors.New("test: broken"))
	c.letGo([]*Request{&a.Request}, a.bigSeq, false)
	c.mu.Lock()
	defer c.mu.Unlock()
	assert.GreaterOrEqual(t, c.wdone, a.bigSeq)
}

// TestInlineWriteWhole: a large write that the server reads as it comes
// is written by the caller itself, whole and in order, two large
// arguments with small ones between them.
func TestInlineWriteWhole(t *testing.T) {
	c, srv := tcpConn(t)
	x, y := patterned(3<<20), patterned(100<<10)
	r := &testReq{}
	r.Init(r)
	head := "*4\r\n$4\r\nMSET\r\n$" + itoa(len(x)) + "\r\n"
	mid := "\r\n$" + itoa(len(y)) + "\r\n"
	r.SetPayload([]byte(head + mid + "\r\n"))
	r.SetRefs([]Ref{{At: len(head), Data: x}, {At: len(head) + len(mid), Data: y}})
	want := JoinRefs(r.payload, r.refs)
	got := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(want))
		_, _ = io.ReadFull(srv, b)
		got <- b
	}()
	r.state.Store(stateWaiting)
	require.NoError(t, c.sendCtx(context.Background(), &r.Request))
	require.True(t, bytes.Equal(want, <-got), "the bytes the server read differ from those sent")
	c.letGo([]*Request{&r.Request}, r.bigSeq, false)
	assert.NoError(t, c.err)
}

// TestVectorSplitsFirstLarge: the first large payload longer than
// 2*leadBytes is split after leadBytes, and the pieces hold every byte
// in order.
func TestVectorSplitsFirstLarge(t *testing.T) {
	c := &conn{}
	for _, tc := range []struct {
		name    string
		sizes   []int
		wantCut int // bytes before the cut
	}{
		{"one", []int{1 << 20}, 5 + leadBytes},
		{"small first", []int{2 * leadBytes, 1 << 20}, 5 + 2*leadBytes + 5 + leadBytes},
		{"none long enough", []int{leadBytes, 2 * leadBytes}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf []byte
			var big []bigSeg
			var whole []byte
			for _, n := range tc.sizes {
				buf = append(buf, "head:"...)
				whole = append(whole, "head:"...)
				d := patterned(n)
				big = append(big, bigSeg{at: len(buf), data: d})
				whole = append(whole, d...)
			}
			buf = append(buf, "tail"...)
			whole = append(whole, "tail"...)
			cut := c.vector(buf, big)
			var joined []byte
			before := 0
			for i, v := range c.iov {
				if i < cut {
					before += len(v)
				}
				joined = append(joined, v...)
			}
			assert.True(t, bytes.Equal(whole, joined))
			if tc.wantCut < 0 {
				assert.Equal(t, len(c.iov), cut)
			} else {
				assert.Equal(t, tc.wantCut, before)
			}
		})
	}
}

// TestCutShortWriteNotSent: when a write fails part way (the writer sees
// the reset; nothing reads here, as when callers read their own replies),
// the requests whose bytes were handed to the socket in full may have run
// (outcome unknown), and those cut short or never reached certainly did
// not: their errors match ErrNotSent.
func TestCutShortWriteNotSent(t *testing.T) {
	c, srv := tcpConnRead(t, true)
	a := newTestReq("INCR", "a")
	b := refReq(patterned(64 << 20))
	d := newTestReq("INCR", "d")
	for _, r := range []*Request{&a.Request, &b.Request, &d.Request} {
		r.state.Store(stateWaiting)
	}
	sent := make(chan error, 1)
	go func() { sent <- c.sendCtx(context.Background(), &a.Request, &b.Request, &d.Request) }()
	// Read a's bytes and some of b's, then reset: b's write cannot have
	// gone out whole.
	head := make([]byte, len(a.payload)+100)
	_, err := io.ReadFull(srv, head)
	require.NoError(t, err)
	require.NoError(t, srv.(*net.TCPConn).SetLinger(0))
	require.NoError(t, srv.Close())
	require.NoError(t, <-sent)
	for _, r := range []*Request{&a.Request, &b.Request, &d.Request} {
		<-r.done
	}
	assert.NotErrorIs(t, a.err, ErrNotSent, "a was written whole: its outcome is unknown")
	assert.ErrorIs(t, b.err, ErrNotSent, "b was cut short")
	assert.ErrorIs(t, d.err, ErrNotSent, "d never left")
	c.letGo([]*Request{&b.Request}, b.bigSeq, false)
}
