package integration

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Connections closed while the client is idle: by the server's own idle
// reaper (timeout), by CLIENT KILL, by a restart, by a proxy that reaps
// idle connections (FIN) or resets them (RST). Each case waits idle, then
// makes calls (a write first, since a write is never retried when its
// outcome is unknown, then a read and a batch), and none may fail. All
// with the options users get by default: no tick or health setting is
// shortened. The cases run in parallel, each with servers of its own.
func TestIdleCloses(t *testing.T) {
	t.Run("server-timeout", func(t *testing.T) {
		t.Parallel()
		srv := harness.Start(t, harness.Config{Args: []string{"timeout 1"}})
		c := connect(t, respire.Options{Addr: srv.Addr})
		ic := newIdleCalls(t, c, "timeout")
		for _, d := range []time.Duration{1100 * time.Millisecond, 1600 * time.Millisecond, 2200 * time.Millisecond, 3 * time.Second} {
			id := ic.connID()
			time.Sleep(d) // the idle time is the condition under test
			ic.calls(fmt.Sprintf("after %v idle", d))
			if d > 2100*time.Millisecond {
				// The server counts idle time in whole seconds: past
				// 2 s, it has closed the connection.
				assert.NotEqual(t, id, ic.connID(), "the server's timeout closed the connection after %v idle", d)
			}
		}
		ic.requireNoFailures()
	})
	t.Run("client-kill", func(t *testing.T) {
		t.Parallel()
		srv := harness.Start(t, harness.Config{})
		admin := connect(t, respire.Options{Addr: srv.Addr})
		c := connect(t, respire.Options{Addr: srv.Addr, ClientName: "idle-kill"})
		ic := newIdleCalls(t, c, "kill")
		for _, d := range []time.Duration{0, 0, 0, time.Millisecond, 10 * time.Millisecond, 100 * time.Millisecond, time.Second, 4 * time.Second} {
			// The kill follows the client's last reply by one round trip
			// of the admin's connection, and the next call follows the
			// kill by d.
			id := ic.connID()
			_, err := admin.Do(ctxT(t), "CLIENT", "KILL", "ID", strconv.FormatInt(id, 10))
			require.NoError(t, err)
			time.Sleep(d)
			ic.calls(fmt.Sprintf("%v after CLIENT KILL", d))
		}
		ic.requireNoFailures()
	})
	t.Run("restart", func(t *testing.T) {
		t.Parallel()
		srv := harness.Start(t, harness.Config{})
		c := connect(t, respire.Options{Addr: srv.Addr})
		ic := newIdleCalls(t, c, "restart")
		for i := range 3 {
			srv.Restart(t)
			ic.reset() // the dataset starts empty
			ic.calls(fmt.Sprintf("after restart %d", i+1))
		}
		ic.requireNoFailures()
	})
	t.Run("proxy-idle-reaper", func(t *testing.T) {
		t.Parallel()
		srv := harness.Start(t, harness.Config{})
		p, err := faultproxy.New(srv.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		// Idle limits from 10 ms to 5 s and waits from 1 ms to 2 s, both
		// spread evenly on a log scale, so that short and long ones both
		// come up often. The proxy picks limits on a goroutine of its own.
		var mu sync.Mutex
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 22))
		logUniform := func(lo, hi time.Duration) time.Duration {
			mu.Lock()
			defer mu.Unlock()
			return time.Duration(float64(lo) * math.Pow(float64(hi)/float64(lo), rng.Float64()))
		}
		p.IdleClose(func() time.Duration { return logUniform(10*time.Millisecond, 5*time.Second) })
		c := connect(t, respire.Options{Addr: p.Addr()})
		ic := newIdleCalls(t, c, "proxy")
		// A close the proxy decided while a call's request was on its way
		// crosses it: the request is dropped with the connection, or ran,
		// and the client cannot know which. Such a call may fail with its
		// outcome unknown (not with "not sent": that one is sent again).
		// A call that starts once the close is done finds it (the client
		// peeks at a connection idle before it writes) and must not fail.
		ic.crossed = func(from, to time.Time, err error) bool {
			return !errors.Is(err, respire.ErrNotSent) && p.IdleClosedDuring(from, to)
		}
		// 12 s, and on until the proxy has reaped 3 connections (about 6
		// by then on average), 30 s at most.
		deadline, last := time.Now().Add(12*time.Second), time.Now().Add(30*time.Second)
		for i := 0; time.Now().Before(deadline) || p.IdleClosed() < 3 && time.Now().Before(last); i++ {
			d := logUniform(time.Millisecond, 2*time.Second)
			time.Sleep(d)
			ic.calls(fmt.Sprintf("call %d, %v idle", i, d))
		}
		ic.requireNoFailures()
		assert.GreaterOrEqual(t, p.IdleClosed(), 3, "the proxy closed idle connections")
		t.Logf("%d calls, %d connections closed idle by the proxy, %d calls crossed by a close", ic.n, p.IdleClosed(), len(ic.crossings))
		assert.LessOrEqual(t, len(ic.crossings), p.IdleClosed(), "calls crossed by a close: one per close at most")
	})
	t.Run("proxy-reset", func(t *testing.T) {
		t.Parallel()
		srv := harness.Start(t, harness.Config{})
		p, err := faultproxy.New(srv.Addr)
		require.NoError(t, err)
		t.Cleanup(func() { _ = p.Close() })
		c := connect(t, respire.Options{Addr: p.Addr()})
		ic := newIdleCalls(t, c, "rst")
		for _, d := range []time.Duration{0, 0, time.Millisecond, 50 * time.Millisecond, 500 * time.Millisecond} {
			p.CutRST()
			time.Sleep(d)
			ic.calls(fmt.Sprintf("%v after a reset", d))
		}
		ic.requireNoFailures()
	})
	t.Run("cluster", func(t *testing.T) {
		t.Parallel()
		hc := harness.SharedCluster(t, "")
		c := clusterClient(t, hc, respire.Options{ClientName: "idle-cluster"})
		ic := newIdleCalls(t, c, "{idle}cluster")
		other := newIdleCalls(t, c, "{other}cluster") // another slot, likely another node
		for _, d := range []time.Duration{0, 10 * time.Millisecond, 500 * time.Millisecond} {
			for _, m := range hc.Masters() {
				killNamedAt(t, m.Server, "idle-cluster")
			}
			time.Sleep(d)
			ic.calls(fmt.Sprintf("%v after CLIENT KILL", d))
			other.calls(fmt.Sprintf("%v after CLIENT KILL", d))
		}
		setTimeout := func(v string) {
			for _, m := range hc.Masters() {
				_, err := m.Server.Do(context.Background(), "CONFIG", "SET", "timeout", v)
				require.NoError(t, err)
			}
		}
		setTimeout("1")
		t.Cleanup(func() { setTimeout("0") })
		for _, d := range []time.Duration{1500 * time.Millisecond, 2500 * time.Millisecond} {
			time.Sleep(d)
			ic.calls(fmt.Sprintf("after %v idle with timeout 1", d))
			other.calls(fmt.Sprintf("after %v idle with timeout 1", d))
		}
		ic.requireNoFailures()
		other.requireNoFailures()
	})
}

