package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
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

// TestSentinel runs every Sentinel test of a flavor on one deployment
// (1 master, 2 replicas, 3 sentinels, down-after-milliseconds 1000,
// failover-timeout 5000), which each subtest leaves whole again
// (WaitStable) for the next. The test runs beside the package's other
// parallel tests, its flavors one after the other: five deployments under
// load at once on two cores once held every write of one for 7s after the
// switch (a gap no serial run showed).
func TestSentinel(t *testing.T) {
	t.Parallel() // waits for servers of its own: see main_test.go
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		d := harness.StartSentinels(t, harness.SentinelConfig{Flavor: f})
		run := func(name string, fn func(t *testing.T, d *harness.Sentinels)) { sentinelSubtest(t, d, name, fn) }
		run("connect", testSentinelConnect)
		run("failover-under-load", func(t *testing.T, d *harness.Sentinels) { testSentinelFailLoad(t, d, false) })
		run("kill-master-under-load", func(t *testing.T, d *harness.Sentinels) { testSentinelFailLoad(t, d, true) })
		run("restarted-old-master", testSentinelRestartedMaster)
		run("first-sentinel-killed", func(t *testing.T, d *harness.Sentinels) { testSentinelFirstGone(t, d, false) })
		run("pubsub-and-blpop-follow", testSentinelPubSubBLPop)
		run("replica-reads-during-restart", testSentinelReplicaRestart)
		run("hung-master-with-blpop", testSentinelHungMaster)
		if f == harness.DefaultFlavor {
			run("idle-closes", testSentinelIdleCloses)
			run("blpop-follows-a-stalled-old-master", testSentinelBLPopStalledMaster)
		}
		// Last: the stopped sentinel is in TILT mode for 30s after it
		// continues.
		run("first-sentinel-stopped", func(t *testing.T, d *harness.Sentinels) { testSentinelFirstGone(t, d, true) })
	})
}

// sentinelSubtest runs fn as a subtest on d once it is whole again
// (WaitStable), and logs the sentinels' events when it fails.
func sentinelSubtest(t *testing.T, d *harness.Sentinels, name string, fn func(t *testing.T, d *harness.Sentinels)) {
	t.Run(name, func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		require.NoError(t, d.WaitStable(ctx), "the deployment did not settle before the test")
		t0 := time.Now()
		t.Cleanup(func() {
			if t.Failed() {
				for _, e := range d.Events.Since(t0) {
					t.Log(e)
				}
			}
		})
		fn(t, d)
	})
}

func sentinelOpts(d *harness.Sentinels) respire.Options {
	return respire.Options{
		Sentinel:    &respire.SentinelOptions{MasterName: d.Config.MasterName, Addrs: d.Addrs()},
		DialTimeout: time.Second,
	}
}

// testSentinelConnect: discovery, writes on the master, the URL form.
func testSentinelConnect(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	master, err := d.MasterAddr(ctx)
	require.NoError(t, err)
	assert.Equal(t, master, c.SentinelMaster())
	require.NoError(t, c.Set(ctx, "connect:k", "v", nil))
	got, err := d.Node(master).Do(ctx, "GET", "connect:k")
	require.NoError(t, err)
	assert.Equal(t, "v", got)

	o, err := respire.ParseURL("redis-sentinel://" + strings.Join(d.Addrs(), ",") + "/" + d.Config.MasterName)
	require.NoError(t, err)
	c2 := connect(t, o)
	v, err := c2.Get(ctx, "connect:k")
	require.NoError(t, err)
	assert.Equal(t, "v", v)

	bad := sentinelOpts(d)
	bad.Sentinel.MasterName = "nosuchmaster"
	cctx, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = respire.Connect(cctx, bad)
	require.ErrorIs(t, err, respire.ErrNoPrimary)
	assert.Contains(t, err.Error(), "nosuchmaster")
}

// loadOp is one write of the load, as the client saw it.
type loadOp struct {
	start, end time.Time
	err        error
}

