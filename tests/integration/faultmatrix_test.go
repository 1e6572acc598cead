package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// The fault matrix: one client per fault, through the fault proxy, under
// load from fmWorkers goroutines. Errors during a fault are expected; what
// must hold is that no caller ever gets a reply meant for another command,
// no call outlives its deadline by more than fmLateSlack, every goroutine
// gets a successful call again soon after the fault ends (fmRecoveryMax),
// and nothing is left running.
//
// Both bounds are margins no slow machine reaches, not measurements: on a
// quiet machine calls end within a few milliseconds of their deadline and
// recover within milliseconds of the fault's end, and the table says how
// close. A call that waited out a fault instead of its deadline is late
// by seconds in the 3s blackhole.
const (
	fmWorkers     = 16
	fmCallTimeout = 500 * time.Millisecond
	fmLateSlack   = time.Second
	fmRecoveryMax = 10 * time.Second
	fmWarm        = 500 * time.Millisecond // load before the fault
	fmTail        = 700 * time.Millisecond // load after every goroutine recovered
)

// fmCase is one fault. inject applies it and returns once it has ended;
// for a cut that is at once.
type fmCase struct {
	name string
	// losesData says the server may lose its dataset (a restart): a
	// missing value or a counter starting over is then no error.
	losesData bool
	inject    func(t *testing.T, srv *harness.Server, p *faultproxy.Proxy)
}

// fmCases are the faults. The blackhole holds traffic (faultproxy's Hold),
// as a partition does, rather than dropping it (Blackhole): bytes dropped
// from the middle of a TCP stream would reach the server as a different
// command stream, a fault no network produces, and could shift replies in
// a way no client can detect.
var fmCases = []fmCase{
	{name: "cut-rst", inject: func(_ *testing.T, _ *harness.Server, p *faultproxy.Proxy) { p.CutRST() }},
	{name: "cut-fin", inject: func(_ *testing.T, _ *harness.Server, p *faultproxy.Proxy) { p.CutFIN() }},
	{name: "truncated-reply", inject: func(t *testing.T, _ *harness.Server, p *faultproxy.Proxy) {
		select {
		case <-p.TruncateReply():
		case <-time.After(2 * time.Second):
			t.Error("the proxy cut no reply short within 2s")
		}
	}},
	{name: "delay-200ms", inject: func(_ *testing.T, _ *harness.Server, p *faultproxy.Proxy) {
		p.Delay(200 * time.Millisecond)
		loadFor(600 * time.Millisecond)
		p.Delay(0)
	}},
	{name: "delay-800ms", inject: func(_ *testing.T, _ *harness.Server, p *faultproxy.Proxy) {
		p.Delay(800 * time.Millisecond)
		loadFor(600 * time.Millisecond)
		p.Delay(0)
	}},
	{name: "blackhole-3s", inject: func(_ *testing.T, _ *harness.Server, p *faultproxy.Proxy) {
		p.Hold(true)
		loadFor(3 * time.Second)
		p.Hold(false)
	}},
	{name: "server-restart", losesData: true, inject: func(t *testing.T, srv *harness.Server, _ *faultproxy.Proxy) {
		srv.Kill()
		srv.Restart(t)
	}},
}

// loadFor lets the load run for d while a fault lasts.
func loadFor(d time.Duration) { <-time.After(d) }

// TestFaultMatrix runs every fault of fmCases against one Redis 8.0 server
// and logs a markdown table, a row per fault. When RESPIRE_FAULT_REPORT
// names a file (relative paths start in tests/integration), the table is
// written there too.
func TestFaultMatrix(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	var rows []string
	for _, fc := range fmCases {
		t.Run(fc.name, func(t *testing.T) {
			res := runFaultCase(t, srv, fc)
			row := res.row(fc.name)
			rows = append(rows, row)
			t.Logf("\n%s\n%s", fmHeader, row)
			if len(res.errSamples) > 0 {
				t.Logf("first error of each kind:\n%s", strings.Join(res.errSamples, "\n"))
			}
		})
	}
	table := fmHeader + "\n" + strings.Join(rows, "\n") + "\n"
	t.Logf("fault matrix (%s %s, %d goroutines, %v deadline per call):\n%s", srv.Flavor, srv.Version, fmWorkers, fmCallTimeout, table)
	if path := os.Getenv("RESPIRE_FAULT_REPORT"); path != "" {
		note := fmt.Sprintf("Fault matrix: %s %s, %d goroutines doing SET/GET/INCR (half of them in Batches), %v deadline per call, %s.\n\n",
			srv.Flavor, srv.Version, fmWorkers, fmCallTimeout, raceNote())
		require.NoError(t, os.WriteFile(path, []byte(note+table), 0o644))
	}
}

