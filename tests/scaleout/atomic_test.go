package scaleout

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

// atomicFlavors are the flavors with atomic slot migration.
var atomicFlavors = []harness.Flavor{harness.Valkey91, harness.Redis86}

// atomicIncrLog adds a unique amount to a counter and logs it in a list,
// in one step, so that the log says exactly which writes were applied.
const atomicIncrLog = `redis.call("INCRBY", KEYS[1], ARGV[1]) return redis.call("RPUSH", KEYS[2], ARGV[1])`

// TestAtomicMigrationUnderLoad: 32 goroutines write (a unique INCRBY
// amount logged by RPUSH, per call), 4 run transactions and 2 batches,
// while 1,024 slots, which hold most of their keys and some 1,200 others,
// move atomically to another primary and back, for two seconds and twice
// at least. No caller sees an error, every acknowledged write is applied
// exactly once and none twice, transactions stay all-or-nothing, and the
// client neither fetches the topology nor is redirected anywhere near once
// per slot or per call.
func TestAtomicMigrationUnderLoad(t *testing.T) {
	for _, f := range atomicFlavors {
		t.Run(string(f), func(t *testing.T) {
			hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: f, Replicas: -1})
			ctx := ctxT(t)
			c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			from := hc.MasterOf(0)
			require.NotNil(t, from)
			to := otherMaster(t, hc, from)
			const nslots = 1024
			slots := make([]int, nslots)
			for i := range slots {
				slots[i] = i
			}
			moving := func(s int) bool { return s < nslots }
			require.NoError(t, hc.Fill(ctx, "afill:", 20_000, strings.Repeat("v", 256)))

			l := newAtomicLoad(c, 32, 4, moving)
			stop := make(chan struct{})
			var wg sync.WaitGroup
			stopLoad := sync.OnceFunc(func() { close(stop); wg.Wait() })
			t.Cleanup(stopLoad) // before the client closes, should the test end early
			wg.Add(3)
			go func() { defer wg.Done(); l.run(ctx, stop) }()
			go func() { defer wg.Done(); l.runTx(ctx, stop, 4) }()
			const batchWorkers = 2
			go func() { defer wg.Done(); l.runBatches(ctx, stop, batchWorkers) }()
			require.Eventually(t, func() bool { return l.ok.Load() >= 500 }, 10*time.Second, time.Millisecond)

			// There and back until the load has seen two seconds of
			// migrations, twice at least.
			before := serverCounters(t, hc)
			began := time.Now()
			var took []time.Duration
			rounds := 0
			for ; rounds < 2 || time.Since(began) < 2*time.Second; rounds++ {
				for _, mv := range [][2]*harness.ClusterNode{{from, to}, {to, from}} {
					t0 := time.Now()
					require.NoError(t, hc.MigrateSlotsAtomic(ctx, mv[0], mv[1], slots))
					took = append(took, time.Since(t0).Round(time.Millisecond))
				}
			}
			dur := time.Since(began)
			after := serverCounters(t, hc)
			stopLoad()

			acked, unknown, notSent := l.verify(t, ctx)
			d := after.sub(before)
			t.Logf("%s: %d migrations of %d slots in %v (each %v); writes ok %d (slowest %v), transactions %d, batches %d, errors %d; writes acked %d, outcome unknown %d, not sent %d; topology fetches %d, MOVED %d, ASK %d, TRYAGAIN %d",
				f, 2*rounds, nslots, dur.Round(time.Millisecond), took, l.ok.Load(), time.Duration(l.slowest.Load()).Round(time.Millisecond), l.txOK.Load(), l.batchOK.Load(), l.failed.Load(),
				acked, unknown, notSent, d.fetches, d.moved, d.ask, d.tryAgain)
			l.logErrors(t)
			assert.Zero(t, l.failed.Load(), "errors returned to callers")
			assert.Positive(t, acked)
			assert.Positive(t, l.txOK.Load())
			assert.Positive(t, l.batchOK.Load())
			// A storm is a fetch or a redirect per slot or per call: thousands
			// of slot moves here, and hundreds of calls per migration. The
			// client patches its map from each MOVED and refreshes at most
			// once per 2 s (RefreshGap), asking a second node to confirm.
			assert.LessOrEqual(t, d.fetches, 2*int(dur.Seconds())+4, "topology fetches")
			// At most one redirect per caller and moved key and migration:
			// each worker's keys, every key in each batch worker's batches,
			// each transaction worker's keys for its MULTI and its MGET.
			// Half as much again for a refresh that raced a handoff.
			perMigration := l.keysMoving()*(1+batchWorkers) + 2*len(l.txTags)
			assert.LessOrEqual(t, d.moved+d.ask, 2*rounds*perMigration*3/2, "redirects")
		})
	}
}

