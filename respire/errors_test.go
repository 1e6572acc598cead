package respire

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/internal/transport"
)

func TestErrorNamesItsCommand(t *testing.T) {
	e := newError("SET", "WRONGTYPE Operation against a key holding the wrong kind of value")
	assert.Equal(t, "WRONGTYPE", e.Prefix)
	assert.Equal(t, "respire: SET: WRONGTYPE Operation against a key holding the wrong kind of value", e.Error())
	assert.Equal(t, "respire: ERR boom", newError("", "ERR boom").Error())
	assert.Equal(t, "NOPREFIX", newError("GET", "NOPREFIX").Prefix)

	// A nested error reply gets the command of the reply it is in, in a
	// copy; an error that has one keeps it.
	nested := newError("", "ERR inner")
	named := withCommand(&cmdInfo{name: "EVAL"}, nested)
	assert.Equal(t, "respire: EVAL: ERR inner", named.Error())
	assert.Equal(t, "", nested.Command)
	assert.Same(t, e, withCommand(&cmdInfo{name: "GET"}, e))
}

// TestTransportServerErrorIsAnError: a server error the transport got
// itself (a handshake step) is found as an *Error behind the command's
// error, with the step as its command; other failures are not.
func TestTransportServerErrorIsAnError(t *testing.T) {
	se := transport.NewServerError("WRONGPASS invalid username-password pair")
	se.Command = "AUTH"
	err := error(&CommandError{Command: "GET", Err: transport.NotSent(&transport.HandshakeError{Step: "AUTH", Err: se})})
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Equal(t, Error{Command: "AUTH", Prefix: "WRONGPASS", Message: se.Message}, *e)
	assert.ErrorIs(t, err, ErrNotSent)

	// An *Error inside is found as it is.
	inner := newError("SUBSCRIBE", "NOPERM no")
	var got *Error
	require.ErrorAs(t, &CommandError{Command: "SUBSCRIBE", Err: inner}, &got)
	assert.Same(t, inner, got)

	assert.False(t, errors.As(&CommandError{Command: "GET", Err: errors.New("broken")}, &e))
	var he *HandshakeError
	assert.False(t, errors.As(&CommandError{Command: "GET", Err: errors.New("broken")}, &he))
}

// TestWaitedOutNamesTheCommandOnce: a cluster that kept refusing a command
// until its context ended gives both causes, with one "respire:".
func TestWaitedOutNamesTheCommandOnce(t *testing.T) {
	last := newError("GET", "CLUSTERDOWN The cluster is down")
	err := error(&CommandError{Command: "GET", Err: transport.NotSent(&waitedOutError{Last: last, Ctx: context.DeadlineExceeded})})
	assert.Equal(t, "respire: GET: not sent: the cluster answered GET: CLUSTERDOWN The cluster is down until the context ended: context deadline exceeded", err.Error())
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, ErrNotSent)
	var e *Error
	require.ErrorAs(t, err, &e)
	assert.Same(t, last, e)
}

// TestCommandErrorNamesItsCommandOnce: a CommandError around an error that
// names the same command (a cross-slot *ArgError from Watch) reads
// "respire: WATCH: ..." with WATCH once, and keeps the cause for errors.Is.
func TestCommandErrorNamesItsCommandOnce(t *testing.T) {
	cause := crossSlot("WATCH", "", "a", 15495, "b", 3300)
	err := (&Client{}).wrapErr(context.Background(), "WATCH", cause)
	msg := err.Error()
	assert.Equal(t, 1, strings.Count(msg, "WATCH"), msg)
	assert.True(t, strings.HasPrefix(msg, "respire: WATCH: argument key: "), msg)
	assert.Equal(t, 1, strings.Count(msg, "respire: "), msg)
	assert.ErrorIs(t, err, ErrCrossSlot)

	// A cause naming another command keeps both names.
	other := (&Client{}).wrapErr(context.Background(), "MULTI", newArgError("WATCH", "key", "bad"))
	assert.Equal(t, "respire: MULTI: WATCH: argument key: bad", other.Error())
}