func raceNote() string {
	if raceEnabled {
		return "race detector on"
	}
	return "race detector off"
}

const fmHeader = "| case | connections | ops ok | ops err | corrupted | late (> deadline+1s) | max past deadline | recovery | goroutines leaked | errors |\n" +
	"|---|---:|---:|---:|---:|---:|---:|---:|---:|---|"

// fmResult is what one case measured.
type fmResult struct {
	ok, errs, corrupt, late int64
	maxOver                 time.Duration
	recovery                time.Duration // slowest goroutine; -1: not all recovered
	leaked                  int
	conns                   int // accepted by the proxy: 1 + reconnects
	kinds                   map[string]int
	errSamples              []string
}

func (r *fmResult) row(name string) string {
	rec := "none"
	if r.recovery >= 0 {
		rec = r.recovery.Round(time.Millisecond).String()
	}
	over := "-"
	if r.maxOver > 0 {
		over = r.maxOver.Round(time.Millisecond).String()
	}
	var kinds []string
	for k, n := range r.kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, n))
	}
	sort.Strings(kinds)
	return fmt.Sprintf("| %s | %d | %d | %d | %d | %d | %s | %s | %d | %s |",
		name, r.conns, r.ok, r.errs, r.corrupt, r.late, over, rec, r.leaked, strings.Join(kinds, ", "))
}

func runFaultCase(t *testing.T, srv *harness.Server, fc fmCase) *fmResult {
	before := runtime.NumGoroutine()
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	cctx, ccancel := context.WithTimeout(context.Background(), 5*time.Second)
	c, err := respire.Connect(cctx, respire.Options{
		Addr:                p.Addr(),
		MinRetryBackoff:     5 * time.Millisecond,
		MaxRetryBackoff:     100 * time.Millisecond,
		StallTimeout:        300 * time.Millisecond,
		HealthCheckInterval: 300 * time.Millisecond,
		DialTimeout:         time.Second,
	})
	ccancel()
	if err != nil {
		p.Close()
		require.NoError(t, err)
	}

	run := newFMRun(fc, c)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	stopped := false
	shutdown := func() {
		if stopped {
			return
		}
		stopped = true
		close(stop)
		workersDone := make(chan struct{})
		go func() {
			wg.Wait()
			close(workersDone)
		}()
		// Every call has a deadline: the load stops within one of them,
		// unless a call ignores it.
		select {
		case <-workersDone:
		case <-time.After(fmCallTimeout + 2*time.Second):
			n := run.inflight.Load()
			run.late.Add(int64(n))
			t.Errorf("%s: %d calls still running %v after the load was told to stop, far past their %v deadline:\n%s",
				fc.name, n, fmCallTimeout+2*time.Second, fmCallTimeout, goroutineDump())
		}
		run.cancel()
		c.Close()
		p.Close()
		select {
		case <-workersDone:
		case <-time.After(5 * time.Second):
			t.Errorf("%s: %d calls did not return within 5s of Client.Close either", fc.name, run.inflight.Load())
		}
	}
	defer shutdown() // also when inject ends the test (t.Fatal)
	for g := range fmWorkers {
		w := newFMWorker(run, g)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.loop(stop)
		}()
	}

	select {
	case <-run.seeded:
	case <-time.After(5 * time.Second):
		t.Fatalf("the load did not start: %d of %d goroutines seeded their counter", run.seededN.Load(), fmWorkers)
	}
	loadFor(fmWarm)
	fc.inject(t, srv, p)
	run.faultEnd.Store(time.Now().UnixNano())
	recovered := true
	select {
	case <-run.recovered:
	case <-time.After(fmRecoveryMax):
		recovered = false
	}
	loadFor(fmTail)
	conns := p.Accepted()
	shutdown()

	res := run.result()
	res.conns = conns
	res.leaked = settleGoroutines(before, 5*time.Second)
	if !recovered {
		res.recovery = -1
		t.Errorf("%s: only %d of %d goroutines had a successful call within %v of the fault's end",
			fc.name, run.recoveredN.Load(), fmWorkers, fmRecoveryMax)
	}
	if res.corrupt > 0 {
		t.Errorf("%s: %d corrupted or misattributed replies; first ones:\n%s", fc.name, res.corrupt, strings.Join(run.corruptSamples(), "\n"))
	}
	if res.late > 0 {
		t.Errorf("%s: %d calls returned more than %v after their deadline (worst %v)", fc.name, res.late, fmLateSlack, res.maxOver)
	}
	if res.leaked > 0 {
		t.Errorf("%s: %d goroutines more than before the case, 5s after closing the client and the proxy:\n%s", fc.name, res.leaked, goroutineDump())
	}
	return res
}