// TestAtomicMigrationBounce: one goroutine INCRs a key while its slot moves
// atomically to another primary and back, ten times over. No call fails,
// every acknowledged INCR counts, and each move costs the client about one
// redirect, not a loop.
func TestAtomicMigrationBounce(t *testing.T) {
	for _, f := range atomicFlavors {
		t.Run(string(f), func(t *testing.T) {
			hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: f, Replicas: -1})
			ctx := ctxT(t)
			c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
			const key = "bounce:{b}"
			slot := harness.SlotOf(key)
			a := hc.MasterOf(slot)
			require.NotNil(t, a)
			b := otherMaster(t, hc, a)

			var ok, failed atomic.Int64
			var mu sync.Mutex
			var errs []error
			var last atomic.Int64
			stop := make(chan struct{})
			done := make(chan struct{})
			stopLoad := sync.OnceFunc(func() { close(stop); <-done })
			t.Cleanup(stopLoad) // before the client closes, should the test end early
			go func() {
				defer close(done)
				for {
					select {
					case <-stop:
						return
					default:
					}
					cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
					n, err := c.Incr(cctx, key)
					cancel()
					if err != nil {
						failed.Add(1)
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
						continue
					}
					ok.Add(1)
					last.Store(n)
				}
			}()
			require.Eventually(t, func() bool { return ok.Load() >= 100 }, 10*time.Second, time.Millisecond)

			before := serverCounters(t, hc)
			began := time.Now()
			const moves = 12
			for i := range moves {
				src, dst := a, b
				if i%2 == 1 {
					src, dst = b, a
				}
				atMove := ok.Load()
				require.NoError(t, hc.MigrateSlotsAtomic(ctx, src, dst, []int{slot}))
				// Let the key be written on its new owner before it moves
				// again, so that every move meets the load.
				require.Eventually(t, func() bool { return ok.Load() >= atMove+20 }, 10*time.Second, time.Millisecond)
			}
			dur := time.Since(began)
			after := serverCounters(t, hc)
			stopLoad()

			d := after.sub(before)
			v, err := c.Get(ctx, key)
			require.NoError(t, err)
			final, _ := strconv.ParseInt(v, 10, 64)
			t.Logf("%s: %d moves of slot %d in %v; INCRs ok %d, errors %d, final value %d; topology fetches %d, MOVED %d, ASK %d, TRYAGAIN %d",
				f, moves, slot, dur.Round(time.Millisecond), ok.Load(), failed.Load(), final, d.fetches, d.moved, d.ask, d.tryAgain)
			for i, err := range errs {
				if i < 5 {
					t.Logf("  error: %v", err)
				}
			}
			assert.Zero(t, failed.Load(), "errors returned to the caller")
			// Every INCR succeeded, so the counter is exactly their number,
			// and the last reply was the final value.
			assert.Equal(t, ok.Load(), final, "INCRs applied")
			assert.Equal(t, last.Load(), final)
			// About one MOVED per move for the one caller (the first
			// command after the handoff), and no refresh per move.
			assert.LessOrEqual(t, d.moved+d.ask, 3*moves, "redirects")
			assert.LessOrEqual(t, d.fetches, 2*int(dur.Seconds())+4, "topology fetches")
		})
	}
}

// otherMaster returns a master of hc other than m.
func otherMaster(t *testing.T, hc *harness.Cluster, m *harness.ClusterNode) *harness.ClusterNode {
	t.Helper()
	for _, o := range hc.Masters() {
		if o != m {
			return o
		}
	}
	t.Fatal("the cluster has a single master")
	return nil
}

// atomicLoad runs workers that each write a few keys, most of them in
// slots that move: an INCRBY of a unique amount, logged in a list
// (atomicIncrLog). It records each amount's outcome for verify.
type atomicLoad struct {
	c       *respire.Client
	workers int
	keys    [][]string // per worker: the hash tags of its keys
	moving  func(slot int) bool

	ok, failed      atomic.Int64
	txOK, batchOK   atomic.Int64
	slowest         atomic.Int64 // the longest write, in ns
	mu              sync.Mutex
	outcome         []map[int64]string // per worker: amount -> acked, unknown, notsent
	errs            map[string]int
	txTags          []string         // the hash tags of runTx's workers
	txAcked, txUnkn map[string]int64 // per tag: transactions acknowledged, of unknown outcome
}

