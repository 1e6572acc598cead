package benchmarks

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/tests/faultproxy"
)

// TestFaultCompare runs the fault matrix's cut-mid-reply case against
// Respire and its peers in one run: 16 goroutines read 1 MiB values
// through the fault proxy, which resets every connection every
// faultEvery, so that nearly every cut lands in the middle of a reply.
// It counts the calls that failed and the ones that succeeded (every
// value checked). It is a measurement, not a check: set RESPIRE_FAULTCMP=1
// to run it, RESPIRE_FAULTCMP_DURATION (a Go duration, default 5s) for how
// long each client runs.
//
//	cd benchmarks && RESPIRE_FAULTCMP=1 go test -run TestFaultCompare -v .
func TestFaultCompare(t *testing.T) {
	if os.Getenv("RESPIRE_FAULTCMP") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_FAULTCMP=1 to run it")
	}
	dur := 5 * time.Second
	if v := os.Getenv("RESPIRE_FAULTCMP_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RESPIRE_FAULTCMP_DURATION: %v", err)
		}
		dur = d
	}
	s := benchServer(t)
	names := []string{"respire-nofiller", "goredis", "rueidis"}
	var rows []string
	for _, name := range names {
		r := runCutMidReply(t, name, s.Addr, dur)
		rows = append(rows, fmt.Sprintf("| %s | %d | %d | %d | %s |", name, r.ok, r.failed, r.cuts, r.kinds()))
	}
	t.Logf("cut-mid-reply, 1 MiB GETs, %d goroutines, a reset of every connection every %v, %v per client:\n"+
		"| client | calls ok | calls failed | cuts | errors |\n|---|--:|--:|--:|---|\n%s",
		faultWorkers, faultEvery, dur, strings.Join(rows, "\n"))
}

const (
	faultWorkers = 16
	faultEvery   = 100 * time.Millisecond
	faultTimeout = time.Second
)

type faultResult struct {
	ok, failed, cuts int64
	mu               sync.Mutex
	errs             map[string]int
}

func (r *faultResult) kinds() string {
	var out []string
	for k, n := range r.errs {
		out = append(out, fmt.Sprintf("%d× %s", n, k))
	}
	if len(out) > 3 {
		out = out[:3]
	}
	return strings.Join(out, "; ")
}

func runCutMidReply(t *testing.T, name, addr string, dur time.Duration) *faultResult {
	p, err := faultproxy.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ctx := context.Background()
	c, err := clients.New(ctx, name, p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := &faultResult{errs: map[string]int{}}
	var ok, failed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range faultWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, faultTimeout)
				v, err := c.Get(cctx, fixture.KeyGet1M)
				cancel()
				switch {
				case err != nil:
					failed.Add(1)
					msg := err.Error()
					if len(msg) > 80 {
						msg = msg[:80]
					}
					r.mu.Lock()
					r.errs[msg]++
					r.mu.Unlock()
				case v != fixture.Value1M:
					t.Errorf("%s: a wrong value of %d bytes", name, len(v))
				default:
					ok.Add(1)
				}
			}
		}()
	}
	end := time.Now().Add(dur)
	tick := time.NewTicker(faultEvery)
	for time.Now().Before(end) {
		<-tick.C
		p.CutRST()
		r.cuts++
	}
	tick.Stop()
	close(stop)
	wg.Wait()
	r.ok, r.failed = ok.Load(), failed.Load()
	return r
}
