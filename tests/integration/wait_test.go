package integration

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// TestWaitCountsTheCallersWrites: WAIT and WAITAOF count the replicas that
// acknowledged the writes of the connection they run on. Sent by itself,
// a Client's WAIT ran on a connection of its blocking pool that carried
// none of the caller's writes and answered at once with every replica,
// even one that was stopped and never got the write: now it is refused
// with an *ArgError naming the ways that work, and a Batch's WAIT, which
// runs on the connection that made the batch's writes, waits for them.
func TestWaitCountsTheCallersWrites(t *testing.T) {
	t.Parallel()
	// Redis 8.0: WAITAOF too (Redis 7.2 and later).
	primary := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	replica := harness.Start(t, harness.Config{Flavor: harness.Redis80, Args: []string{"replicaof " + strings.Replace(primary.Addr, ":", " ", 1)}})
	ctx := ctxT(t)
	c := connect(t, respire.Options{Addr: primary.Addr})

	for name, call := range map[string]func() error{
		"Wait":       func() error { _, err := c.Wait(ctx, 1, time.Second); return err },
		"WaitAOF":    func() error { _, err := c.WaitAOF(ctx, 0, 1, time.Second); return err },
		"Do":         func() error { _, err := c.Do(ctx, "wait", 1, 1000); return err },
		"DoBlocking": func() error { _, err := c.DoBlocking(ctx, "WAITAOF", 0, 1, 1000); return err },
	} {
		err := call()
		var ae *respire.ArgError
		if assert.ErrorAs(t, err, &ae, name) {
			assert.Contains(t, ae.Reason, "Batch.Wait", name)
			assert.Contains(t, ae.Reason, "Client.WithConn", name)
		}
		assert.ErrorIs(t, err, respire.ErrNotSent, name)
	}

	// A batch's WAIT without a timeout returns once the replica has the
	// batch's write: the replica is in sync.
	waitBatch := func(value string, timeout time.Duration) int64 {
		t.Helper()
		b := c.NewBatch()
		b.Set("wait:k", value, nil)
		w := b.Wait(1, timeout)
		require.NoError(t, b.Exec(ctx))
		n, err := w.Result()
		require.NoError(t, err)
		return n
	}
	require.Equal(t, int64(1), waitBatch("1", 0))

	// The replica stalls. A connection without writes still hears 1 at
	// once (what the refused WAIT got); the batch's WAIT times out with 0.
	require.NoError(t, replica.Pause())
	t.Cleanup(func() { _ = replica.Resume() })
	fresh := connect(t, respire.Options{Addr: primary.Addr})
	// connWait sends WAIT 1 timeoutMs on conn and returns its count.
	connWait := func(conn *respire.Conn, timeoutMs int) int64 {
		t.Helper()
		r, err := conn.Do(ctx, "WAIT", 1, timeoutMs)
		require.NoError(t, err)
		n, err := r.Int64()
		require.NoError(t, err)
		return n
	}
	require.NoError(t, fresh.WithConn(ctx, func(conn *respire.Conn) error {
		assert.Equal(t, int64(1), connWait(conn, 5000), "a connection without writes counts the stalled replica at once")
		return nil
	}))
	assert.Equal(t, int64(0), waitBatch("2", 100*time.Millisecond), "the stalled replica does not have the batch's write")
	// The same on a connection of the caller's own.
	require.NoError(t, c.WithConn(ctx, func(conn *respire.Conn) error {
		_, err := conn.Do(ctx, "SET", "wait:k", "3")
		require.NoError(t, err)
		assert.Equal(t, int64(0), connWait(conn, 100), "WithConn: the stalled replica does not have the write")
		return nil
	}))

	// Resumed, the replica catches up and the batch's WAIT counts it.
	require.NoError(t, replica.Resume())
	assert.Equal(t, int64(1), waitBatch("4", 0))
}

// TestWaitOnCluster: on a cluster a Client's WAIT is refused as on one
// server (it was sent to every primary, on connections without the
// caller's writes). A Batch that holds WAIT runs whole on one connection of
// its keys' primary, so WAIT counts the batch's writes (each primary of the
// shared cluster has a replica); keys of two slots, or a command that fans
// out, are refused before anything is sent.
func TestWaitOnCluster(t *testing.T) {
	t.Parallel()
	hc := harness.SharedCluster(t, harness.Redis70)
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{})

	_, err := c.Wait(ctx, 1, time.Second)
	var ae *respire.ArgError
	require.ErrorAs(t, err, &ae)
	assert.Equal(t, "WAIT", ae.Command)

	b := c.NewBatch()
	set := b.Set("wait:{c}:a", "1", nil)
	incr := b.Incr("wait:{c}:n")
	w := b.Wait(1, 10*time.Second)
	require.NoError(t, b.Exec(ctx))
	require.NoError(t, set.Err())
	n, err := incr.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	acks, err := w.Result()
	require.NoError(t, err)
	assert.Equal(t, int64(1), acks, "the slot's replica acknowledged the batch's writes")

	for name, queue := range map[string]func(b *respire.Batch){
		"two slots": func(b *respire.Batch) { b.Set("wait:{c}:b", "1", nil); b.Set("wait:{d}:b", "1", nil) },
		"fan-out":   func(b *respire.Batch) { b.Set("wait:{c}:b", "1", nil); b.DBSize() },
	} {
		b := c.NewBatch()
		queue(b)
		w := b.Wait(1, time.Second)
		err := b.Exec(ctx)
		require.ErrorAs(t, err, &ae, name)
		assert.ErrorIs(t, err, respire.ErrNotSent, name)
		_, err = w.Result()
		assert.ErrorAs(t, err, &ae, name)
	}
	n, err = c.Exists(ctx, "wait:{c}:b", "wait:{d}:b")
	require.NoError(t, err)
	assert.Zero(t, n, "nothing of the refused batches was sent")
}
