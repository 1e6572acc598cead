package integration

import (
	"context"
	"errors"
	"fmt"
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

// clusterLoad runs workers that each own a hash tag (so their keys spread
// over the shards) and loop: an atomic INCRBY of a unique amount logged in
// a list (incrLog), a SET of a sequence number and a GET that must return
// it. Every call has its own deadline. It records what the invariants need.
type clusterLoad struct {
	c        *respire.Client
	workers  int
	deadline time.Duration
	prefix   string // after the tag: a fresh key set per load
	// lossy: the fault may lose acknowledged writes on the server (a
	// TAKEOVER, which asks no master's agreement): such losses, and the
	// stale reads they cause, are counted, not failed.
	lossy bool
	stale atomic.Int64
	lost  int

	ok, failed, corrupt, late, clusterDown atomic.Int64
	maxOver                                atomic.Int64 // the most a call returned after its deadline, in ns
	mu                                     sync.Mutex
	outcome                                []map[int64]string // per worker: amount -> acked/unknown/notsent
	writes                                 [][]time.Time      // per worker: completion times of successful writes
	firstErr                               map[string]int
	failures                               []failure
}

// failure is a failed call: its worker, when its iteration started and
// when it failed.
type failure struct {
	w          int
	start, end time.Time
}

// failuresAfter returns the calls by workers whose slot is in slots that
// failed though their iteration started after t, and the end of the
// latest failure of such a worker's call.
func (l *clusterLoad) failuresAfter(t time.Time, slots map[int]bool) (n int, lastEnd time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, f := range l.failures {
		if !slots[harness.SlotOf(workerTag(f.w))] {
			continue
		}
		if f.start.After(t) {
			n++
		}
		if f.end.After(lastEnd) {
			lastEnd = f.end
		}
	}
	return n, lastEnd
}

var loadRuns atomic.Int64

func newClusterLoad(c *respire.Client, workers int, deadline time.Duration) *clusterLoad {
	l := &clusterLoad{c: c, workers: workers, deadline: deadline, firstErr: map[string]int{},
		prefix: fmt.Sprintf("r%d:", loadRuns.Add(1))}
	l.outcome = make([]map[int64]string, workers)
	l.writes = make([][]time.Time, workers)
	for i := range l.outcome {
		l.outcome[i] = map[int64]string{}
	}
	return l
}

func workerTag(i int) string { return fmt.Sprintf("{w%d}", i) }

// run loops until stop is closed.
func (l *clusterLoad) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			tag := workerTag(w) + l.prefix
			keys := []string{tag + "sum", tag + "log"}
			for seq := int64(1); ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				amt := int64(w)<<32 | seq
				cctx, cancel := context.WithTimeout(ctx, l.deadline)
				start := time.Now()
				_, err := l.c.Eval(cctx, incrLog, keys, fmt.Sprint(amt))
				l.note(w, amt, err, start)
				if err == nil {
					err = l.c.Set(cctx, tag+"val", fmt.Sprint(seq), nil)
					l.count(w, err, start)
				}
				if err == nil {
					var v string
					v, err = l.c.Get(cctx, tag+"val")
					if err == nil && v != fmt.Sprint(seq) {
						if old, perr := strconv.ParseInt(v, 10, 64); l.lossy && perr == nil && old >= 1 && old < seq {
							// This worker's own older value: the SETs after it
							// were acknowledged by the old master and lost.
							l.stale.Add(1)
						} else {
							l.corrupt.Add(1)
							l.mu.Lock()
							l.firstErr[fmt.Sprintf("CORRUPT worker %d slot %d: set %d got %q", w, harness.SlotOf(tag), seq, v)]++
							l.mu.Unlock()
						}
					}
					l.count(w, err, start)
				}
				cancel()
			}
		}()
	}
	wg.Wait()
}

// lateSlack is how long after its deadline a call may return before it
// counts as late. Under -race on two shared cores a goroutine woken by its
// timer can wait for a CPU (seen: a few dozen calls over 50 ms at a load
// average of 7-11, 29 over 200 ms and the latest 284 ms at 15); a call the
// client holds wrongly waits for a stall or fetch timeout, a second or
// more.
const lateSlack = 500 * time.Millisecond

