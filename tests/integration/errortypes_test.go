package integration

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// doFunc sends a command to one server outside the client under test.
type doFunc func(ctx context.Context, args ...string) (any, error)

var blockedRE = regexp.MustCompile(`blocked_clients:(\d+)`)

// breakInFlight runs call while the server holds write commands (CLIENT
// PAUSE WRITE), waits until call's command is held there (a blocked
// client), then kills the server's normal clients: call's connection
// breaks with its command in flight, sent but not answered.
func breakInFlight(t *testing.T, do doFunc, call func(ctx context.Context) error) error {
	t.Helper()
	ctx := ctxT(t)
	_, err := do(ctx, "CLIENT", "PAUSE", "20000", "WRITE")
	require.NoError(t, err)
	defer func() { _, _ = do(context.Background(), "CLIENT", "UNPAUSE") }()
	errc := make(chan error, 1)
	go func() { errc <- call(ctx) }()
	require.Eventually(t, func() bool {
		info, err := do(ctx, "INFO", "clients")
		if err != nil {
			return false
		}
		m := blockedRE.FindStringSubmatch(fmt.Sprint(info))
		if m == nil {
			return false
		}
		n, _ := strconv.Atoi(m[1])
		return n >= 1
	}, 10*time.Second, 5*time.Millisecond, "the command never reached the server")
	_, err = do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "yes")
	require.NoError(t, err)
	select {
	case err = <-errc:
	case <-time.After(10 * time.Second):
		t.Fatal("the call did not fail when its connection was killed")
	}
	return err
}

// requireConnError asserts that err is found as a *respire.ConnError
// naming addr (any, when addr is "") and wrapping a cause, and that the command's outcome is
// unknown (not ErrNotSent).
func requireConnError(t *testing.T, err error, addr string) {
	t.Helper()
	var ce *respire.ConnError
	require.ErrorAs(t, err, &ce, "error: %v", err)
	if addr != "" {
		assert.Equal(t, addr, ce.Addr)
	}
	assert.NotEmpty(t, ce.Addr)
	assert.NotNil(t, ce.Err, "a ConnError wraps its cause")
	assert.Contains(t, err.Error(), "connection to "+ce.Addr+" broken")
	assert.NotErrorIs(t, err, respire.ErrNotSent, "the command was sent")
	var he *respire.HandshakeError
	assert.False(t, errors.As(err, &he), "a broken connection is no handshake error")
}

// connErrorPaths runs every kind of call whose connection breaks with the
// command in flight against c, whose key (and key+":list") lives on the
// server do reaches at addr.
func connErrorPaths(t *testing.T, c *respire.Client, do doFunc, addr, key string) {
	t.Run("command", func(t *testing.T) {
		requireConnError(t, breakInFlight(t, do, func(ctx context.Context) error {
			_, err := c.Incr(ctx, key)
			return err
		}), addr)
	})
	t.Run("do", func(t *testing.T) {
		requireConnError(t, breakInFlight(t, do, func(ctx context.Context) error {
			_, err := c.Do(ctx, "INCR", key)
			return err
		}), addr)
	})
	t.Run("batch", func(t *testing.T) {
		var f *respire.Future[int64]
		err := breakInFlight(t, do, func(ctx context.Context) error {
			b := c.NewBatch()
			f = b.Incr(key)
			if err := b.Exec(ctx); err != nil {
				return err
			}
			return f.Err()
		})
		requireConnError(t, err, addr)
		requireConnError(t, f.Err(), addr)
	})
	t.Run("tx", func(t *testing.T) {
		requireConnError(t, breakInFlight(t, do, func(ctx context.Context) error {
			tx := c.NewTx()
			tx.Incr(key)
			return tx.Exec(ctx)
		}), addr)
	})
	t.Run("blocking", func(t *testing.T) {
		requireConnError(t, breakInFlight(t, do, func(ctx context.Context) error {
			_, err := c.BLPop(ctx, 30*time.Second, key+":list")
			return err
		}), addr)
	})
}

