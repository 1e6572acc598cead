package respire

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/transport/resp"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// These tests need no server: they feed hand-written replies to MULTI, the
// queued commands and EXEC, in both protocols' shapes.

// txWith queues GET, INCR and HGETALL on a transaction of a client that
// never dials, and returns the replies' collector and the Futures.
func txWith(t *testing.T) (*Client, *txReplies, []settler, *Future[string], *Future[int64], *Future[map[string]string]) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", FailFast: true})
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	tx := c.NewTx()
	get := tx.Get("k")
	incr := tx.Incr("n")
	hall := tx.HGetAll("h")
	cmds, futs := tx.b.cmds, tx.b.futs
	t.Cleanup(func() {
		for _, x := range cmds {
			x.Recycle()
		}
	})
	return c, &txReplies{cmds: cmds, queueErr: make([]error, len(cmds))}, futs, get, incr, hall
}

// feed passes replies written with '|' for CRLF, or with CRLF when they
// contain '|' as a type byte (attributes).
func feed(t *testing.T, r *txReplies, replies ...string) {
	for i, s := range replies {
		if strings.Contains(s, "\r\n") {
			rd := resp.NewReader(strings.NewReader(s), resp.Limits{})
			m, err := rd.Next()
			require.NoError(t, err)
			r.handle(i, m)
			continue
		}
		r.handle(i, msg(t, s))
	}
}

func TestTxRepliesSplitExec(t *testing.T) {
	for name, exec := range map[string]string{
		"resp2": "*3|$1|v|:7|*4|$1|a|$1|1|$1|b|$1|2|",
		"resp3": "*3|$1|v|:7|%2|$1|a|$1|1|$1|b|$1|2|",
		// An attribute in front of an element belongs to that element.
		"attrs": "*3\r\n|1\r\n+ttl\r\n:3\r\n$1\r\nv\r\n:7\r\n%2\r\n$1\r\na\r\n$1\r\n1\r\n$1\r\nb\r\n$1\r\n2\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			c, r, futs, get, incr, hall := txWith(t)
			feed(t, r, "+OK|", "+QUEUED|", "+QUEUED|", "+QUEUED|", exec)
			require.NoError(t, r.settle(context.Background(), c, futs))
			assert.Equal(t, "v", get.Val())
			assert.Equal(t, int64(7), incr.Val())
			assert.Equal(t, map[string]string{"a": "1", "b": "2"}, hall.Val())
		})
	}
}

func TestTxRepliesNestedErrorAndNull(t *testing.T) {
	c, r, futs, get, incr, hall := txWith(t)
	feed(t, r, "+OK|", "+QUEUED|", "+QUEUED|", "+QUEUED|", "*3|_|-WRONGTYPE Operation against a key|*0|")
	require.NoError(t, r.settle(context.Background(), c, futs))
	assert.ErrorIs(t, get.Err(), Nil)
	var se *Error
	require.ErrorAs(t, incr.Err(), &se)
	assert.Equal(t, "WRONGTYPE", se.Prefix)
	assert.Empty(t, hall.Val())
	assert.NoError(t, hall.Err())
}

func TestTxRepliesWatchFailed(t *testing.T) {
	for _, null := range []string{"*-1|", "_|"} {
		c, r, futs, get, incr, _ := txWith(t)
		feed(t, r, "+OK|", "+QUEUED|", "+QUEUED|", "+QUEUED|", null)
		require.ErrorIs(t, r.settle(context.Background(), c, futs), TxFailed)
		assert.ErrorIs(t, get.Err(), TxFailed)
		assert.ErrorIs(t, incr.Err(), TxFailed)
	}
}

