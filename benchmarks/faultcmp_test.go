package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
)

// TestFaultCompare measures how many calls fail when connections are reset
// in the middle of large replies and requests, for Respire and its peers
// in one run. Each shape runs each client, with its defaults, through the
// fault proxy, which resets every connection at the shape's interval:
// with values of 128 KiB or 1 MiB in flight all the time, nearly every
// reset lands in the middle of a reply or of a SET's value. Every call has
// a deadline (faultTimeout); every value read is checked against the
// key's own. It counts the calls that failed, per operation and cause. It
// is a measurement, not a check: set RESPIRE_FAULTCMP=1 to run it,
// RESPIRE_FAULTCMP_DURATION (a Go duration, default 3s) for how long each
// client starts calls at each shape (longer runs vary less on a busy
// machine), RESPIRE_FAULTCMP_SHAPES (a comma-separated list of shape names) to run
// only some.
//
//	cd benchmarks && RESPIRE_FAULTCMP=1 go test -run TestFaultCompare -v .
func TestFaultCompare(t *testing.T) {
	if os.Getenv("RESPIRE_FAULTCMP") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_FAULTCMP=1 to run it")
	}
	dur := 3 * time.Second
	if v := os.Getenv("RESPIRE_FAULTCMP_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RESPIRE_FAULTCMP_DURATION: %v", err)
		}
		dur = d
	}
	only := map[string]bool{}
	if v := os.Getenv("RESPIRE_FAULTCMP_SHAPES"); v != "" {
		for _, n := range strings.Split(v, ",") {
			only[strings.TrimSpace(n)] = true
		}
	}
	s := benchServer(t)
	names := []string{"respire-nofiller", "goredis", "rueidis"}
	var out strings.Builder
	for _, sh := range faultShapes {
		if len(only) > 0 && !only[sh.name] {
			continue
		}
		fmt.Fprintf(&out, "\n%s: %s, %d goroutines, a reset of every connection every %v, %v per client, %v per call\n"+
			"| client | calls ok | calls failed | failed per 1,000 calls | failed by op | causes |\n|---|--:|--:|--:|---|---|\n",
			sh.name, sh.about, sh.workers, sh.every, dur, faultTimeout)
		for _, name := range names {
			r := runFaultShape(t, sh, name, s.Addr, dur)
			ok, failed := r.ok.Load(), r.failed.Load()
			fmt.Fprintf(&out, "| %s | %d | %d | %.1f | %s | %s |\n", name, ok, failed,
				1000*float64(failed)/float64(max(ok+failed, 1)), r.byOp(), r.causes())
		}
	}
	t.Log(out.String())
}

// faultTimeout is each call's deadline.
const faultTimeout = 2 * time.Second

// faultOp is one kind of call of a fault shape.
type faultOp int

const (
	opGet  faultOp = iota // GET of one key
	opSet                 // SET of one key to its own value
	opMGet                // MGET of faultMGetKeys keys
	opPipe                // a pipeline (Batch) of faultMGetKeys GETs
)

var faultOpNames = [...]string{opGet: "GET", opSet: "SET", opMGet: "MGET", opPipe: "pipe"}

// faultMGetKeys is how many keys an MGET or a pipeline reads.
const faultMGetKeys = 4

// faultShape is one load under faults: ops are taken in turn by each
// goroutine (goroutine g starts at ops[g%len(ops)]).
type faultShape struct {
	name, about string
	workers     int
	every       time.Duration // how often every connection is reset
	keys        *fixture.Keyset
	ops         []faultOp
}

var (
	faultKeys1M   = fixture.NewKeyset("bench:fault1m:", 16, 1<<20, 31)
	faultKeys128K = fixture.NewKeyset("bench:fault128k:", 64, 128<<10, 32)
)

var faultShapes = []faultShape{
	{"get-1m-16", "GETs of 1 MiB values", 16, 100 * time.Millisecond, faultKeys1M, []faultOp{opGet}},
	{"get-1m-16-fast", "GETs of 1 MiB values", 16, 30 * time.Millisecond, faultKeys1M, []faultOp{opGet}},
	{"get-1m-64-fast", "GETs of 1 MiB values", 64, 30 * time.Millisecond, faultKeys1M, []faultOp{opGet}},
	{"readmix-1m-16-fast", "GETs, MGETs of 4 keys, pipelines of 4 GETs and 1 SET in 8, 1 MiB values", 16, 30 * time.Millisecond, faultKeys1M,
		[]faultOp{opGet, opGet, opMGet, opGet, opSet, opGet, opPipe, opGet}},
	{"mix-1m-16", "GETs and SETs of 1 MiB values, half each", 16, 100 * time.Millisecond, faultKeys1M, []faultOp{opGet, opSet}},
	{"mix-1m-64", "GETs and SETs of 1 MiB values, half each", 64, 100 * time.Millisecond, faultKeys1M, []faultOp{opGet, opSet}},
	{"mix-128k-64", "GETs and SETs of 128 KiB values, half each", 64, 100 * time.Millisecond, faultKeys128K, []faultOp{opGet, opSet}},
	{"batch-128k-16-fast", "GETs, SETs, MGETs of 4 keys and pipelines of 4 GETs, 128 KiB values", 16, 30 * time.Millisecond, faultKeys128K,
		[]faultOp{opGet, opSet, opMGet, opPipe}},
}