// goroutineDump returns the stacks of all goroutines, equal ones counted
// together.
func goroutineDump() string {
	var buf bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
	return buf.String()
}

// settleGoroutines waits until no more goroutines run than before, or
// within has passed, and returns how many more there are.
func settleGoroutines(before int, within time.Duration) int {
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := runtime.NumGoroutine()
		if n <= before || time.Now().After(deadline) {
			return max(n-before, 0)
		}
		<-tick.C
	}
}

// fmRun holds the counters one case's goroutines share.
type fmRun struct {
	fc     fmCase
	c      *respire.Client
	parent context.Context
	cancel context.CancelFunc

	ok, errs, corrupt, late atomic.Int64
	seededN, recoveredN     atomic.Int32
	inflight                atomic.Int32 // calls running now
	seeded, recovered       chan struct{}
	faultEnd                atomic.Int64 // UnixNano; 0 while the fault has not ended

	mu       sync.Mutex
	maxOver  time.Duration
	slowest  time.Duration
	kinds    map[string]int
	firstErr map[string]string
	bad      []string
}

func newFMRun(fc fmCase, c *respire.Client) *fmRun {
	r := &fmRun{fc: fc, c: c, seeded: make(chan struct{}), recovered: make(chan struct{}),
		kinds: map[string]int{}, firstErr: map[string]string{}}
	r.parent, r.cancel = context.WithCancel(context.Background())
	return r
}

func (r *fmRun) result() *fmResult {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := &fmResult{ok: r.ok.Load(), errs: r.errs.Load(), corrupt: r.corrupt.Load(), late: r.late.Load(),
		maxOver: r.maxOver, recovery: r.slowest, kinds: map[string]int{}}
	for k, n := range r.kinds {
		res.kinds[k] = n
	}
	for k, e := range r.firstErr {
		res.errSamples = append(res.errSamples, k+": "+e)
	}
	sort.Strings(res.errSamples)
	return res
}

func (r *fmRun) corruptSamples() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bad...)
}

// done records one call: its timing, and whether it succeeded, failed, or
// returned something that is not its reply (bad).
func (r *fmRun) done(w *fmWorker, op string, start, deadline, end time.Time, err error, bad string) {
	r.timing(deadline, end)
	r.outcome(w, op, start, end, err, bad)
}

// timing records how a call that ended at end kept its deadline.
func (r *fmRun) timing(deadline, end time.Time) {
	over := end.Sub(deadline)
	if over > fmLateSlack {
		r.late.Add(1)
	}
	if over > 0 {
		r.mu.Lock()
		r.maxOver = max(r.maxOver, over)
		r.mu.Unlock()
	}
}

// outcome records one command's result; a batch has one per command.
func (r *fmRun) outcome(w *fmWorker, op string, start, end time.Time, err error, bad string) {
	switch {
	case bad != "":
		r.corrupt.Add(1)
		r.mu.Lock()
		if len(r.bad) < 10 {
			r.bad = append(r.bad, fmt.Sprintf("goroutine %d %s: %s", w.g, op, bad))
		}
		r.mu.Unlock()
	case err != nil:
		r.errs.Add(1)
		k := errKind(err)
		r.mu.Lock()
		r.kinds[k]++
		if _, seen := r.firstErr[k]; !seen {
			r.firstErr[k] = op + ": " + err.Error()
		}
		r.mu.Unlock()
	default:
		r.ok.Add(1)
		fe := r.faultEnd.Load()
		if fe != 0 && !w.recovered && start.UnixNano() >= fe {
			w.recovered = true
			r.mu.Lock()
			r.slowest = max(r.slowest, end.Sub(time.Unix(0, fe)))
			r.mu.Unlock()
			if r.recoveredN.Add(1) == fmWorkers {
				close(r.recovered)
			}
		}
	}
}

