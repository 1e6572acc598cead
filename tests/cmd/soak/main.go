// Command soak runs a mixed load through Respire for a long time while it
// injects faults, and checks every reply. It starts a redis-server of its
// own on a free loopback port (from .servers/bin, `make servers`, or PATH)
// and puts a fault proxy (package faultproxy) between it and the clients.
//
// The load: goroutines doing SET/GET of values that encode their key and a
// sequence number, and INCR of counters in ranges of their own (so a reply
// meant for another command is seen); goroutines running batches of ten
// commands; a publisher and a subscriber that checks order and loss; and
// goroutines reading their own writes through the client-side cache.
// Every -fault-every it injects the next fault of: cut every connection
// with a reset, kill -9 the server and start it again on the same port,
// blackhole traffic for 2s (held, as by a partition), delay replies by
// 200ms for 5s.
//
// Every -report-every and at the end it prints one line: elapsed time,
// calls ok and failed, corrupted replies (stale cached reads, pub/sub
// messages lost without a Gap, calls past their deadline by more than
// 50ms, calls stuck a second past it), faults so far, the process's RSS,
// goroutines and heap in use; and a line per fault with how soon a call
// succeeded after it. It exits with status 1 if any reply was corrupted
// or misattributed, a cached read returned a value older than a write that
// had succeeded, a pub/sub message was lost without a Gap, a call never
// returned, or no call succeeded within 30s of a fault. Late calls are
// reported, not failed: on a loaded machine the scheduler alone makes some.
//
//	go run ./cmd/soak -duration 2m -fault-every 30s
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
)

func main() { os.Exit(run()) }