// setGetLoad runs 64 goroutines that each SET their own key to a new value
// and GET it back until stop closes. It fails the test on a reply that is
// not the goroutine's own value (corrupt or misattributed), and, unless
// lossOK, on one that is not the value just written. It returns every
// SET, and counts the acknowledged ones in acked.
func setGetLoad(t *testing.T, c *respire.Client, prefix string, opTimeout time.Duration, lossOK bool, stop <-chan struct{}, acked *atomic.Int64) func() []loadOp {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var ops []loadOp
	for g := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("%s:%d", prefix, g)
			var mine []loadOp
			for n := 1; ; n++ {
				select {
				case <-stop:
					mu.Lock()
					ops = append(ops, mine...)
					mu.Unlock()
					return
				default:
				}
				val := fmt.Sprintf("%d-%d", g, n)
				ctx, cancel := context.WithTimeout(context.Background(), opTimeout)
				op := loadOp{start: time.Now()}
				op.err = c.Set(ctx, key, val, nil)
				op.end = time.Now()
				mine = append(mine, op)
				if op.err == nil {
					acked.Add(1)
					got, err := c.Get(ctx, key)
					if err == nil && got != val {
						own := strings.HasPrefix(got, strconv.Itoa(g)+"-")
						if !own || !lossOK {
							t.Errorf("goroutine %d wrote %q and read %q", g, val, got)
						}
					}
				}
				cancel()
			}
		}()
	}
	return func() []loadOp { wg.Wait(); return ops }
}

// recovery returns when writes resumed after the failover: the end of the
// first successful write that ended once the client had switched (at
// switched, as waitSwitch saw it), and the number of failed writes. A pause
// after that one (a loaded host that stopped the servers for seconds) is
// not the failover's: it is logged, longer than resumeBound, and not
// counted.
func recovery(t *testing.T, ops []loadOp, switched time.Time) (resumed time.Time, failed int) {
	var ends []time.Time
	for _, op := range ops {
		if op.err != nil {
			failed++
			continue
		}
		ends = append(ends, op.end)
	}
	slices.SortFunc(ends, func(a, b time.Time) int { return a.Compare(b) })
	i, _ := slices.BinarySearchFunc(ends, switched, func(e, s time.Time) int { return e.Compare(s) })
	if i == len(ends) {
		t.Errorf("no write succeeded after the client switched (%d failed)", failed)
		return switched, failed
	}
	resumed = ends[i]
	for j := i + 1; j < len(ends); j++ {
		if gap := ends[j].Sub(ends[j-1]); gap > resumeBound {
			t.Logf("a later pause in successful writes: %v, ending %v after the switch", gap, ends[j].Sub(switched))
		}
	}
	return resumed, failed
}

// timeline logs the sentinels' failover events since t0 beside what the
// client saw, as offsets from t0.
func timeline(t *testing.T, d *harness.Sentinels, t0 time.Time, client map[string]time.Time) {
	type row struct {
		at   time.Duration
		what string
	}
	var rows []row
	seen := map[string]bool{}
	for _, e := range d.Events.Since(t0) {
		switch e.Channel {
		case "+sdown", "+odown", "+try-failover", "+selected-slave", "+failover-state-wait-promotion", "+promoted-slave", "+switch-master", "+convert-to-slave":
			if !seen[e.Channel] || e.Channel == "+sdown" && !seen[e.Channel+e.Sentinel] {
				rows = append(rows, row{e.At.Sub(t0), "sentinel " + e.Sentinel + " " + e.Channel})
			}
			seen[e.Channel], seen[e.Channel+e.Sentinel] = true, true
		}
	}
	for what, at := range client {
		rows = append(rows, row{at.Sub(t0), "client: " + what})
	}
	slices.SortFunc(rows, func(a, b row) int { return int(a.at - b.at) })
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "\n  %8.3fs  %s", r.at.Seconds(), r.what)
	}
	t.Logf("timeline (%s):%s", d.Config.Flavor, b.String())
}