// errKind names the class of a call's error, for the table.
func errKind(err error) string {
	var ue *respire.UnexpectedReplyError
	var se *respire.Error
	var ce *respire.ConnError
	switch {
	case errors.As(err, &ue):
		return "unexpected-reply"
	case errors.Is(err, respire.ErrProtocol):
		return "protocol"
	case errors.Is(err, respire.ErrStalled):
		return "stalled"
	case errors.Is(err, respire.ErrUnavailable):
		return "unavailable"
	case errors.As(err, &ce):
		return "conn"
	case errors.Is(err, context.DeadlineExceeded):
		return "deadline"
	case errors.As(err, &se):
		return "server-" + se.Prefix
	case errors.Is(err, respire.ErrClosed):
		return "closed"
	}
	return "other"
}

// fmWorker is one load goroutine. It owns a value key and a counter key;
// half of them send their SET, GET and INCR as one Batch (one call, one
// deadline), the others as three calls.
// Values encode the key and a sequence number, so a reply meant for
// another key, or an old reply of this one, is seen. The counter starts
// at base = (g+1)·1e9, so an INCR reply of another goroutine is out of
// range, and it only grows.
type fmWorker struct {
	r         *fmRun
	g         int
	key, ctr  string
	base      int64
	seq       int          // of the last SET sent
	lastOK    int          // seq of the last SET that succeeded; -1 none
	maybe     map[int]bool // seqs of SETs that failed: they may have run, even late
	isSeeded  bool
	prev      int64 // last counter value seen
	batched   bool  // SET, GET and INCR go in one Batch
	recovered bool
}

func newFMWorker(r *fmRun, g int) *fmWorker {
	return &fmWorker{r: r, g: g, lastOK: -1, maybe: map[int]bool{},
		key:  fmt.Sprintf("fm:%s:{%02d}:v", r.fc.name, g),
		ctr:  fmt.Sprintf("fm:%s:{%02d}:n", r.fc.name, g),
		base: int64(g+1) * 1e9, batched: g%2 == 1}
}

// fmValue is the value of seq for key: key, seq, and a filler that
// depends on both, so the whole value is checked byte for byte.
func fmValue(key string, seq int) string {
	fill := strings.Repeat(string(rune('a'+seq%26)), 16+(seq*7+len(key))%64)
	return key + "|" + strconv.Itoa(seq) + "|" + fill
}

func (w *fmWorker) client() *respire.Client { return w.r.c }

func (w *fmWorker) loop(stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		default:
		}
		if !w.isSeeded {
			w.seed()
			continue
		}
		if w.batched {
			w.batch()
			continue
		}
		w.set()
		w.get()
		w.incr()
	}
}

// call runs op with its own deadline and returns its times.
func (w *fmWorker) call(op func(ctx context.Context) error) (start, deadline, end time.Time, err error) {
	ctx, cancel := context.WithTimeout(w.r.parent, fmCallTimeout)
	deadline, _ = ctx.Deadline()
	start = time.Now()
	w.r.inflight.Add(1)
	err = op(ctx)
	w.r.inflight.Add(-1)
	end = time.Now()
	cancel()
	return start, deadline, end, err
}

func (w *fmWorker) seed() {
	start, dl, end, err := w.call(func(ctx context.Context) error {
		return w.client().Set(ctx, w.ctr, strconv.FormatInt(w.base, 10), nil)
	})
	bad := ""
	if errors.Is(err, respire.Nil) {
		bad, err = "SET replied null", nil
	}
	if err == nil && bad == "" {
		if !w.isSeeded && w.prev == 0 {
			if w.r.seededN.Add(1) == fmWorkers {
				close(w.r.seeded)
			}
		}
		w.isSeeded, w.prev = true, w.base
	}
	w.r.done(w, "SET counter", start, dl, end, err, unexpected(err, bad))
}

func (w *fmWorker) set() {
	w.seq++
	seq := w.seq
	start, dl, end, err := w.call(func(ctx context.Context) error {
		return w.client().Set(ctx, w.key, fmValue(w.key, seq), nil)
	})
	bad, err := w.setDone(seq, err)
	w.r.done(w, "SET", start, dl, end, err, bad)
}

