package respire_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// redirectingServer is a fake server that answers every write with
// -REDIRECT to itself, as no real replica can: a loop the client must
// bound. HELLO is refused (the client falls back to RESP2), GET answers a
// null, other connection commands OK.
func redirectingServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	self := l.Addr().String()
	wg.Go(func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() { serveRedirects(c, self) })
		}
	})
	return self
}

// serveRedirects answers the commands read from c (RESP arrays of bulk
// strings) until it closes.
func serveRedirects(c net.Conn, self string) {
	defer c.Close()
	rd := bufio.NewReader(c)
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			return
		}
		n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		var args []string
		for range n {
			if _, err := rd.ReadString('\n'); err != nil { // $len
				return
			}
			a, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			args = append(args, strings.TrimSpace(a))
		}
		reply := "-REDIRECT " + self + "\r\n"
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			reply = "-ERR unknown command 'HELLO'\r\n"
		case "GET":
			reply = "$-1\r\n"
		case "PING", "CLIENT", "SELECT", "READONLY":
			reply = "+OK\r\n"
		}
		if _, err := c.Write([]byte(reply)); err != nil {
			return
		}
	}
}

// TestRedirectLoopBounded: a command redirected again and again fails
// after a bounded number of REDIRECTs, with a *RedirectError wrapping the
// last one; reads are untouched.
func TestRedirectLoopBounded(t *testing.T) {
	addr := redirectingServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, respire.Options{Addr: addr, NoClientInfo: true})
	require.NoError(t, err)
	defer c.Close()

	_, err = c.Get(ctx, "k")
	assert.ErrorIs(t, err, respire.Nil)

	err = c.Set(ctx, "k", "v", nil)
	var re *respire.RedirectError
	require.ErrorAs(t, err, &re, fmt.Sprint(err))
	assert.Equal(t, addr, re.To)
	assert.Greater(t, re.Hops, 1)
	var se *respire.Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "REDIRECT", se.Prefix)
	assert.Contains(t, err.Error(), "REDIRECTs, the last from "+addr+" to "+addr)
	assert.NoError(t, ctx.Err(), "the loop ended by its bound, not by the deadline")

	b := c.NewBatch()
	f := b.Incr("n")
	require.NoError(t, b.Exec(ctx))
	_, err = f.Result()
	require.ErrorAs(t, err, &re)
	assert.True(t, errors.As(err, &se) && se.Prefix == "REDIRECT")

	// NoFollowRedirect hands the first REDIRECT to the caller.
	c2, err := respire.Connect(ctx, respire.Options{Addr: addr, NoClientInfo: true, NoFollowRedirect: true})
	require.NoError(t, err)
	defer c2.Close()
	err = c2.Set(ctx, "k", "v", nil)
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "REDIRECT", se.Prefix)
	assert.False(t, errors.As(err, &re))
}