// TestSelectRefusalOnACluster: on a cluster, SELECT's refusal suggests
// Options.DB and says which clusters allow it, not Client.WithConn, whose
// connection is one node's; elsewhere it suggests both.
func TestSelectRefusalOnACluster(t *testing.T) {
	err := refuseConnState([]any{"select", 1}, true, false)
	var ae *ArgError
	require.ErrorAs(t, err, &ae)
	assert.ErrorIs(t, err, ErrNotSent)
	assert.Contains(t, err.Error(), "set Options.DB")
	assert.Contains(t, err.Error(), "cluster-databases")
	assert.NotContains(t, err.Error(), "WithConn")

	err = refuseConnState([]any{"SELECT", 1}, false, false)
	require.ErrorAs(t, err, &ae)
	assert.Contains(t, err.Error(), "Options.DB")
	assert.Contains(t, err.Error(), "WithConn")
}

// TestConnAttributesRefused: the CLIENT subcommands that set an attribute
// of the connection are refused on shared connections, naming the
// options that set them for every connection; Options.OnConnect may send
// them, and not the commands that break the reply order.
func TestConnAttributesRefused(t *testing.T) {
	for _, c := range []struct {
		args []any
		want string
	}{
		{[]any{"client", "setname", "x"}, "Options.ClientName"},
		{[]any{"CLIENT", []byte("SetInfo"), "LIB-NAME", "x"}, "Options.OnConnect"},
		{[]any{"CLIENT", "NO-EVICT", "ON"}, "Options.OnConnect"},
		{[]any{"CLIENT", "NO-TOUCH", "ON"}, "Options.OnConnect"},
	} {
		err := refuseConnState(c.args, false, false)
		var ae *ArgError
		require.ErrorAs(t, err, &ae, "%v", c.args)
		assert.ErrorIs(t, err, ErrNotSent)
		assert.Contains(t, err.Error(), c.want)
		assert.Contains(t, err.Error(), "Client.WithConn")
		assert.NoError(t, refuseConnState(c.args, false, true), "OnConnect may send %v", c.args)
		assert.Error(t, refuseConnState(c.args, true, false), "refused on a cluster too")
	}
	for _, args := range [][]any{{"CLIENT", "REPLY", "OFF"}, {"SELECT", 1}, {"SUBSCRIBE", "c"}, {"CLIENT", "TRACKING", "ON"}} {
		assert.Error(t, refuseConnState(args, false, true), "OnConnect may not send %v", args)
	}
	assert.NoError(t, refuseConnState([]any{"CLIENT", "GETNAME"}, false, false))
}

// passedDeadline is a context whose deadline passed while its Err is
// still nil: the moment between a socket's deadline firing (a dial's i/o
// timeout) and the context's own timer.
type passedDeadline struct{ context.Context }

func (passedDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// TestErrorSaysTheContextEnded: the failure of a call whose context ended
// matches the context's error, whatever failed, and still says whether the
// command was sent; replies, refused arguments and calls whose context is
// live are left as they are.
func TestErrorSaysTheContextEnded(t *testing.T) {
	c := &Client{}
	unsent := transport.NotSent(errors.New("respire: server unavailable: dial tcp: i/o timeout"))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()

	err := c.wrapErr(cancelled, "GET", unsent)
	assert.ErrorIs(t, err, context.Canceled)
	assert.ErrorIs(t, err, ErrNotSent)
	assert.Contains(t, err.Error(), "i/o timeout")
	assert.Equal(t, 1, strings.Count(err.Error(), "respire: "), err.Error())

	err = c.wrapErr(passedDeadline{context.Background()}, "GET", unsent)
	assert.ErrorIs(t, err, context.DeadlineExceeded)
	assert.ErrorIs(t, err, ErrNotSent)

	broken := &transport.ConnError{Addr: "a:1", Err: errors.New("reset")}
	err = c.wrapCluster(cancelled, "SET", c.wrapErr(context.Background(), "SET", broken))
	assert.ErrorIs(t, err, context.Canceled)
	assert.NotErrorIs(t, err, ErrNotSent)
	var ce *CommandError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, "SET", ce.Command)

	reply := newError("GET", "WRONGTYPE no")
	assert.Equal(t, error(reply), withCtx(cancelled, reply))
	arg := newArgError("GET", "key", "bad")
	assert.Equal(t, error(arg), withCtx(cancelled, arg))
	assert.Same(t, unsent, withCtx(context.Background(), unsent))
}
