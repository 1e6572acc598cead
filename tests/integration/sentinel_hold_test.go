package integration

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelFailoverHold checks how long writes are held back during a
// failover and what callers whose deadline ends first are told, on a
// deployment of its own (1 master, 1 replica, 3 sentinels, default
// flavor): a sentinel of it is stopped.
func TestSentinelFailoverHold(t *testing.T) {
	d := harness.StartSentinels(t, harness.SentinelConfig{Replicas: 1})
	run := func(name string, fn func(t *testing.T, d *harness.Sentinels)) { sentinelSubtest(t, d, name, fn) }
	run("kill-error-texts", testSentinelKillErrors)
	// Last: the stopped sentinel may be in TILT mode after it continues.
	run("leader-stopped-before-it-saw-the-promotion", testSentinelLeaderStopped)
}

// shortWrites writes with deadline-short calls until stop closes, and
// returns their errors.
func shortWrites(c *respire.Client, key string, deadline time.Duration, stop <-chan struct{}) func() []error {
	var errs []error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			ctx, cancel := context.WithTimeout(context.Background(), deadline)
			err := c.Set(ctx, key, "v", nil)
			cancel()
			if err != nil {
				errs = append(errs, err)
				// A refused dial fails at once: do not spin on it.
				time.Sleep(time.Millisecond)
			}
		}
	}()
	return func() []error { <-done; return errs }
}

// testSentinelKillErrors kills the master under writes with 100ms
// deadlines: those that fail say what happened. Until the sentinels see
// the master down, a dial refused at its address; from then until the
// switch, that a failover is under way because the master is down, with
// the sentinel that said so. None says "no address known yet".
func testSentinelKillErrors(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	require.NoError(t, c.Set(ctx, "hold:kill", "v", nil))
	stop := make(chan struct{})
	wait := shortWrites(c, "hold:kill", 100*time.Millisecond, stop)
	d.Node(old).Kill()
	_, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return c.Set(ctx, "hold:kill", "after", nil) == nil }, 10*time.Second, time.Millisecond)
	close(stop)
	errs := wait()
	down, late := 0, 0
	for _, err := range errs {
		msg := err.Error()
		assert.NotContains(t, msg, "no address known yet")
		var ce *respire.ConnError
		switch {
		case errors.Is(err, respire.ErrFailover):
			assert.ErrorIs(t, err, respire.ErrNotSent)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			if assert.Contains(t, msg, "master "+old+" is down (+") {
				assert.Regexp(t, `is down \(\+[so]down from sentinel 127\.0\.0\.1:\d+ `, msg)
				down++
			}
		case errors.As(err, &ce):
			// In flight at the kill: its outcome is unknown.
		case msg == "respire: SET: not sent: "+context.DeadlineExceeded.Error():
			// Its deadline had passed before the call began: the
			// goroutine ran again more than 100ms after it made the
			// context, on a loaded host.
			late++
		case !errors.Is(err, respire.ErrNotSent) && errors.Is(err, context.DeadlineExceeded):
			// Sent to a live server, whose reply came after the 100ms
			// deadline: on a loaded machine, before the kill or after
			// the switch.
		default:
			assert.ErrorIs(t, err, respire.ErrNotSent)
			assert.Contains(t, msg, old, "a refused dial names the master's address")
		}
	}
	t.Logf("%d writes with 100ms deadlines failed, %d of them because the sentinels reported the master down, %d past their deadline when they began; first: %v; last: %v",
		len(errs), down, late, first(errs), last(errs))
	assert.Positive(t, down, "writes held back while the sentinels report the master down say so")
}

func first(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[0]
}

func last(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errs[len(errs)-1]
}