type faultResult struct {
	ok, failed atomic.Int64
	mu         sync.Mutex
	ops        map[string]int // failures by op
	errs       map[string]int // failures by op and cause
}

func (r *faultResult) add(op faultOp, err error) {
	r.failed.Add(1)
	cause := faultCause(err)
	r.mu.Lock()
	r.ops[faultOpNames[op]]++
	r.errs[faultOpNames[op]+" "+cause]++
	r.mu.Unlock()
}

func (r *faultResult) byOp() string { return counts(r.ops, 0) }

func (r *faultResult) causes() string { return counts(r.errs, 4) }

// counts lists m's entries, most frequent first, at most limit of them (0:
// all).
func counts(m map[string]int, limit int) string {
	type kv struct {
		k string
		n int
	}
	var l []kv
	for k, n := range m {
		l = append(l, kv{k, n})
	}
	sort.Slice(l, func(i, j int) bool { return l[i].n > l[j].n || l[i].n == l[j].n && l[i].k < l[j].k })
	if limit > 0 && len(l) > limit {
		l = l[:limit]
	}
	var out []string
	for _, e := range l {
		out = append(out, fmt.Sprintf("%d %s", e.n, e.k))
	}
	return strings.Join(out, "; ")
}

// faultCause names what made a call fail: for Respire, whether it was
// never sent, an outcome unknown after a broken connection, no connection
// to be had, or a deadline; for the peers, the start of the message.
func faultCause(err error) string {
	var ce *respire.ConnError
	deadline := errors.Is(err, context.DeadlineExceeded)
	switch {
	case errors.Is(err, respire.ErrUnavailable) && deadline:
		return "unavailable (deadline waiting for a connection)"
	case errors.Is(err, respire.ErrUnavailable):
		return "unavailable"
	case errors.Is(err, respire.ErrNotSent):
		return "not sent: " + short(err)
	case errors.As(err, &ce):
		return "outcome unknown (connection broken)"
	case deadline:
		return "deadline"
	}
	return short(err)
}

// short is err's message without addresses, at most 60 bytes of it.
func short(err error) string {
	msg := addrs.ReplaceAllString(err.Error(), "")
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}

var addrs = regexp.MustCompile(`tcp [0-9.:]+->[0-9.:]+: `)

// runFaultShape runs client name through shape sh for dur and counts its
// calls.
func runFaultShape(t *testing.T, sh faultShape, name, addr string, dur time.Duration) *faultResult {
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
	for i := range sh.keys.N {
		if err := c.Set(ctx, sh.keys.Key(i), sh.keys.Value(i)); err != nil {
			t.Fatalf("%s: seeding: %v", name, err)
		}
	}
	r := &faultResult{ops: map[string]int{}, errs: map[string]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for g := range sh.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			keys := make([]string, faultMGetKeys)
			vals := make([]string, faultMGetKeys)
			for n := g; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				op := sh.ops[n%len(sh.ops)]
				k := (g*7 + n) % sh.keys.N
				cctx, cancel := context.WithTimeout(ctx, faultTimeout)
				var err error
				bad := -1
				switch op {
				case opGet:
					var v string
					v, err = c.Get(cctx, sh.keys.Key(k))
					if err == nil && v != sh.keys.Value(k) {
						bad = k
					}
				case opSet:
					err = c.Set(cctx, sh.keys.Key(k), sh.keys.Value(k))
				case opMGet, opPipe:
					for i := range keys {
						keys[i] = sh.keys.Key((k + i) % sh.keys.N)
					}
					if op == opMGet {
						err = c.MGet(cctx, keys, vals)
					} else {
						err = c.GetPipe(cctx, keys, vals)
					}
					for i := range vals {
						if err == nil && vals[i] != sh.keys.Value((k+i)%sh.keys.N) {
							bad = (k + i) % sh.keys.N
						}
					}
				}
				cancel()
				switch {
				case err != nil:
					r.add(op, err)
				case bad >= 0:
					t.Errorf("%s %s: a wrong value for key %d", name, faultOpNames[op], bad)
				default:
					r.ok.Add(1)
				}
			}
		}()
	}
	// Calls start for dur; the resets go on until the last call ended,
	// so that every call runs under them to its end or its deadline.
	end := time.Now().Add(dur)
	tick := time.NewTicker(sh.every)
	defer tick.Stop()
	for time.Now().Before(end) {
		<-tick.C
		p.CutRST()
	}
	close(stop)
	idle := make(chan struct{})
	go func() { wg.Wait(); close(idle) }()
	for {
		select {
		case <-idle:
			return r
		case <-tick.C:
			p.CutRST()
		}
	}
}