func newAtomicLoad(c *respire.Client, workers, keysEach int, moving func(int) bool) *atomicLoad {
	l := &atomicLoad{c: c, workers: workers, moving: moving, errs: map[string]int{}}
	l.outcome = make([]map[int64]string, workers)
	l.keys = make([][]string, workers)
	n := 0
	for w := range workers {
		l.outcome[w] = map[int64]string{}
		// All but the last key of each worker in a moving slot, the last
		// one anywhere: moves must not disturb the other slots either.
		for j := range keysEach {
			for {
				n++
				tag := fmt.Sprintf("{at%d}", n)
				if j == keysEach-1 || moving(harness.SlotOf(tag)) {
					l.keys[w] = append(l.keys[w], tag)
					break
				}
			}
		}
	}
	return l
}

// keysMoving is the number of the load's keys in moving slots.
func (l *atomicLoad) keysMoving() int {
	n := 0
	for _, ks := range l.keys {
		for _, k := range ks {
			if l.moving(harness.SlotOf(k)) {
				n++
			}
		}
	}
	return n
}

// run loops until stop is closed; every call has a 2s deadline.
func (l *atomicLoad) run(ctx context.Context, stop <-chan struct{}) {
	var wg sync.WaitGroup
	for w := range l.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seq := int64(1); ; seq++ {
				select {
				case <-stop:
					return
				default:
				}
				tag := l.keys[w][int(seq)%len(l.keys[w])]
				amt := int64(w)<<32 | seq
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				start := time.Now()
				_, err := l.c.Eval(cctx, atomicIncrLog, []string{tag + "sum", tag + "log"}, strconv.FormatInt(amt, 10))
				cancel()
				for took := int64(time.Since(start)); ; {
					if s := l.slowest.Load(); took <= s || l.slowest.CompareAndSwap(s, took) {
						break
					}
				}
				o := "acked"
				switch {
				case err == nil:
					l.ok.Add(1)
				case errors.Is(err, respire.ErrNotSent):
					o = "notsent"
				default:
					o = "unknown"
				}
				l.mu.Lock()
				l.outcome[w][amt] = o
				l.mu.Unlock()
				if err != nil {
					l.fail(err)
				}
			}
		}()
	}
	wg.Wait()
}

// fail records a failed call.
func (l *atomicLoad) fail(err error) {
	l.failed.Add(1)
	l.mu.Lock()
	l.errs[err.Error()]++
	l.mu.Unlock()
}

// runTx runs n workers of transactions (MULTI, INCR of two keys of a tag
// in a moving slot, EXEC) and MGETs of the two keys, which must be equal,
// until stop is closed.
func (l *atomicLoad) runTx(ctx context.Context, stop <-chan struct{}, n int) {
	l.txAcked, l.txUnkn = map[string]int64{}, map[string]int64{}
	for i := 0; len(l.txTags) < n; i++ {
		if tag := fmt.Sprintf("{atx%d}", i); l.moving(harness.SlotOf(tag)) {
			l.txTags = append(l.txTags, tag)
		}
	}
	var wg sync.WaitGroup
	for _, tag := range l.txTags {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				tx := l.c.NewTx()
				tx.Incr(tag + "a")
				tx.Incr(tag + "b")
				err := tx.Exec(cctx)
				l.mu.Lock()
				switch {
				case err == nil:
					l.txAcked[tag]++
				case !errors.Is(err, respire.ErrNotSent):
					l.txUnkn[tag]++
				}
				l.mu.Unlock()
				if err == nil {
					l.txOK.Add(1)
					var vs []respire.Null[string]
					if vs, err = l.c.MGet(cctx, tag+"a", tag+"b"); err == nil && vs[0] != vs[1] {
						err = fmt.Errorf("a transaction was not all-or-nothing: %s a=%v b=%v", tag, vs[0], vs[1])
					}
				}
				cancel()
				if err != nil {
					l.fail(err)
				}
			}
		}()
	}
	wg.Wait()
}