// waitSwitch waits until the client names another master than old.
func waitSwitch(ctx context.Context, c *respire.Client, old string) (time.Time, error) {
	for c.SentinelMaster() == old {
		select {
		case <-ctx.Done():
			return time.Time{}, fmt.Errorf("the client still names %s: %w", old, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
	return time.Now(), nil
}

// resumeBound bounds the time from the sentinels' +switch-master to the
// first write acknowledged by the new master. The client follows the event
// (tested without servers in internal/topology) and at worst polls every
// second (the default PollInterval); on a quiet machine writes resume
// within about 100ms. The bound is generous so that no slow machine
// reaches it: what it catches is a client that waits for something else
// (a command timeout, a health check, the next failure).
const resumeBound = 5 * time.Second

// testSentinelFailLoad fails the master over under load, with SENTINEL
// FAILOVER or, kill set, kill -9: writes resume soon after +switch-master
// (resumeBound), and only a kill may lose acknowledged writes (the
// unreplicated ones).
func testSentinelFailLoad(t *testing.T, d *harness.Sentinels, kill bool) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	stop := make(chan struct{})
	opTimeout := 5 * time.Second
	if kill {
		opTimeout = time.Second
	}
	var acked atomic.Int64
	wait := setGetLoad(t, c, "load", opTimeout, kill, stop, &acked)
	waitAcked(ctx, t, &acked, 2000) // some load before the failover
	t0 := time.Now()
	if kill {
		d.Node(old).Kill()
	} else {
		require.NoError(t, d.Failover(ctx))
	}
	switched, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	ev, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
	require.NoError(t, err)
	waitAcked(ctx, t, &acked, 5000) // load on the new master
	close(stop)
	ops := wait()
	resumed, failed := recovery(t, ops, switched)
	t.Logf("%d writes, %d failed; client switched %v after the start, %v after +switch-master; writes resumed %v after the start, %v after +switch-master",
		len(ops), failed, switched.Sub(t0), switched.Sub(ev.At), resumed.Sub(t0), resumed.Sub(ev.At))
	timeline(t, d, t0, map[string]time.Time{"switched": switched, "writes resumed": resumed})
	logFailedOps(t, ops, t0)
	assert.LessOrEqual(t, resumed.Sub(ev.At), resumeBound, "writes resume soon after +switch-master")
	if !kill {
		// Writes are held back, not failed, for a time far shorter than
		// their 5s deadlines.
		assert.Zero(t, failed, "writes failed during a SENTINEL FAILOVER")
	}
	for _, op := range ops {
		var ce *respire.ConnError
		if op.err != nil && !errors.Is(op.err, respire.ErrNotSent) && !errors.Is(op.err, context.DeadlineExceeded) {
			assert.ErrorAs(t, op.err, &ce, "a failed write says it was not sent, that its connection broke or that its context ended in flight")
		}
	}
}

// logFailedOps logs when the first failed writes started and ended, and
// their errors.
func logFailedOps(t *testing.T, ops []loadOp, t0 time.Time) {
	n := 0
	for _, op := range ops {
		if op.err != nil && n < 5 {
			n++
			t.Logf("failed write %v-%v after the start: %v", op.start.Sub(t0).Round(time.Millisecond), op.end.Sub(t0).Round(time.Millisecond), op.err)
		}
	}
}

// waitAcked waits until n more writes of the load were acknowledged.
func waitAcked(ctx context.Context, t *testing.T, acked *atomic.Int64, n int64) {
	want := acked.Load() + n
	for acked.Load() < want {
		select {
		case <-ctx.Done():
			t.Fatalf("the load acknowledged %d writes, waiting for %d: %v", acked.Load(), want, ctx.Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// testSentinelRestartedMaster kills the master, restarts it (empty, a
// master in its own eyes) once the failover started, and counts: no write
// may be acknowledged by it.
func testSentinelRestartedMaster(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	type counter struct {
		acked, unknown []int64
	}
	counters := make([]counter, 64)
	var pause sync.RWMutex // held for writing while the master is killed
	var total atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range counters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("sum:%d", g)
			for n := int64(1); ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				pause.RLock()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_, err := c.IncrBy(ctx, key, n)
				cancel()
				pause.RUnlock()
				switch {
				case err == nil:
					counters[g].acked = append(counters[g].acked, n)
					total.Add(1)
				case !errors.Is(err, respire.ErrNotSent):
					counters[g].unknown = append(counters[g].unknown, n)
				}
			}
		}()
	}
	waitAcked(ctx, t, &total, 2000)
	// Everything acknowledged so far reaches the replicas before the kill,
	// so that what the count finds missing is the client's doing.
	pause.Lock()
	require.NoError(t, d.WaitReplicated(ctx, old))
	t0 := time.Now()
	d.Node(old).Kill()
	pause.Unlock()
	// Once the chosen replica was told REPLICAOF NO ONE, so that it does
	// not sync from the empty restarted master.
	ev, err := d.Events.Wait(ctx, t0, "+failover-state-wait-promotion", d.Config.MasterName)
	require.NoError(t, err)
	// The sentinel moves to wait-promotion once it has sent REPLICAOF NO
	// ONE, not once the replica ran it: until it has, the replica could
	// reconnect to the restarted, empty old master and sync from it.
	if f := strings.Fields(ev.Payload); len(f) > 1 && d.Node(f[1]) != nil {
		chosen := d.Node(f[1])
		require.Eventually(t, func() bool {
			r, err := chosen.Do(ctx, "ROLE")
			a, _ := r.([]any)
			return err == nil && len(a) > 0 && a[0] == "master"
		}, 10*time.Second, 5*time.Millisecond, "the chosen replica %s never became a master", f[1])
	} else {
		t.Logf("no replica named in %q: restarting without waiting for it", ev.Payload)
	}
	d.Node(old).Restart(t) // empty, a master, for ~10s in its own eyes
	restarted := time.Now()
	switched, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	// Still a master in its own eyes (Sentinel demotes it later, and then
	// it runs the new master's writes as a replica): it ran none of ours.
	// The sentinels' demotion closes its connections (CLIENT KILL), the
	// harness's among them: a read cut that way is made again. The count
	// is kept only if ROLE, read after it, still says master.
	var stats, role any
	require.Eventually(t, func() bool {
		var serr, rerr error
		stats, serr = d.Node(old).Do(ctx, "INFO", "commandstats")
		role, rerr = d.Node(old).Do(ctx, "ROLE")
		return serr == nil && rerr == nil
	}, 10*time.Second, 10*time.Millisecond, "INFO and ROLE of the restarted old master")
	if r, _ := role.([]any); len(r) > 0 && r[0] == "master" {
		assert.NotContains(t, fmt.Sprint(stats), "cmdstat_incrby", "the restarted old master ran no INCRBY")
	}
	waitAcked(ctx, t, &total, 5000) // on the new master
	close(stop)
	wg.Wait()
	timeline(t, d, t0, map[string]time.Time{"old master restarted": restarted, "switched": switched})
	role, err = d.Node(old).Do(ctx, "ROLE")
	require.NoError(t, err)
	t.Logf("the old master's ROLE after the test: %v", role)

	// The client may switch before the sentinels do (at the promotion):
	// the counters are read where the failover's +switch-master says.
	sw, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName+" ")
	require.NoError(t, err)
	f := strings.Fields(sw.Payload)
	require.Len(t, f, 5, "+switch-master %q", sw.Payload)
	newAddr := net.JoinHostPort(f[3], f[4])
	if again := secondFailover(d, t0, newAddr); again != "" {
		// The sentinels failed the new master over too (on a loaded
		// host, one that did not answer them within down-after-
		// milliseconds): the replica they promoted then may not have
		// had its writes, which no client can keep. What the count
		// checks is the client's part in one failover, so it stops here,
		// once the client follows.
		require.Eventually(t, func() bool { return c.SentinelMaster() == again }, 30*time.Second, 10*time.Millisecond,
			"the client follows the second failover to %s", again)
		t.Logf("the sentinels failed %s over again, to %s: not counted", newAddr, again)
		return
	}
	assert.Equal(t, newAddr, c.SentinelMaster())
	master := d.Node(newAddr)
	require.NotNil(t, master, "the new master %s", newAddr)
	var acked, unknown int
	for g, k := range counters {
		got, err := master.Do(ctx, "GET", fmt.Sprintf("sum:%d", g))
		require.NoError(t, err)
		final, _ := strconv.ParseInt(fmt.Sprint(got), 10, 64)
		var sum int64
		for _, n := range k.acked {
			sum += n
		}
		acked += len(k.acked)
		unknown += len(k.unknown)
		assert.True(t, subsetSum(k.unknown, final-sum), "goroutine %d: final %d = acknowledged %d + no subset of the outcome-unknown %v", g, final, sum, k.unknown)
	}
	t.Logf("%d increments acknowledged, %d outcome unknown", acked, unknown)
}

// secondFailover returns the master of a failover after the one to first
// that a sentinel announced since t0 (+switch-master from first), or "".
func secondFailover(d *harness.Sentinels, t0 time.Time, first string) string {
	for _, e := range d.Events.Since(t0) {
		f := strings.Fields(e.Payload)
		if e.Channel == "+switch-master" && len(f) == 5 && f[0] == d.Config.MasterName && net.JoinHostPort(f[1], f[2]) == first {
			return net.JoinHostPort(f[3], f[4])
		}
	}
	return ""
}

// subsetSum reports whether some subset of xs (a few) sums to want.
func subsetSum(xs []int64, want int64) bool {
	sums := map[int64]bool{0: true}
	for _, x := range xs {
		for _, s := range keysOf(sums) {
			sums[s+x] = true
		}
	}
	return sums[want]
}

func keysOf(m map[int64]bool) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// testSentinelFirstGone kills or stops the sentinel the client first asked,
// then fails the master: the client hears of it from the others.
func testSentinelFirstGone(t *testing.T, d *harness.Sentinels, pause bool) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	first := d.Sentinel[0]
	if pause {
		require.NoError(t, first.Pause())
	} else {
		first.Kill()
	}
	t0 := time.Now()
	d.Node(old).Kill()
	switched, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	ev, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
	require.NoError(t, err)
	require.NoError(t, c.Set(ctx, "first-gone", "x", nil))
	timeline(t, d, t0, map[string]time.Time{"switched": switched})
	t.Logf("client switched %v after the kill, %v after +switch-master", switched.Sub(t0), switched.Sub(ev.At))
	// A client stuck on the sentinel it lost (a stopped one accepts
	// connections and never answers) would switch late or never; the
	// others announce the switch at once.
	assert.LessOrEqual(t, switched.Sub(ev.At), d.Config.DownAfter+resumeBound)
	_ = first.Resume()
}

func testSentinelPubSubBLPop(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	sub, err := c.Subscribe(ctx, "news")
	require.NoError(t, err)
	defer sub.Close()
	popped, got := blockedPop(ctx, t, c, d.Node(old), 20*time.Second, "queue")
	t0 := time.Now()
	require.NoError(t, d.Failover(ctx))
	switched, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	// Pub/sub: a gap, then messages published on the new master.
	var gapAt, msgAt time.Time
	var received atomic.Bool
	pub := make(chan struct{})
	go func() {
		defer close(pub)
		for i := 0; ctx.Err() == nil && !received.Load(); i++ {
			_, _ = c.Publish(ctx, "news", "after-"+strconv.Itoa(i))
			select {
			case <-time.After(20 * time.Millisecond):
			case <-ctx.Done():
			}
		}
	}()
	for msgAt.IsZero() {
		m, err := sub.Next(ctx)
		require.NoError(t, err)
		if m.Gap != nil {
			assert.Equal(t, respire.GapDisconnect, m.Gap.Reason)
			gapAt = time.Now()
			continue
		}
		require.True(t, strings.HasPrefix(m.Payload, "after-"), "message %q", m.Payload)
		msgAt = time.Now()
		received.Store(true)
	}
	<-pub
	assert.False(t, gapAt.IsZero(), "a gap marker before the first message from the new master")
	// BLPOP: pushed on the new master, popped by the blocked caller.
	_, err = c.Do(ctx, "LPUSH", "queue", "item")
	require.NoError(t, err)
	select {
	case err := <-popped:
		require.NoError(t, err)
		assert.Equal(t, respire.KeyElement{Key: "queue", Element: "item"}, *got)
	case <-time.After(15 * time.Second):
		t.Fatal("BLPOP did not follow the switch")
	}
	timeline(t, d, t0, map[string]time.Time{"switched": switched, "pub/sub gap": gapAt, "first message": msgAt, "BLPOP returned": time.Now()})
}

// blockedPop starts a BLPOP of key through c and returns once master
// counts it blocked; popped gets its error, and then got holds its reply.
func blockedPop(ctx context.Context, t *testing.T, c *respire.Client, master *harness.Server, timeout time.Duration, key string) (popped chan error, got *respire.KeyElement) {
	popped, got = make(chan error, 1), new(respire.KeyElement)
	go func() {
		var err error
		*got, err = c.BLPop(ctx, timeout, key)
		popped <- err
	}()
	require.Eventually(t, func() bool {
		v, err := master.Do(ctx, "INFO", "clients")
		return err == nil && strings.Contains(fmt.Sprint(v), "blocked_clients:1")
	}, 5*time.Second, 5*time.Millisecond, "BLPOP %s blocks on %s", key, master.Addr)
	return popped, got
}

// testSentinelBLPopStalledMaster: a BLPOP blocked on the master follows a
// failover although the old master answers nobody for 3 s from the start
// of it (SIGSTOP). The client releases the blocked caller there with
// CLIENT UNBLOCK ... ERROR once it switched, and asks again while the old
// master does not answer: it gave up after one second, and the caller
// then waited for the sentinels to demote the old master, which closed
// its connection (EOF, outcome unknown).
func testSentinelBLPopStalledMaster(t *testing.T, d *harness.Sentinels) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	popped, got := blockedPop(ctx, t, c, d.Node(old), 2*time.Minute, "stalled-queue")
	for attempt := 1; ; attempt++ {
		t0 := time.Now()
		require.NoError(t, d.Failover(ctx))
		require.NoError(t, d.Node(old).Pause())
		resumed := time.AfterFunc(3*time.Second, func() { _ = d.Node(old).Resume() })
		t.Cleanup(func() { resumed.Stop(); _ = d.Node(old).Resume() })
		wctx, wcancel := context.WithTimeout(ctx, 20*time.Second)
		_, err := waitSwitch(wctx, c, old)
		wcancel()
		if err == nil {
			break
		}
		// On a loaded host a sentinel that had not yet heard of the
		// failover may turn the promoted replica back into a replica of
		// the stalled master, and the failover times out: the
		// sentinels' doing, not the client's. Once more, when whole.
		aborted := slices.ContainsFunc(d.Events.Since(t0), func(e harness.SentinelEvent) bool {
			return strings.HasPrefix(e.Channel, "-failover-abort")
		})
		require.True(t, aborted, "no switch and no aborted failover: %v", err)
		require.Less(t, attempt, 3, "the sentinels aborted the failover %d times", attempt)
		t.Logf("the sentinels aborted the failover: again")
		resumed.Stop()
		require.NoError(t, d.Node(old).Resume())
		require.NoError(t, d.WaitStable(ctx))
	}
	_, err := c.Do(ctx, "LPUSH", "stalled-queue", "item")
	require.NoError(t, err)
	select {
	case err := <-popped:
		require.NoError(t, err)
		assert.Equal(t, respire.KeyElement{Key: "stalled-queue", Element: "item"}, *got)
	case <-time.After(20 * time.Second):
		t.Fatal("BLPOP did not follow the switch")
	}
}