func (l *clusterLoad) count(w int, err error, start time.Time) {
	over := time.Since(start) - l.deadline
	if over > lateSlack {
		l.late.Add(1)
	}
	for {
		m := l.maxOver.Load()
		if int64(over) <= m || l.maxOver.CompareAndSwap(m, int64(over)) {
			break
		}
	}
	if err == nil {
		l.ok.Add(1)
		return
	}
	l.failed.Add(1)
	l.mu.Lock()
	l.failures = append(l.failures, failure{w: w, start: start, end: time.Now()})
	l.mu.Unlock()
	var se *respire.Error
	if errors.As(err, &se) && !errors.Is(err, context.DeadlineExceeded) &&
		(se.Prefix == "CLUSTERDOWN" || se.Prefix == "TRYAGAIN" || se.Prefix == "MOVED" || se.Prefix == "ASK") {
		l.clusterDown.Add(1)
	}
	l.mu.Lock()
	msg := err.Error()
	if len(msg) > 90 {
		msg = msg[:90]
	}
	l.firstErr[msg]++
	l.mu.Unlock()
}

func (l *clusterLoad) note(w int, amt int64, err error, start time.Time) {
	l.count(w, err, start)
	o := "acked"
	switch {
	case err == nil:
	case errors.Is(err, respire.ErrNotSent):
		o = "notsent"
	default:
		o = "unknown"
	}
	l.mu.Lock()
	l.outcome[w][amt] = o
	if err == nil {
		l.writes[w] = append(l.writes[w], time.Now())
	}
	l.mu.Unlock()
}

// firstWriteAfter is the earliest successful write after t by a worker
// whose slot is in slots.
func (l *clusterLoad) firstWriteAfter(t time.Time, slots map[int]bool) time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	var best time.Time
	for w, ws := range l.writes {
		if !slots[harness.SlotOf(workerTag(w))] {
			continue
		}
		for _, at := range ws {
			if at.After(t) && (best.IsZero() || at.Before(best)) {
				best = at
			}
		}
	}
	return best
}

// verify checks the exactly-once accounting against the server's logs.
func (l *clusterLoad) verify(t *testing.T, ctx context.Context) (acked, unknown, notSent int) {
	t.Helper()
	for w := range l.workers {
		tag := workerTag(w) + l.prefix
		applied, err := l.c.LRange(ctx, tag+"log", 0, -1)
		require.NoError(t, err)
		seen := map[int64]int{}
		for _, s := range applied {
			var a int64
			fmt.Sscan(s, &a)
			seen[a]++
		}
		for amt, o := range l.outcome[w] {
			n := seen[amt]
			if n > 1 {
				t.Errorf("worker %d: amount %d applied %d times", w, amt, n)
			}
			switch o {
			case "acked":
				acked++
				if n == 0 && l.lossy {
					l.lost++
				} else if n != 1 {
					t.Errorf("worker %d: acknowledged amount %d applied %d times", w, amt, n)
				}
			case "notsent":
				notSent++
				if n != 0 {
					t.Errorf("worker %d: amount %d applied though not sent", w, amt)
				}
			default:
				unknown++
			}
		}
		for amt := range seen {
			if _, ok := l.outcome[w][amt]; !ok {
				t.Errorf("worker %d: amount %d applied, never sent", w, amt)
			}
		}
	}
	return
}

func (l *clusterLoad) report(t *testing.T, name string) {
	t.Logf("%s: ok %d, errors %d, corrupt %d, past deadline (by more than %v) %d, most past its deadline %v, cluster errors passed on %d, stale reads after server-side loss %d", name,
		l.ok.Load(), l.failed.Load(), l.corrupt.Load(), lateSlack, l.late.Load(), time.Duration(max(l.maxOver.Load(), 0)).Round(time.Millisecond), l.clusterDown.Load(), l.stale.Load())
	l.mu.Lock()
	defer l.mu.Unlock()
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range l.firstErr {
		top = append(top, kv{k, n})
	}
	slices.SortFunc(top, func(a, b kv) int { return b.n - a.n })
	for i, e := range top {
		if i == 5 && !strings.HasPrefix(e.k, "CORRUPT") {
			continue
		}
		t.Logf("  %5d x %s", e.n, e.k)
	}
	assert.Zero(t, l.corrupt.Load(), "corrupted or misattributed replies")
	assert.Zero(t, l.late.Load(), "calls past their deadline")
}