func TestTxRepliesExecAbort(t *testing.T) {
	c, r, futs, get, incr, hall := txWith(t)
	feed(t, r, "+OK|", "+QUEUED|", "-NOPERM no INCR for you|", "+QUEUED|",
		"-EXECABORT Transaction discarded because of previous errors.|")
	err := r.settle(context.Background(), c, futs)
	var abort *TxAbortedError
	require.ErrorAs(t, err, &abort)
	assert.Equal(t, 1, abort.Rejected)
	var se *Error
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "EXECABORT", se.Prefix)
	require.ErrorAs(t, incr.Err(), &se)
	assert.Equal(t, "NOPERM", se.Prefix)
	assert.ErrorAs(t, get.Err(), &abort)
	assert.ErrorAs(t, hall.Err(), &abort)
}

func TestTxRepliesWrongLength(t *testing.T) {
	c, r, futs, get, _, _ := txWith(t)
	feed(t, r, "+OK|", "+QUEUED|", "+QUEUED|", "+QUEUED|", "*2|:1|:2|")
	var u *UnexpectedReplyError
	require.ErrorAs(t, r.settle(context.Background(), c, futs), &u)
	assert.ErrorAs(t, get.Err(), &u)
}

func TestTxArgumentErrorSendsNothing(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", FailFast: true})
	require.NoError(t, err)
	defer c.Close()
	tx := c.NewTx()
	get := tx.Get("k")
	tx.Set("k", "v", &SetOptions{EX: time.Second, PX: time.Second})
	err = tx.Exec(context.Background())
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	assert.ErrorAs(t, get.Err(), &ae)
	assert.ErrorIs(t, tx.Exec(context.Background()), ErrBatchDone)
	assert.NoError(t, c.NewTx().Exec(context.Background()), "an empty transaction sends nothing")
	assert.Equal(t, 0, c.PoolStats().BlockingBusy+c.PoolStats().BlockingIdle)
}

func TestTxWatchOutsideWatch(t *testing.T) {
	c, err := NewClient(Options{Addr: "127.0.0.1:1", FailFast: true})
	require.NoError(t, err)
	defer c.Close()
	require.Error(t, c.NewTx().Watch(context.Background(), "k"))
	err = c.Watch(context.Background(), func(*Tx) error { return nil })
	require.Error(t, err)
}

func TestScriptHash(t *testing.T) {
	// SHA1 of "return 1", as the server computes it.
	s := NewScript("return 1")
	assert.Equal(t, "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", s.Hash())
	assert.Equal(t, "return 1", s.Source())
	assert.True(t, isNoScript(fmtErr("NOSCRIPT No matching script.")))
	assert.False(t, isNoScript(errors.New("NOSCRIPT")))
}

func fmtErr(s string) error { return &CommandError{Command: "EVALSHA", Err: newServerErrorText(s)} }

func newServerErrorText(s string) *Error { return &Error{Prefix: s[:8], Message: s} }

// TestTxOffersWhatMULTIAllows: a Tx has the command methods that make
// sense inside MULTI, no blocking or admin command, and no way to run its
// commands as a plain batch.
func TestTxOffersWhatMULTIAllows(t *testing.T) {
	tt := reflect.TypeOf(&Tx{})
	for _, name := range []string{"Get", "Set", "Incr", "HSetMap", "XAddMap", "Do", "Len", "Exec", "GetLease", "Expire", "EvalSha"} {
		_, ok := tt.MethodByName(name)
		assert.True(t, ok, "Tx.%s", name)
	}
	for _, name := range []string{"BLPop", "BZPopMin", "XRead", "ConfigSet", "Shutdown", "Batch", "WaitAOF", "ClientKill"} {
		_, ok := tt.MethodByName(name)
		assert.False(t, ok, "Tx.%s", name)
	}
	_, ok := reflect.TypeOf(Tx{}).FieldByName("Batch")
	assert.False(t, ok, "Tx does not embed Batch: tx.Batch.Exec would skip MULTI")
	bt := reflect.TypeOf(&Batch{})
	assert.Less(t, tt.NumMethod(), bt.NumMethod())
}