// TestConnErrorIsRespireType: the error of every kind of call whose
// connection broke under it is found by errors.As as a *respire.ConnError,
// on a single server, a cluster and a Sentinel deployment.
func TestConnErrorIsRespireType(t *testing.T) {
	t.Run("single", func(t *testing.T) {
		srv := harness.Start(t, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr})
		connErrorPaths(t, c, srv.Do, srv.Addr, "et:k")
	})
	t.Run("cluster", func(t *testing.T) {
		hc := sharedMasters(t, "")
		c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
		const key = "{et}:k" // and "{et}:k:list", in the same slot
		slot, err := c.ClusterKeySlot(ctxT(t), key)
		require.NoError(t, err)
		n := hc.MasterOf(int(slot))
		connErrorPaths(t, c, n.Do, n.Addr, key)
	})
	t.Run("sentinel", func(t *testing.T) {
		d := harness.StartSentinels(t, harness.SentinelConfig{Replicas: 1, Sentinels: 1})
		c := connect(t, respire.Options{Sentinel: &respire.SentinelOptions{MasterName: d.Config.MasterName, Addrs: d.Addrs()}})
		m, err := d.Master(ctxT(t))
		require.NoError(t, err)
		// The connection is named after the master, not its address, which
		// changes with a failover.
		connErrorPaths(t, c, m.Do, "sentinel master "+d.Config.MasterName, "et:k")
	})
}

// TestHandshakeErrorIsRespireType: a refused handshake is found by
// errors.As as a *respire.HandshakeError, from Connect and from a command
// of a client whose reconnect is refused, with the server's *Error inside.
func TestHandshakeErrorIsRespireType(t *testing.T) {
	srv := harness.Start(t, harness.Config{Password: "right"})
	ctx := ctxT(t)
	_, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, Password: "wrong"})
	var he *respire.HandshakeError
	require.ErrorAs(t, err, &he)
	assert.Contains(t, []string{"HELLO", "AUTH"}, he.Step) // HELLO AUTH on RESP3
	assert.True(t, he.Permanent())
	var se *respire.Error
	require.ErrorAs(t, he, &se, "the server's refusal is inside the HandshakeError")
	assert.Equal(t, "WRONGPASS", se.Prefix)
	assert.ErrorIs(t, err, respire.ErrNotSent)

	// A connected client whose password was changed under it: its next
	// connection is refused, and the command says why.
	c := connect(t, respire.Options{Addr: srv.Addr, Password: "right"})
	require.NoError(t, c.Set(ctx, "et:h", "1", nil))
	_, err = c.Do(ctx, "CONFIG", "SET", "requirepass", "changed")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = srv.Do(context.Background(), "AUTH", "changed") })
	_, _ = c.Do(ctx, "CLIENT", "KILL", "TYPE", "normal", "SKIPME", "no") // its own connection, closed after the reply
	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = c.Get(short, "et:h")
	require.ErrorAs(t, err, &he, "error: %v", err)
	assert.True(t, he.Permanent())
	require.ErrorAs(t, err, &se)
	assert.Equal(t, "WRONGPASS", se.Prefix)
}

// TestPubSubMessageFields: the events of a Subscription are respire's
// Message and Gap, with every field filled, through Next and Messages.
func TestPubSubMessageFields(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	c := connect(t, respire.Options{Addr: srv.Addr})
	ctx := ctxT(t)
	sub, err := c.Subscribe(ctx, "et:news")
	require.NoError(t, err)
	defer sub.Close()
	require.NoError(t, sub.PSubscribe(ctx, "et:p*"))

	_, err = c.Publish(ctx, "et:news", "hello")
	require.NoError(t, err)
	assert.Equal(t, respire.Message{Channel: "et:news", Payload: "hello"}, next(t, sub))
	_, err = c.Publish(ctx, "et:pat", "via pattern")
	require.NoError(t, err)
	assert.Equal(t, respire.Message{Channel: "et:pat", Pattern: "et:p*", Payload: "via pattern"}, next(t, sub))

	// A lost connection is a GapDisconnect marker, then delivery resumes.
	_, err = srv.Do(ctx, "CLIENT", "KILL", "TYPE", "pubsub")
	require.NoError(t, err)
	m := next(t, sub)
	require.NotNil(t, m.Gap, "%+v", m)
	assert.Equal(t, respire.GapDisconnect, m.Gap.Reason)
	assert.Equal(t, "disconnect", m.Gap.Reason.String())
	assert.Zero(t, m.Gap.Dropped)
	assert.Error(t, m.Gap.Err, "the cause of the disconnect")
	assert.False(t, m.Gap.Since.IsZero())
	assert.False(t, m.Gap.Until.Before(m.Gap.Since))
	assert.Empty(t, m.Channel+m.Pattern+m.Payload)

	msgs := sub.Messages()
	require.Eventually(t, func() bool {
		_, err := c.Publish(ctx, "et:news", "again")
		require.NoError(t, err)
		select {
		case got := <-msgs:
			assert.Equal(t, respire.Message{Channel: "et:news", Payload: "again"}, got)
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 10*time.Second, time.Millisecond, "no message after the reconnect")
}