// testSentinelIdleCloses: the Sentinel-followed master closes the client's
// idle connections (CLIENT KILL, its timeout); the next calls succeed.
func testSentinelIdleCloses(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	o := sentinelOpts(d)
	o.ClientName = "idle-sentinel"
	c := connect(t, o)
	ic := newIdleCalls(t, c, "sentinel")
	master, err := d.Master(ctx)
	require.NoError(t, err)
	for _, wait := range []time.Duration{0, 20 * time.Millisecond, 300 * time.Millisecond} {
		killNamedAt(t, master, "idle-sentinel")
		time.Sleep(wait)
		ic.calls(fmt.Sprintf("%v after CLIENT KILL", wait))
	}
	_, err = master.Do(ctx, "CONFIG", "SET", "timeout", "1")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = master.Do(context.Background(), "CONFIG", "SET", "timeout", "0") })
	for _, wait := range []time.Duration{1500 * time.Millisecond, 2200 * time.Millisecond} {
		time.Sleep(wait)
		ic.calls(fmt.Sprintf("after %v idle with timeout 1", wait))
	}
	if len(ic.failed) > 0 {
		// Twice in CI a call failed here on a dial to the master that
		// timed out (5s, on loopback): say what the master was doing.
		start := time.Now()
		nc, err := net.DialTimeout("tcp", master.Addr, time.Second)
		if err == nil {
			nc.Close()
		}
		t.Logf("a dial to the master %s now: %v after %v", master.Addr, err, time.Since(start))
		info, err := master.Do(ctx, "INFO", "clients")
		t.Logf("the master's INFO clients: %v (error: %v)", info, err)
		role, err := master.Do(ctx, "ROLE")
		t.Logf("the master's ROLE: %v (error: %v)", role, err)
	}
	ic.requireNoFailures()
}