// runBatches runs n workers that read every load key's counter in one
// batch, until stop is closed; each reply must be a value or Nil.
func (l *atomicLoad) runBatches(ctx context.Context, stop <-chan struct{}, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
				b := l.c.NewBatch()
				var futs []*respire.Future[string]
				for _, ks := range l.keys {
					for _, k := range ks {
						futs = append(futs, b.Get(k+"sum"))
					}
				}
				err := b.Exec(cctx)
				cancel()
				for _, f := range futs {
					if err != nil {
						break
					}
					if _, ferr := f.Result(); ferr != nil && !errors.Is(ferr, respire.Nil) {
						err = ferr
					}
				}
				if err != nil {
					l.fail(err)
					continue
				}
				l.batchOK.Add(1)
			}
		}()
	}
	wg.Wait()
}

// verify checks every key's log against the outcomes: each acknowledged
// amount applied exactly once, none applied twice, none applied that was
// not sent or never sent, and each counter the sum of its log.
func (l *atomicLoad) verify(t *testing.T, ctx context.Context) (acked, unknown, notSent int) {
	t.Helper()
	for w := range l.workers {
		seen := map[int64]int{}
		for _, tag := range l.keys[w] {
			applied, err := l.c.LRange(ctx, tag+"log", 0, -1)
			require.NoError(t, err)
			var sum int64
			for _, s := range applied {
				a, err := strconv.ParseInt(s, 10, 64)
				require.NoError(t, err)
				seen[a]++
				sum += a
			}
			if len(applied) > 0 {
				got, err := l.c.Get(ctx, tag+"sum")
				require.NoError(t, err)
				assert.Equal(t, strconv.FormatInt(sum, 10), got, "%s: the counter is not the sum of its log", tag)
			}
		}
		for amt, o := range l.outcome[w] {
			n := seen[amt]
			if n > 1 {
				t.Errorf("worker %d: amount %d applied %d times", w, amt, n)
			}
			switch o {
			case "acked":
				acked++
				if n != 1 {
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
	for _, tag := range l.txTags {
		vs, err := l.c.MGet(ctx, tag+"a", tag+"b")
		require.NoError(t, err)
		a, _ := strconv.ParseInt(vs[0].V, 10, 64)
		assert.Equal(t, vs[0], vs[1], "%s: a transaction was not all-or-nothing", tag)
		if a < l.txAcked[tag] || a > l.txAcked[tag]+l.txUnkn[tag] {
			t.Errorf("%s: %d transactions applied, %d acknowledged and %d of unknown outcome", tag, a, l.txAcked[tag], l.txUnkn[tag])
		}
	}
	return
}

// logErrors logs the most frequent errors.
func (l *atomicLoad) logErrors(t *testing.T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	msgs := make([]string, 0, len(l.errs))
	for m := range l.errs {
		msgs = append(msgs, m)
	}
	slices.SortFunc(msgs, func(a, b string) int { return l.errs[b] - l.errs[a] })
	for i, m := range msgs {
		if i == 5 {
			break
		}
		t.Logf("  %5d x %s", l.errs[m], m)
	}
}

// counters are what the servers counted: the client's topology fetches
// (CLUSTER SHARDS and CLUSTER SLOTS calls; the harness asks with CLUSTER
// NODES while it migrates) and the redirects and retry replies they sent
// (INFO errorstats).
type counters struct{ fetches, moved, ask, tryAgain int }

func (a counters) sub(b counters) counters {
	return counters{a.fetches - b.fetches, a.moved - b.moved, a.ask - b.ask, a.tryAgain - b.tryAgain}
}

// serverCounters sums counters over hc's nodes.
func serverCounters(t *testing.T, hc *harness.Cluster) counters {
	t.Helper()
	var out counters
	for _, n := range hc.Nodes {
		for _, section := range []string{"commandstats", "errorstats"} {
			info, err := n.Do(context.Background(), "INFO", section)
			require.NoError(t, err)
			for _, line := range strings.Split(fmt.Sprint(info), "\n") {
				name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
				if !ok {
					continue
				}
				f, _, _ := strings.Cut(rest, ",")
				_, num, _ := strings.Cut(f, "=")
				v, _ := strconv.Atoi(num)
				switch name {
				case "cmdstat_cluster|shards", "cmdstat_cluster|slots":
					out.fetches += v
				case "errorstat_MOVED":
					out.moved += v
				case "errorstat_ASK":
					out.ask += v
				case "errorstat_TRYAGAIN":
					out.tryAgain += v
				}
			}
		}
	}
	return out
}