func testSentinelReplicaRestart(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	o := sentinelOpts(d)
	o.ReadFrom = respire.ReadReplica
	o.RetryReads = 1
	c := connect(t, o)
	master := c.SentinelMaster()
	for i := range 100 {
		require.NoError(t, c.Set(ctx, "rr:"+strconv.Itoa(i), "v"+strconv.Itoa(i), nil))
	}
	require.NoError(t, d.WaitReplicated(ctx, master))
	// Reads reach replicas once the client knows them.
	require.Eventually(t, func() bool {
		_, err := c.Get(ctx, "rr:0")
		return err == nil
	}, 5*time.Second, 10*time.Millisecond)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	reads, failures := 0, 0
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := (g*7 + n) % 100
				// Reads do not wait for the replica that restarts (they go
				// to the other nodes while its connection is down), but a
				// read sent to it just before its shutdown waits until the
				// process exits, which on a loaded host took over 1s.
				rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				v, err := c.Get(rctx, "rr:"+strconv.Itoa(i))
				cancel()
				mu.Lock()
				reads++
				if err != nil {
					failures++
					t.Errorf("read during the restart: %v", err)
				} else if v != "v"+strconv.Itoa(i) {
					t.Errorf("read %q for rr:%d", v, i)
				}
				mu.Unlock()
			}
		}()
	}
	rep := d.Replicas(master)[0]
	d.RestartAsReplica(t, rep, master)
	// Reads go on until the restarted replica is in sync again.
	require.Eventually(t, func() bool {
		v, err := rep.Do(ctx, "ROLE")
		r, _ := v.([]any)
		return err == nil && len(r) > 3 && r[3] == "connected"
	}, 20*time.Second, 10*time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("%d replica reads during the restart of %s, %d failed", reads, rep.Addr, failures)
}