// setDone records the outcome of SET seq and says what is wrong with it.
func (w *fmWorker) setDone(seq int, err error) (string, error) {
	bad := ""
	switch {
	case errors.Is(err, respire.Nil):
		bad, err = "SET replied null", nil
	case err == nil:
		w.lastOK = seq
	default:
		w.maybe[seq] = true
	}
	return unexpected(err, bad), err
}

func (w *fmWorker) get() {
	var got string
	start, dl, end, err := w.call(func(ctx context.Context) (err error) {
		got, err = w.client().Get(ctx, w.key)
		return err
	})
	bad, err := w.getDone(got, err)
	w.r.done(w, "GET", start, dl, end, err, bad)
}

// getDone checks a GET's reply and says what is wrong with it; a null
// that may be right is no error.
func (w *fmWorker) getDone(got string, err error) (string, error) {
	bad := ""
	switch {
	case errors.Is(err, respire.Nil):
		err = nil
		if w.lastOK >= 0 && !w.r.fc.losesData {
			bad = fmt.Sprintf("null, but SET %d succeeded", w.lastOK)
		}
	case err == nil:
		bad = w.checkValue(got)
	}
	return unexpected(err, bad), err
}

// checkValue says what is wrong with a GET reply, or "".
func (w *fmWorker) checkValue(got string) string {
	k, rest, ok1 := strings.Cut(got, "|")
	s, _, ok2 := strings.Cut(rest, "|")
	seq, err := strconv.Atoi(s)
	switch {
	case !ok1 || !ok2 || err != nil:
		return fmt.Sprintf("%.60q is not a value of this test", got)
	case k != w.key:
		return fmt.Sprintf("value of key %q, want %q", k, w.key)
	case got != fmValue(k, seq):
		return fmt.Sprintf("value %.60q differs from what SET %d sent", got, seq)
	case seq != w.lastOK && !w.maybe[seq]:
		return fmt.Sprintf("value of SET %d; the last SET that succeeded is %d, and %d never failed", seq, w.lastOK, seq)
	}
	return ""
}

func (w *fmWorker) incr() {
	var n int64
	start, dl, end, err := w.call(func(ctx context.Context) (err error) {
		n, err = w.client().Incr(ctx, w.ctr)
		return err
	})
	w.r.done(w, "INCR", start, dl, end, err, w.incrDone(n, err))
}

// incrDone checks an INCR's reply and says what is wrong with it.
func (w *fmWorker) incrDone(n int64, err error) string {
	bad := ""
	if err == nil {
		switch {
		case n > w.prev && n < w.base+1e9:
			w.prev = n
		case n < 1e9 && w.r.fc.losesData:
			w.isSeeded = false // the server lost the counter: seed it again
		default:
			bad = fmt.Sprintf("INCR returned %d, after %d (range [%d, %d))", n, w.prev, w.base, w.base+1e9)
		}
	}
	return unexpected(err, bad)
}

// batch sends the same SET, GET and INCR as one Batch, one call with one
// deadline, and checks each command's result.
func (w *fmWorker) batch() {
	w.seq++
	seq := w.seq
	b := w.client().NewBatch()
	set := b.Set(w.key, fmValue(w.key, seq), nil)
	get := b.Get(w.key)
	incr := b.Incr(w.ctr)
	start, dl, end, err := w.call(b.Exec)
	w.r.timing(dl, end)
	if err != nil {
		w.maybe[seq] = true
		w.r.outcome(w, "batch", start, end, err, unexpected(err, ""))
		return
	}
	_, err = set.Result()
	bad, err := w.setDone(seq, err)
	w.r.outcome(w, "batch SET", start, end, err, bad)
	got, err := get.Result()
	bad, err = w.getDone(got, err)
	w.r.outcome(w, "batch GET", start, end, err, bad)
	n, err := incr.Result()
	w.r.outcome(w, "batch INCR", start, end, err, w.incrDone(n, err))
}

// unexpected turns a reply of the wrong shape into a bad reply: with exact
// FIFO accounting a GET never sees an integer, nor a SET a bulk string.
func unexpected(err error, bad string) string {
	var ue *respire.UnexpectedReplyError
	if bad == "" && errors.As(err, &ue) {
		return ue.Error()
	}
	return bad
}
