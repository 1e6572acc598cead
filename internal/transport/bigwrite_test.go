package transport

import (
	"bytes"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

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

// TestLetGoBreaksWriteInProgress: a caller leaving while its own bytes
// are being written breaks the connection; letGo returns once the write
// did, and the rest of the bytes never leave.
func TestLetGoBreaksWriteInProgress(t *testing.T) {
	c, srv := pipeConn(t)
	val := bytes.Repeat([]byte{'a'}, 100<<10)
	a := refReq(val)
	seq, sentA := stuck(t, c, srv, &a.Request)

	c.letGo([]*Request{&a.Request}, seq, true)
	c.mu.Lock()
	assert.GreaterOrEqual(t, c.wdone, seq, "letGo returned before the write")
	err := c.err
	c.mu.Unlock()
	assert.True(t, errors.Is(err, ErrAbandonedWrite), "connection error %v", err)
	for i := range val {
		val[i] = 'X'
	}
	require.NoError(t, <-sentA)
	rest, _ := io.ReadAll(srv)
	assert.Less(t, len(rest), len(a.payload)+len(val))
	assert.NotContains(t, string(rest), "X")
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