// testSentinelHungMaster: the master hangs (SIGSTOP) under load with a
// BLPOP blocked on it. The sentinels fail it over, and writes succeed on
// the new master within 500ms of +switch-master although the old master
// answers nothing: ending the BLPOP there (CLIENT UNBLOCK, which waits on
// the hung master) must hold up neither the switch nor the writes. Once
// the old master continues and is demoted, the BLPOP follows the switch.
func testSentinelHungMaster(t *testing.T, d *harness.Sentinels) {
	ctx := ctxT(t)
	c := connect(t, sentinelOpts(d))
	old := c.SentinelMaster()
	popped, got := blockedPop(ctx, t, c, d.Node(old), 60*time.Second, "hung:queue")
	stop := make(chan struct{})
	var acked atomic.Int64
	wait := setGetLoad(t, c, "hung", time.Second, true, stop, &acked)
	waitAcked(ctx, t, &acked, 1000)
	t0 := time.Now()
	require.NoError(t, d.PauseData(d.Node(old)))
	switched, err := waitSwitch(ctx, c, old)
	require.NoError(t, err)
	ev, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
	require.NoError(t, err)
	waitAcked(ctx, t, &acked, 2000) // load on the new master
	close(stop)
	ops := wait()
	resumed, failed := recovery(t, ops, switched)
	t.Logf("%d writes, %d failed; switched %v after the pause, writes resumed %v after it, %v after +switch-master",
		len(ops), failed, switched.Sub(t0), resumed.Sub(t0), resumed.Sub(ev.At))
	logFailedOps(t, ops, t0)
	assert.LessOrEqual(t, resumed.Sub(ev.At), resumeBound, "writes resume soon after +switch-master")

	// The old master continues and is made a replica (WaitStable): its
	// blocked clients are unblocked (UNBLOCKED: not run), and the BLPOP is
	// sent again to the new master.
	require.NoError(t, d.WaitStable(ctx))
	_, err = c.Do(ctx, "LPUSH", "hung:queue", "item")
	require.NoError(t, err)
	select {
	case err := <-popped:
		require.NoError(t, err)
		assert.Equal(t, respire.KeyElement{Key: "hung:queue", Element: "item"}, *got)
	case <-time.After(30 * time.Second):
		t.Fatal("BLPOP did not follow the switch")
	}
}