// testSentinelLeaderStopped runs SENTINEL FAILOVER under 64 goroutines
// writing with 5s deadlines, on a client with SwitchAtPromotion, and stops
// the failover's leader as soon as it announces it sent REPLICAOF NO ONE
// (+failover-state-wait-promotion), before it can see the replica run as
// master: the client switches to the replica anyway (it asks it for its
// ROLE), and writes go on there while the leader is stopped. No write fails or is lost; callers with
// short deadlines whose write was held back are told the master is being
// failed over.
func testSentinelLeaderStopped(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	opts := sentinelOpts(d)
	opts.Sentinel.SwitchAtPromotion = true
	c := connect(t, opts)
	old := c.SentinelMaster()
	replicas := d.Replicas(old)
	require.Len(t, replicas, 1)
	promoted := replicas[0].Addr
	var acked atomic.Int64
	stop := make(chan struct{})
	wait := setGetLoad(t, c, "hold:load", 5*time.Second, false, stop, &acked)
	short := shortWrites(c, "hold:short", 50*time.Millisecond, stop)
	waitAcked(ctx, t, &acked, 1000)
	t0 := time.Now()
	require.NoError(t, d.Failover(ctx))
	ev, err := d.Events.Wait(ctx, t0, "+failover-state-wait-promotion", "@ "+d.Config.MasterName+" ")
	require.NoError(t, err)
	var leader *harness.SentinelProc
	for _, sp := range d.Sentinel {
		if sp.Addr == ev.Sentinel {
			leader = sp
		}
	}
	require.NotNil(t, leader, "the sentinel %s that announced the promotion", ev.Sentinel)
	// The leader announces wait-promotion once it has queued REPLICAOF NO
	// ONE, not once it has written it: stopped at once, it may never send
	// it. Stop it when the replica runs as master, still before the
	// leader's next INFO to it can tell it so.
	require.Eventually(t, func() bool {
		r, err := replicas[0].Do(ctx, "ROLE")
		a, _ := r.([]any)
		return err == nil && len(a) > 0 && a[0] == "master"
	}, 10*time.Second, time.Millisecond, "the chosen replica %s never became a master", promoted)
	require.NoError(t, leader.Pause())
	paused := time.Now()
	var resumeOnce sync.Once
	resume := func() { resumeOnce.Do(func() { require.NoError(t, leader.Resume()) }) }
	t.Cleanup(resume)
	// Without the leader's word, the fence would hold for 30s.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	switched, err := waitSwitch(sctx, c, old)
	require.NoError(t, err)
	assert.Equal(t, promoted, c.SentinelMaster())
	// A write the client acknowledges now is on the promoted replica.
	require.NoError(t, c.Set(ctx, "hold:while-stopped", "x", nil))
	stoppedFor := time.Since(paused)
	resume()
	got, err := replicas[0].Do(ctx, "GET", "hold:while-stopped")
	require.NoError(t, err)
	assert.Equal(t, "x", got, "the write went to the promoted replica")
	if e, ok := d.Events.First(t0, "+promoted-slave"); ok && e.At.Before(paused) {
		t.Logf("the leader saw the promotion before it was stopped (%s): the client may have followed its event", e)
	}
	// A sentinel stopped for over 2s enters TILT mode and holds its
	// failover for 30s: the rest is only checked when it was not.
	if stoppedFor < 1500*time.Millisecond {
		_, err = d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
		require.NoError(t, err)
	}
	waitAcked(ctx, t, &acked, 1000)
	close(stop)
	ops := wait()
	resumed, failed := recovery(t, ops, switched)
	assert.Zero(t, failed, "no write with a 5s deadline fails")
	shortErrs := short()
	for _, err := range shortErrs {
		if !errors.Is(err, respire.ErrFailover) && errors.Is(err, context.DeadlineExceeded) {
			// Not held back: sent to a live server whose reply came
			// after the 50ms deadline, or waiting for a connection to
			// the new master (a loaded machine).
			continue
		}
		assert.ErrorIs(t, err, respire.ErrNotSent)
		assert.ErrorIs(t, err, respire.ErrFailover)
		assert.Contains(t, err.Error(), "master "+old+" is being failed over (+")
	}
	timeline(t, d, t0, map[string]time.Time{"leader stopped": paused, "switched": switched, "writes resumed": resumed})
	t.Logf("%d writes with 5s deadlines, %d failed; the leader stopped %v; %d writes with 50ms deadlines held back until they failed, first: %v",
		len(ops), failed, stoppedFor.Round(time.Millisecond), len(shortErrs), first(shortErrs))
}