// killNamedAt kills, with CLIENT KILL, every connection of srv whose
// client name is name, and returns how many there were.
func killNamedAt(t *testing.T, srv *harness.Server, name string) int {
	t.Helper()
	list, err := srv.Do(ctxT(t), "CLIENT", "LIST")
	require.NoError(t, err)
	killed := 0
	for _, line := range strings.Split(fmt.Sprint(list), "\n") {
		if !strings.Contains(line, " name="+name+" ") {
			continue
		}
		id := strings.TrimPrefix(strings.Fields(line)[0], "id=")
		if _, err := srv.Do(ctxT(t), "CLIENT", "KILL", "ID", id); err == nil {
			killed++
		}
	}
	return killed
}

// idleCalls makes the calls of an idle-close case on one key and counts
// those that failed. Each round is an INCR, a GET that must see it, and a
// batch of both.
type idleCalls struct {
	t      *testing.T
	c      *respire.Client
	key    string
	want   int64
	n      int
	failed []string
	// crossed, when set, tells which failed calls a close crossed (see
	// proxy-idle-reaper): those are logged in crossings, not failed.
	crossed   func(from, to time.Time, err error) bool
	crossings []string
}

func newIdleCalls(t *testing.T, c *respire.Client, key string) *idleCalls {
	ic := &idleCalls{t: t, c: c, key: "idle:" + key}
	_, err := c.Del(ctxT(t), ic.key)
	require.NoError(t, err)
	ic.calls("before any close")
	return ic
}

// reset forgets the counter, for a server that lost its dataset.
func (ic *idleCalls) reset() { ic.want = 0 }

func (ic *idleCalls) fail(when, what string, from time.Time, err error) {
	line := fmt.Sprintf("%s: %s: %v", when, what, err)
	if ic.crossed != nil && ic.crossed(from, time.Now(), err) {
		ic.t.Logf("crossed by a close: %s", line)
		ic.crossings = append(ic.crossings, line)
		return
	}
	ic.failed = append(ic.failed, line)
}

func (ic *idleCalls) calls(when string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ic.n += 3
	from := time.Now()
	n, err := ic.c.Incr(ctx, ic.key)
	if err != nil {
		ic.fail(when, "INCR", from, err)
		ic.resync(ctx)
		return
	}
	ic.want++
	assert.Equal(ic.t, ic.want, n, "%s: INCR", when)
	from = time.Now()
	v, err := ic.c.Get(ctx, ic.key)
	if err != nil {
		ic.fail(when, "GET", from, err)
	} else {
		assert.Equal(ic.t, strconv.FormatInt(n, 10), v, "%s: GET", when)
	}
	b := ic.c.NewBatch()
	incr := b.Incr(ic.key)
	get := b.Get(ic.key)
	from = time.Now()
	if err := b.Exec(ctx); err != nil {
		ic.fail(when, "batch", from, err)
		ic.resync(ctx)
		return
	}
	ic.want++
	n, err = incr.Result()
	require.NoError(ic.t, err)
	assert.Equal(ic.t, ic.want, n, "%s: batch INCR", when)
	v, err = get.Result()
	require.NoError(ic.t, err)
	assert.Equal(ic.t, strconv.FormatInt(n, 10), v, "%s: batch GET", when)
}

// resync starts the count again from what the server has, after a call
// whose outcome may be unknown.
func (ic *idleCalls) resync(ctx context.Context) {
	if v, err := ic.c.Get(ctx, ic.key); err == nil {
		ic.want, _ = strconv.ParseInt(v, 10, 64)
	}
}

// connID is the server's id of the connection the client's commands use.
func (ic *idleCalls) connID() int64 {
	r, err := ic.c.Do(ctxT(ic.t), "CLIENT", "ID")
	require.NoError(ic.t, err)
	id, err := r.Int64()
	require.NoError(ic.t, err)
	return id
}

func (ic *idleCalls) requireNoFailures() {
	ic.t.Helper()
	if len(ic.failed) > 0 {
		ic.t.Fatalf("%s: %d of %d calls failed:\n%s", ic.key, len(ic.failed), ic.n, strings.Join(ic.failed, "\n"))
	}
	ic.t.Logf("%s: %d calls, none failed", ic.key, ic.n)
}