// slotsOf returns the slots a master serves, from one CLUSTER SLOTS (the
// harness's MasterOf asks every node, once per slot).
func slotsOf(t *testing.T, hc *harness.Cluster, m *harness.ClusterNode) map[int]bool {
	t.Helper()
	reply, err := m.Do(context.Background(), "CLUSTER", "SLOTS")
	require.NoError(t, err)
	out := map[int]bool{}
	for _, r := range reply.([]any) {
		e := r.([]any)
		owner := e[2].([]any)
		if fmt.Sprint(owner[2]) != m.ID {
			continue
		}
		lo, hi := e[0].(int64), e[1].(int64)
		for s := lo; s <= hi; s++ {
			out[int(s)] = true
		}
	}
	return out
}

// waitPromoted polls replica's ROLE until it is a master, then a write on
// it (to a key of a slot it serves) until one succeeds, and returns when
// each was first seen.
func waitPromoted(t *testing.T, ctx context.Context, replica *harness.ClusterNode, key string) (promoted, writable time.Time) {
	t.Helper()
	for {
		if promoted.IsZero() {
			v, err := replica.Do(ctx, "ROLE")
			if err == nil && strings.HasPrefix(fmt.Sprint(v), "[master") {
				promoted = time.Now()
			}
		}
		if !promoted.IsZero() {
			if _, err := replica.Do(ctx, "SET", key, "probe"); err == nil {
				return promoted, time.Now()
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s was not promoted and writable: %v", replica.Addr, ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// TestClusterMasterFailure: 64 callers with verified values and unique
// INCRBY amounts, a master killed (kill -9) or stopped (SIGSTOP) under
// load: no corrupted reply, no call past its deadline, no write applied
// twice, no CLUSTERDOWN passed on, and the shard takes writes again soon
// after its replica's promotion.
func TestClusterMasterFailure(t *testing.T) {
	for _, fault := range []string{"kill", "stop"} {
		t.Run(fault, func(t *testing.T) {
			hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis70, NodeTimeout: 2 * time.Second})
			ctx := ctxT(t)
			c := clusterClient(t, hc, respire.Options{RetryReads: 2})
			victim := hc.MasterOf(harness.SlotOf(workerTag(0)))
			replica := hc.ReplicasOf(victim)[0]
			slots := slotsOf(t, hc, victim)

			l := newClusterLoad(c, 64, time.Second)
			// Replication is asynchronous: a primary killed or stopped may
			// have acknowledged writes its replica never got. Those losses
			// are the server's, counted apart; a duplicate, a write applied
			// though "not sent", or another key's value still fails.
			l.lossy = true
			stop := make(chan struct{})
			done := make(chan struct{})
			go func() { defer close(done); l.run(ctx, stop) }()
			require.Eventually(t, func() bool { return l.ok.Load() > 2000 }, 10*time.Second, time.Millisecond)

			fetchesBefore := fetchesBut(hc, victim)
			faultAt := time.Now()
			t.Logf("fault at %v on %s (slot of w0 %d)", faultAt.Format("15:04:05.000"), victim.Addr, harness.SlotOf(workerTag(0)))
			if fault == "kill" {
				hc.Kill(victim)
			} else {
				require.NoError(t, hc.Pause(victim))
			}
			pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			promoted, writable := waitPromoted(t, pctx, replica, workerTag(0)+"probe")
			cancel()
			require.Eventually(t, func() bool { return !l.firstWriteAfter(writable, slots).IsZero() }, 5*time.Second, time.Millisecond,
				"writes to the failed shard never came back")
			back := l.firstWriteAfter(writable, slots)
			// Keep the load on a little longer, then stop.
			require.Eventually(t, func() bool { return time.Since(back) > time.Second }, 5*time.Second, 10*time.Millisecond)
			close(stop)
			<-done
			fetched, watched := fetchesBut(hc, victim)-fetchesBefore, time.Since(faultAt)
			if fault == "stop" {
				require.NoError(t, hc.Resume(victim))
			}
			l.report(t, fault)
			acked, unknown, notSent := l.verify(t, ctx)
			t.Logf("%s: timeline: fault at 0, promotion (ROLE) at %v, the new master takes writes at %v, the client's writes back at %v (%v after); writes acked %d (lost by the server %d), unknown %d, not sent %d; topology fetches %d",
				fault, promoted.Sub(faultAt).Round(time.Millisecond), writable.Sub(faultAt).Round(time.Millisecond),
				back.Sub(faultAt).Round(time.Millisecond), back.Sub(writable).Round(time.Millisecond),
				acked, l.lost, unknown, notSent, topologyFetches(t, hc))
			assert.Zero(t, l.clusterDown.Load(), "CLUSTERDOWN/TRYAGAIN/MOVED/ASK passed on to callers")
			// Callers follow the new master: a call on the shard's slots
			// that starts once it takes writes succeeds (it has a second;
			// the client needs one topology fetch), however long the dial
			// backoff to the dead node or the wait on the stopped one.
			late, lastEnd := l.failuresAfter(writable, slots)
			t.Logf("%s: calls on the failed shard that failed though started after the new master took writes: %d; the last failure on it ended %v after the promotion",
				fault, late, lastEnd.Sub(promoted).Round(time.Millisecond))
			assert.Zero(t, late, "calls started after the new master took writes failed")
			assert.Less(t, back.Sub(writable), time.Second, "writes back within a second of the new master taking writes")
			// While callers find the primary failing, its replica is asked
			// for its ROLE, not the cluster for its topology: a fetch per
			// RefreshGap (2s) at most as a backstop, the one that finds
			// the promotion, and none for the callers still stuck on the
			// old primary once its slots moved.
			t.Logf("%s: %d topology fetches from the fault to the end of the load (%v)", fault, fetched, watched.Round(time.Millisecond))
			assert.LessOrEqual(t, fetched, 3+int(watched/(2*time.Second)), "topology fetches")
		})
	}
}

// fetchesBut counts the CLUSTER SHARDS the nodes of hc but skip served.
func fetchesBut(hc *harness.Cluster, skip *harness.ClusterNode) int {
	total := 0
	for _, n := range hc.Nodes {
		if n == skip {
			continue
		}
		info, err := n.Do(context.Background(), "INFO", "commandstats")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(fmt.Sprint(info), "\n") {
			if rest, ok := strings.CutPrefix(line, "cmdstat_cluster|shards:calls="); ok {
				n, _ := strconv.Atoi(strings.Split(rest, ",")[0])
				total += n
			}
		}
	}
	return total
}

// TestClusterClientKill: every master drops all its client connections
// (CLIENT KILL TYPE normal), again and again, under load: writes whose
// outcome the client cannot know are never resent, so the INCRBY totals
// are the acknowledged sums plus a subset of the outcome-unknown ones,
// with no duplicate, no corrupted or misattributed reply, no call past its
// deadline.
func TestClusterClientKill(t *testing.T) {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Valkey81, Replicas: -1})
	ctx := ctxT(t)
	c := clusterClient(t, hc, respire.Options{RetryReads: 2})
	l := newClusterLoad(c, 64, time.Second)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { defer close(done); l.run(ctx, stop) }()
	require.Eventually(t, func() bool { return l.ok.Load() > 2000 }, 10*time.Second, time.Millisecond)
	kills := 0
	for round := range 10 {
		for _, m := range hc.Masters() {
			v, err := m.Do(ctx, "CLIENT", "KILL", "TYPE", "normal")
			require.NoError(t, err)
			n, _ := v.(int64)
			kills += int(n)
		}
		// Let the client reconnect and load the connections again.
		before := l.ok.Load()
		require.Eventually(t, func() bool { return l.ok.Load() > before+500 }, 10*time.Second, time.Millisecond,
			"no progress after kill round %d", round)
	}
	close(stop)
	<-done
	l.report(t, "client kill")
	acked, unknown, notSent := l.verify(t, ctx)
	t.Logf("client kill: %d connections killed in 10 rounds; writes acked %d, unknown %d, not sent %d", kills, acked, unknown, notSent)
	assert.Positive(t, kills)
	assert.Zero(t, l.clusterDown.Load(), "CLUSTERDOWN/TRYAGAIN/MOVED/ASK passed on to callers")
}
