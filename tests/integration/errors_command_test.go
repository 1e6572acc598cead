package integration

import (
	"errors"
	"fmt"
	"testing"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// requireCmdError asserts that err is the server's *Error for command with
// prefix, and that its message names the command.
func requireCmdError(t *testing.T, err error, command, prefix string) *respire.Error {
	t.Helper()
	var se *respire.Error
	require.ErrorAs(t, err, &se, "%v", err)
	assert.Equal(t, command, se.Command, "%v", err)
	assert.Equal(t, prefix, se.Prefix, "%v", err)
	assert.Contains(t, err.Error(), command+": "+se.Message)
	assert.NotErrorIs(t, err, respire.ErrNotSent)
	return se
}

// TestServerErrorsNameTheirCommand: an error reply names the command it
// answers, from typed methods, Do (a command the spec lacks included), a
// Batch and a Tx, on both protocols; Nil stays apart.
func TestServerErrorsNameTheirCommand(t *testing.T) {
	eachFlavorProtocol(t, func(t *testing.T, f harness.Flavor, c *respire.Client, proto int) {
		ctx := ctxT(t)
		p := fmt.Sprintf("errcmd%d:", proto)
		list, missing := p+"list", p+"missing"
		_, err := c.Del(ctx, list, missing)
		require.NoError(t, err)
		_, err = c.RPush(ctx, list, "x")
		require.NoError(t, err)

		_, err = c.Get(ctx, list)
		se := requireCmdError(t, err, "GET", "WRONGTYPE")
		assert.Equal(t, "respire: GET: "+se.Message, err.Error())

		_, err = c.Get(ctx, missing)
		assert.ErrorIs(t, err, respire.Nil)
		assert.False(t, errors.As(err, &se))

		_, err = c.Do(ctx, "incr", list)
		requireCmdError(t, err, "INCR", "WRONGTYPE")
		_, err = c.Do(ctx, "config", "get")
		requireCmdError(t, err, "CONFIG GET", "ERR")
		_, err = c.Do(ctx, "nosuch.command", "a")
		requireCmdError(t, err, "NOSUCH.COMMAND", "ERR")

		if f == harness.Redis80 || f == harness.Redis86 {
			// A module's command (vector sets), through Do and Batch.Do.
			_, err = c.Do(ctx, "vadd", p+"vset", "VALUES", "1", "not-a-number", "m")
			requireCmdError(t, err, "VADD", "ERR")
			b := c.NewBatch()
			bad := b.Do("VADD", p+"vset", "VALUES", "1", "not-a-number", "m")
			require.NoError(t, b.Exec(ctx))
			requireCmdError(t, bad.Err(), "VADD", "ERR")
		}

		b := c.NewBatch()
		incr := b.Incr(list)
		unknown := b.Do("nosuch.command")
		get := b.Get(missing)
		require.NoError(t, b.Exec(ctx))
		requireCmdError(t, incr.Err(), "INCR", "WRONGTYPE")
		requireCmdError(t, unknown.Err(), "NOSUCH.COMMAND", "ERR")
		assert.ErrorIs(t, get.Err(), respire.Nil)

		// An error of one command inside EXEC's reply.
		tx := c.NewTx()
		incr = tx.Incr(list)
		n := tx.Exists(list)
		require.NoError(t, tx.Exec(ctx))
		requireCmdError(t, incr.Err(), "INCR", "WRONGTYPE")
		assert.Equal(t, int64(1), n.Val())

		// A command refused when queued, and EXEC's EXECABORT.
		tx = c.NewTx()
		bad := tx.Do("nosuch.command")
		incr = tx.Incr(missing)
		err = tx.Exec(ctx)
		var aborted *respire.TxAbortedError
		require.ErrorAs(t, err, &aborted)
		assert.Equal(t, "EXEC", aborted.Err.Command)
		requireCmdError(t, bad.Err(), "NOSUCH.COMMAND", "ERR")
		assert.ErrorAs(t, incr.Err(), &aborted)

		// An error nested in a generic reply has no command of its own.
		r, err := c.Eval(ctx, "return {1, redis.error_reply('MYERR nested')}", nil)
		require.NoError(t, err)
		elems, ok := r.Any().([]any)
		require.True(t, ok, "%v", r)
		require.Len(t, elems, 2)
		nested, ok := elems[1].(*respire.Error)
		require.True(t, ok, "%T", elems[1])
		assert.Equal(t, respire.Error{Prefix: "MYERR", Message: "MYERR nested"}, *nested)
		assert.Equal(t, "respire: MYERR nested", nested.Error())
	})
}

// eachFlavorProtocol runs fn as a subtest per flavor and protocol, with a
// client of a standalone server of that flavor.
func eachFlavorProtocol(t *testing.T, fn func(t *testing.T, f harness.Flavor, c *respire.Client, proto int)) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				fn(t, f, connect(t, respire.Options{Addr: srv.Addr, Protocol: proto}), proto)
			})
		}
	})
}

// TestRefusalsOfTheTransportAreErrors: a wrong password refused by the
// handshake and a channel an ACL user may not subscribe to are *Errors
// naming the refused command, on both protocols.
func TestRefusalsOfTheTransportAreErrors(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{Users: []harness.User{
			{Name: "app", Password: "app-pw", Rules: "~* +@all resetchannels &app:*"},
		}})
		for _, proto := range []int{2, 3} {
			ctx := ctxT(t)
			_, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, Username: "app", Password: "wrong", Protocol: proto})
			var se *respire.Error
			require.ErrorAs(t, err, &se, "resp%d: %v", proto, err)
			assert.Equal(t, respire.Error{Command: "HELLO", Prefix: "WRONGPASS", Message: se.Message}, *se)

			c := connect(t, respire.Options{Addr: srv.Addr, Username: "app", Password: "app-pw", Protocol: proto})
			s, err := c.Subscribe(ctx, "app:news")
			require.NoError(t, err)
			require.NoError(t, s.Close())
			_, err = c.Subscribe(ctx, "other:news")
			require.ErrorAs(t, err, &se, "resp%d: %v", proto, err)
			assert.Equal(t, "SUBSCRIBE", se.Command)
			assert.Equal(t, "NOPERM", se.Prefix)
		}
	})
}

// TestClusterErrorsNameTheirCommand: on a cluster too, where replies go
// through the redirect loop and batches are split per node.
func TestClusterErrorsNameTheirCommand(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		hc := harness.SharedCluster(t, f)
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				ctx := ctxT(t)
				c := clusterClient(t, hc, respire.Options{Protocol: proto})
				p := fmt.Sprintf("cerrcmd%d:", proto)
				b := c.NewBatch()
				var incrs []*respire.Future[int64]
				for i := range 8 {
					k := fmt.Sprintf("%s%d", p, i)
					b.Del(k)
					b.RPush(k, "x")
					incrs = append(incrs, b.Incr(k))
				}
				require.NoError(t, b.Exec(ctx))
				for _, f := range incrs {
					requireCmdError(t, f.Err(), "INCR", "WRONGTYPE")
				}
				_, err := c.Get(ctx, p+"0")
				requireCmdError(t, err, "GET", "WRONGTYPE")
				_, err = c.Do(ctx, "lpop", p+"1", "x")
				requireCmdError(t, err, "LPOP", "ERR")
			})
		}
	})
}
