package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// connStateCmds are commands that change the state of the connection they
// run on. Sent on the client's shared connection, each of them used to make
// later callers receive other callers' replies (or land in another
// database, or be queued in a transaction).
var connStateCmds = [][]any{
	{"SUBSCRIBE", "cs:ch"}, {"PSUBSCRIBE", "cs:*"}, {"SSUBSCRIBE", "cs:sh"},
	{"UNSUBSCRIBE"}, {"PUNSUBSCRIBE"}, {"SUNSUBSCRIBE"},
	{"CLIENT", "REPLY", "SKIP"}, {"CLIENT", "REPLY", "OFF"}, {"client", "reply", "on"},
	{"MULTI"}, {"EXEC"}, {"DISCARD"}, {"WATCH", "cs:k0"}, {"UNWATCH"},
	{"SELECT", 1}, {"select", "0"}, {"MONITOR"}, {"RESET"}, {"QUIT"},
	{"HELLO", 2}, {"HELLO", "3"}, {"AUTH", "default", "x"},
	{"CLIENT", "TRACKING", "ON"}, {"CLIENT", "CACHING", "YES"},
	{"READONLY"}, {"READWRITE"}, {"ASKING"},
	{[]byte("SUBSCRIBE"), "cs:ch"}, {"Client", []byte("Reply"), "SKIP"},
}

// checkOwnValues runs 20 goroutines x 5 GETs of their own keys and returns
// how many answers were another key's value (or an error).
func checkOwnValues(t *testing.T, ctx context.Context, c *respire.Client, prefix string) (wrong int64) {
	t.Helper()
	for i := range 20 {
		require.NoError(t, c.Set(ctx, fmt.Sprintf("%s:k%d", prefix, i), fmt.Sprintf("v%d", i), nil))
	}
	var bad atomic.Int64
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 5 {
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				v, err := c.Get(cctx, fmt.Sprintf("%s:k%d", prefix, i))
				cancel()
				if err != nil || v != fmt.Sprintf("v%d", i) {
					bad.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return bad.Load()
}

// TestConnStateCommandsRefused: every such command is refused by Do,
// DoBlocking, Batch.Do and Tx.Do with an *ArgError that names the safe way,
// nothing is sent, and every later GET gets its own value.
func TestConnStateCommandsRefused(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	for _, proto := range []int{3, 2} {
		for _, args := range connStateCmds {
			name := fmt.Sprintf("resp%d/%s", proto, strings.TrimSpace(fmt.Sprint(args...)))
			t.Run(name, func(t *testing.T) {
				ctx := ctxT(t)
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
				_, err := c.Do(ctx, args...)
				var ae *respire.ArgError
				require.ErrorAs(t, err, &ae, "Do must refuse %v", args)
				assert.ErrorIs(t, err, respire.ErrNotSent)
				assert.Contains(t, ae.Reason, "use ", "the error names the safe way")
				assert.Equal(t, int64(0), checkOwnValues(t, ctx, c, "cs"), "GETs answered with another key's value after Do(%v)", args)

				_, err = c.DoBlocking(ctx, args...)
				require.ErrorAs(t, err, &ae)

				b := c.NewBatch()
				get := b.Get("cs:k1")
				f := b.Do(args...)
				require.ErrorAs(t, b.Exec(ctx), &ae)
				require.ErrorAs(t, f.Err(), &ae)
				require.ErrorAs(t, get.Err(), &ae, "nothing of a refused batch is sent")

				tx := c.NewTx()
				tx.Do(args...)
				require.ErrorAs(t, tx.Exec(ctx), &ae)
				assert.Equal(t, int64(0), checkOwnValues(t, ctx, c, "cs"))
			})
		}
	}
}

// TestConnAttributesRefused: the commands that set an attribute of the
// connection they run on (CLIENT SETNAME, SETINFO, NO-EVICT, NO-TOUCH) are
// refused on shared connections by every path that takes words, with an
// error naming the option that sets them for every connection; sent from
// Options.OnConnect they reach every connection of the client, the
// blocking pool's too.
func TestConnAttributesRefused(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	ctx := ctxT(t)
	c := connect(t, respire.Options{Addr: srv.Addr})
	for _, cmd := range []struct {
		args []any
		want string
	}{
		{[]any{"CLIENT", "SETNAME", "shared"}, "Options.ClientName"},
		{[]any{"client", "setinfo", "lib-name", "shared"}, "Options.OnConnect"},
		{[]any{"CLIENT", "NO-EVICT", "ON"}, "Options.OnConnect"},
		{[]any{"CLIENT", "NO-TOUCH", "ON"}, "Options.OnConnect"},
	} {
		var ae *respire.ArgError
		_, err := c.Do(ctx, cmd.args...)
		require.ErrorAs(t, err, &ae, "%v", cmd.args)
		assert.ErrorIs(t, err, respire.ErrNotSent)
		assert.Contains(t, err.Error(), cmd.want)
		assert.Contains(t, err.Error(), "Client.WithConn")
		_, err = c.DoBlocking(ctx, cmd.args...)
		require.ErrorAs(t, err, &ae)
		b := c.NewBatch()
		b.Do(cmd.args...)
		require.ErrorAs(t, b.Exec(ctx), &ae)
		tx := c.NewTx()
		tx.Do(cmd.args...)
		require.ErrorAs(t, tx.Exec(ctx), &ae)
	}
	list, err := c.ClientList(ctx, nil)
	require.NoError(t, err)
	assert.NotContains(t, list, "name=shared")
	assert.NotContains(t, list, "lib-name=shared")
	assert.NotRegexp(t, ` flags=[A-Za-z]*[eT]`, list)

	set := connect(t, respire.Options{Addr: srv.Addr, ClientName: "attrs", NoClientInfo: true,
		OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
			for _, args := range [][]any{{"CLIENT", "NO-EVICT", "ON"}, {"CLIENT", "NO-TOUCH", "ON"}, {"CLIENT", "SETINFO", "LIB-NAME", "mylib"}} {
				if _, err := conn.Do(ctx, args...); err != nil {
					return err
				}
			}
			return nil
		}})
	_, err = set.BLPop(ctx, time.Millisecond, "attrs:none") // a connection of the blocking pool
	require.ErrorIs(t, err, respire.Nil)
	list, err = c.ClientList(ctx, nil)
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		if strings.Contains(line, " name=attrs ") {
			n++
			assert.Regexp(t, ` flags=[A-Za-z]*e`, line)
			assert.Regexp(t, ` flags=[A-Za-z]*T`, line)
			assert.Contains(t, line, " lib-name=mylib ")
		}
	}
	assert.Equal(t, set.PoolStats().Open(), n, "every connection of the client has the attributes")
}