func run() int {
	duration := flag.Duration("duration", 30*time.Minute, "how long to run")
	faultEvery := flag.Duration("fault-every", time.Minute, "time between faults")
	reportEvery := flag.Duration("report-every", time.Minute, "time between report lines")
	workers := flag.Int("workers", 64, "load goroutines")
	nCached := flag.Int("cached", 4, "of the goroutines, how many read their writes through the client-side cache")
	nBatch := flag.Int("batch", 12, "of the goroutines, how many run batches of 10 commands")
	timeout := flag.Duration("timeout", time.Second, "deadline of each call")
	serverBin := flag.String("server", "", "redis-server executable (default .servers/bin/redis-8.0-server, else PATH)")
	flag.Parse()
	nKV := *workers - 2 - *nCached - *nBatch
	if *nCached < 0 || *nBatch < 0 || nKV < 1 {
		fmt.Fprintln(os.Stderr, "soak: -workers must exceed -cached + -batch + 2 (the publisher and the subscriber)")
		return 2
	}

	bin, err := findServer(*serverBin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	dir, err := os.MkdirTemp("", "respire-soak-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer os.RemoveAll(dir)
	srv, err := startServer(bin, dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak: starting the server:", err)
		return 2
	}
	defer srv.kill()
	p, err := faultproxy.New(srv.addr())
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer p.Close()

	sigCtx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	opts := respire.Options{
		Addr:                p.Addr(),
		MinRetryBackoff:     10 * time.Millisecond,
		MaxRetryBackoff:     500 * time.Millisecond,
		StallTimeout:        500 * time.Millisecond,
		HealthCheckInterval: time.Second,
		DialTimeout:         2 * time.Second,
	}
	cacheOpts := opts
	cacheOpts.ClientCache = &respire.CacheOptions{MaxBytes: 8 << 20}
	setup, cancelSetup := context.WithTimeout(sigCtx, 10*time.Second)
	defer cancelSetup()
	c, err := respire.Connect(setup, opts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer c.Close()
	cc, err := respire.Connect(setup, cacheOpts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer cc.Close()

	st := newStats()
	ctx, cancel := context.WithTimeout(sigCtx, *duration)
	defer cancel()
	l := &load{ctx: ctx, c: c, cc: cc, timeout: *timeout, st: st}
	ps := &pubsub{l: l, channel: "soak:events", unsure: map[int]bool{}}
	sub, err := c.Subscribe(setup, ps.channel)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		return 2
	}
	defer sub.Close()

	var wg sync.WaitGroup
	spawn := func(f func()) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f()
		}()
	}
	spawn(func() { ps.subscribe(sub) })
	spawn(func() { ps.publish(2 * time.Millisecond) })
	for i := range *nCached {
		spawn(func() { l.cached(i) })
	}
	for i := range *nBatch {
		spawn(func() { l.batch(i) })
	}
	for i := range nKV {
		spawn(func() { l.kv(i) })
	}
	start := time.Now()
	fmt.Printf("soak: %s on %s through the fault proxy, %d goroutines (%d SET/GET/INCR, %d batch, %d cached, pub/sub 1+1), a fault every %v for %v\n",
		bin, srv.addr(), *workers, nKV, *nBatch, *nCached, *faultEvery, *duration)
	inj := &injector{ctx: ctx, srv: srv, p: p, st: st, start: start, fail: cancel}
	spawn(func() { inj.loop(*faultEvery) })

	tick := time.NewTicker(*reportEvery)
	defer tick.Stop()
	for running := true; running; {
		select {
		case <-ctx.Done():
			running = false
		case <-tick.C:
			fmt.Println(line(st, time.Since(start), inj))
		}
	}
	cancel()
	elapsed := time.Since(start)
	if !waitFor(&wg, *timeout+5*time.Second) {
		// A call that ignores its deadline: say where, and give up.
		fmt.Println(line(st, elapsed, inj))
		fmt.Printf("soak: FAIL: %d calls still running %v after the run ended, far past their deadline; goroutines:\n%s\n",
			st.stuck(), *timeout+5*time.Second, goroutineDump())
		return 1
	}
	sub.Close()
	c.Close()
	cc.Close()
	p.Close()
	srv.kill()
	fmt.Println(line(st, elapsed, inj))

	st.mu.Lock()
	maxOver := st.maxOver
	st.mu.Unlock()
	fmt.Printf("soak: end: errors by kind: %s; late calls (> deadline+%v): %d, worst %v past the deadline; pub/sub: %d messages, %d gaps\n",
		orNone(st.errKinds()), lateSlack, st.late.Load(), maxOver.Round(time.Millisecond), st.msgs.Load(), st.gaps.Load())
	bad := st.corrupt.Load() + st.stale.Load() + st.lost.Load()
	switch {
	case inj.failed != "":
		fmt.Println("soak: FAIL:", inj.failed)
		return 1
	case bad > 0:
		fmt.Printf("soak: FAIL: %d corrupted, %d stale, %d lost without a Gap\n", st.corrupt.Load(), st.stale.Load(), st.lost.Load())
		return 1
	case sigCtx.Err() != nil:
		fmt.Println("soak: interrupted; no violation so far")
		return 1
	}
	fmt.Println("soak: PASS")
	return 0
}

// waitFor waits for wg, at most d; false means it timed out.
func waitFor(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// goroutineDump returns the stacks of all goroutines, equal ones counted
// together.
func goroutineDump() string {
	var b strings.Builder
	_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
	return b.String()
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// line is one report line.
func line(st *stats, elapsed time.Duration, inj *injector) string {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return fmt.Sprintf("soak: elapsed=%v ok=%d err=%d corrupted=%d stale=%d lost=%d late=%d stuck=%d faults=%d rss=%s goroutines=%d heap-inuse=%.1fMiB",
		elapsed.Round(time.Second), st.ok.Load(), st.errs.Load(), st.corrupt.Load(), st.stale.Load(), st.lost.Load(),
		st.late.Load(), st.stuck(), inj.count.Load(), rss(), runtime.NumGoroutine(), float64(ms.HeapInuse)/(1<<20))
}

// rss is the process's resident set size from /proc/self/status.
func rss() string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "n/a"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			var kb float64
			if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f", &kb); err == nil {
				return fmt.Sprintf("%.1fMiB", kb/1024)
			}
		}
	}
	return "n/a"
}