// TestWithConn: the state-changing commands work on a connection of the
// caller's own, which is closed afterwards and changes nothing for the
// client's other callers.
func TestWithConn(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			require.NoError(t, c.Set(ctx, "wc:k", "db0", nil))

			// SELECT on the dedicated connection: the client stays on db 0.
			err := c.WithConn(ctx, func(conn *respire.Conn) error {
				if _, err := conn.Do(ctx, "SELECT", 1); err != nil {
					return err
				}
				if _, err := conn.Do(ctx, "SET", "wc:k", "db1"); err != nil {
					return err
				}
				v, err := conn.Do(ctx, "GET", "wc:k")
				if err != nil {
					return err
				}
				s, _ := v.Text()
				assert.Equal(t, "db1", s)
				// CLIENT REPLY OFF: nothing comes back until ON.
				if err := conn.Send(ctx, "CLIENT", "REPLY", "OFF"); err != nil {
					return err
				}
				if err := conn.Send(ctx, "SET", "wc:quiet", "1"); err != nil {
					return err
				}
				r, err := conn.Do(ctx, "CLIENT", "REPLY", "ON")
				if err != nil {
					return err
				}
				s, _ = r.Text()
				assert.Equal(t, "OK", s)
				return nil
			})
			require.NoError(t, err)
			v, err := c.Get(ctx, "wc:k")
			require.NoError(t, err)
			assert.Equal(t, "db0", v)
			_, err = c.Get(ctx, "wc:quiet")
			assert.ErrorIs(t, err, respire.Nil, "wc:quiet was set in db 1")

			// MONITOR: the connection receives the commands others run.
			err = c.WithConn(ctx, func(conn *respire.Conn) error {
				r, err := conn.Do(ctx, "MONITOR")
				if err != nil {
					return err
				}
				s, _ := r.Text()
				assert.Equal(t, "OK", s)
				if _, err := c.Do(ctx, "ECHO", "seen-by-monitor"); err != nil {
					return err
				}
				for {
					line, err := conn.Receive(ctx)
					if err != nil {
						return err
					}
					if s, _ := line.Text(); strings.Contains(s, "seen-by-monitor") {
						return nil
					}
				}
			})
			require.NoError(t, err)

			// SUBSCRIBE: confirmations and messages are read with Receive.
			err = c.WithConn(ctx, func(conn *respire.Conn) error {
				if _, err := conn.Do(ctx, "SUBSCRIBE", "wc:ch"); err != nil {
					return err
				}
				if _, err := c.Publish(ctx, "wc:ch", "hello"); err != nil {
					return err
				}
				msg, err := conn.Receive(ctx)
				if err != nil {
					return err
				}
				els, err := msg.Slice()
				if err != nil {
					return err
				}
				require.Len(t, els, 3)
				p, _ := els[2].Text()
				assert.Equal(t, "hello", p)
				return nil
			})
			require.NoError(t, err)

			// A Conn kept past its callback fails cleanly.
			var kept *respire.Conn
			require.NoError(t, c.WithConn(ctx, func(conn *respire.Conn) error { kept = conn; return nil }))
			_, err = kept.Do(ctx, "PING")
			assert.Error(t, err)

			// A cancelled Receive returns by its deadline and breaks only
			// that connection.
			err = c.WithConn(ctx, func(conn *respire.Conn) error {
				short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
				defer cancel()
				_, err := conn.Receive(short)
				return err
			})
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.Equal(t, int64(0), checkOwnValues(t, ctx, c, "wc"))
		})
	}
}

// TestRawCommandFuzz drives random sequences of raw commands, the refused
// ones included, through every path that takes a command as words (Do,
// DoBlocking, Batch.Do, Tx.Do), while 64 goroutines read their own keys:
// every GET that succeeds must return its own key's value.
func TestRawCommandFuzz(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			ctx := ctxT(t)
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, BlockingPoolSize: 4})
			const readers = 64
			for i := range readers {
				require.NoError(t, c.Set(ctx, fmt.Sprintf("fz:k%d", i), fmt.Sprintf("value-%d", i), nil))
			}
			raw := append([][]any{
				{"PING"}, {"ECHO", "x"}, {"GET", "fz:k1"}, {"INCR", "fz:n"}, {"CLIENT", "ID"},
				{"PUBLISH", "fz:ch", "m"}, {"DBSIZE"}, {"LPUSH", "fz:l", "a"}, {"BLPOP", "fz:l", 0.01},
				{"OBJECT", "ENCODING", "fz:k2"}, {"CLIENT"}, {"NOSUCHCOMMAND"},
			}, connStateCmds...)

			stop := make(chan struct{})
			// progress tells the raw commands' loop that a GET was
			// verified: each raw command waits for one, so that all of
			// them run among GETs however slow the machine.
			progress := make(chan struct{}, 1)
			var wrong, ok atomic.Int64
			var wg sync.WaitGroup
			for i := range readers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					key, want := fmt.Sprintf("fz:k%d", i), fmt.Sprintf("value-%d", i)
					for {
						select {
						case <-stop:
							return
						default:
						}
						cctx, cancel := context.WithTimeout(ctx, time.Second)
						v, err := c.Get(cctx, key)
						cancel()
						if err == nil {
							ok.Add(1)
							if v != want {
								wrong.Add(1)
							}
							select {
							case progress <- struct{}{}:
							default:
							}
						}
					}
				}()
			}
			rng := rand.New(rand.NewPCG(1, uint64(proto)))
			var refused int
			const rawCommands = 300
		commands:
			for range rawCommands {
				select {
				case <-progress:
				case <-ctx.Done():
					t.Errorf("no GET succeeded: %v", ctx.Err())
					break commands
				}
				args := raw[rng.IntN(len(raw))]
				var err error
				switch rng.IntN(4) {
				case 0:
					_, err = c.Do(ctx, args...)
				case 1:
					_, err = c.DoBlocking(ctx, args...)
				case 2:
					b := c.NewBatch()
					b.Do(args...)
					b.Get("fz:k3")
					err = b.Exec(ctx)
				case 3:
					tx := c.NewTx()
					tx.Do(args...)
					err = tx.Exec(ctx)
				}
				var ae *respire.ArgError
				if errors.As(err, &ae) {
					refused++
				}
			}
			close(stop)
			wg.Wait()
			assert.Equal(t, int64(0), wrong.Load(), "GETs answered with another key's value")
			assert.GreaterOrEqual(t, ok.Load(), int64(rawCommands), "GETs verified among the raw commands")
			assert.Greater(t, refused, 50)
			t.Logf("%d GETs verified, %d raw commands refused", ok.Load(), refused)
		})
	}
}
