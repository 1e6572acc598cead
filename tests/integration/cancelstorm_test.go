package integration

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// The cancellation storm (issue 31): csWorkers goroutines share one client
// with default Options and run every kind of call (GET, SET of 1 KiB and
// 128 KiB, INCR, MGET, a batch of 10, MULTI/EXEC, RPUSH and BLPOP) under
// contexts that mostly end 0-2 ms in, some by a cancel, some by a deadline,
// the rest left alone. What must hold:
//   - a call whose own context is still live when it returns does not fail:
//     another caller leaving (even in the middle of its own 128 KiB write)
//     is no reason for it to;
//   - the error of a call whose context ended matches errors.Is(err,
//     ctx.Err());
//   - ErrNotSent means not applied, and what was acknowledged was applied:
//     every GET returns the value its key was last set to (or one of the
//     writes of unknown outcome after that), never a value whose SET said
//     ErrNotSent; every counter ends between its acknowledged INCRs and
//     those plus the ones of unknown outcome.
const (
	csWorkers  = 48
	csSmall    = 1 << 10
	csLarge    = 128 << 10
	csMaxDelay = 2 * time.Millisecond
	csBlock    = 20 * time.Millisecond // BLPOP's server-side timeout
	csKeys     = 4                     // string keys per goroutine
	csTopErrs  = 12                    // error kinds printed on failure
)

// csOp is one kind of call.
type csOp int

const (
	csGet csOp = iota
	csSetSmall
	csSetLarge
	csIncr
	csMGet
	csBatch
	csTx
	csPush
	csBLPop
	csOps
)

var csOpNames = [csOps]string{"GET", "SET1K", "SET128K", "INCR", "MGET", "BATCH", "MULTI/EXEC", "RPUSH", "BLPOP"}

// csWeights is how often each kind runs, in parts of csWeightSum.
var csWeights = [csOps]int{csGet: 20, csSetSmall: 15, csSetLarge: 8, csIncr: 15, csMGet: 8, csBatch: 8, csTx: 8, csPush: 10, csBLPop: 8}

var csWeightSum = func() int {
	s := 0
	for _, w := range csWeights {
		s += w
	}
	return s
}()

// csStats are the counts of one storm.
type csStats struct {
	mu        sync.Mutex
	calls     [csOps]int64
	ok        [csOps]int64
	live      [csOps]int64 // failed with their own context live
	ended     [csOps]int64 // failed after their context ended, matching it
	mismatch  [csOps]int64 // failed after their context ended, not matching it
	liveErrs  map[string]int
	endedErrs map[string]int
	wrong     map[string][]string // correctness violations by category
	nwrong    map[string]int
}

// The categories of wrong results.
const (
	csWrongValue   = "wrong value"        // not this key's, or an older acknowledged write's
	csLateWrite    = "late write"         // a write of unknown outcome ran after a later acknowledged one
	csNotSentRan   = "not-sent write ran" // a write that said ErrNotSent ran
	csWrongCounter = "counter"            // INCR accounting
	csWrongFuture  = "future"             // a batch's or transaction's Future disagrees with Exec
	csPanic        = "panic"
)

func (s *csStats) wrongf(category, format string, args ...any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nwrong[category]++
	if len(s.wrong[category]) < 8 {
		s.wrong[category] = append(s.wrong[category], fmt.Sprintf(format, args...))
	}
}

var (
	csAddrRe = regexp.MustCompile(`\[?[0-9a-f:.]*\]?:\d{2,5}\b`)
	csNumRe  = regexp.MustCompile(`\d+`)
)

// csKind reduces an error text to its kind: addresses and numbers out.
func csKind(op csOp, err error) string {
	s := csAddrRe.ReplaceAllString(err.Error(), "ADDR")
	s = csNumRe.ReplaceAllString(s, "N")
	return csOpNames[op] + ": " + s
}

// record classifies one call's outcome; it reports whether err was nil.
func (s *csStats) record(ctx context.Context, op csOp, err error) bool {
	cerr := ctx.Err()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[op]++
	switch {
	case err == nil:
		s.ok[op]++
		return true
	case cerr == nil:
		s.live[op]++
		s.liveErrs[csKind(op, err)]++
	case errors.Is(err, cerr):
		s.ended[op]++
	default:
		s.mismatch[op]++
		s.endedErrs[csKind(op, err)]++
	}
	return false
}

func csSum(a [csOps]int64) (n int64) {
	for _, v := range a {
		n += v
	}
	return n
}

func csTop(m map[string]int, n int) string {
	type kv struct {
		k string
		v int
	}
	var all []kv
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var b strings.Builder
	for i, e := range all {
		if i == n {
			fmt.Fprintf(&b, "\n    ... %d more kinds", len(all)-n)
			break
		}
		fmt.Fprintf(&b, "\n    %6d  %s", e.v, e.k)
	}
	return b.String()
}

// csValue is the value of key's write number seq: its key, number and
// size, then filler derived from seq, so a value can be told apart from
// every other and checked whole.
func csValue(key string, seq int64, size int) string {
	head := key + "|" + strconv.FormatInt(seq, 10) + "|" + strconv.Itoa(size) + "|"
	b := make([]byte, max(size, len(head)))
	copy(b, head)
	fill := byte('a' + seq%26)
	for i := len(head); i < len(b); i++ {
		b[i] = fill
	}
	return string(b)
}

// csParse returns the key and number of a value made by csValue, checking
// its size and filler.
func csParse(v string) (key string, seq int64, ok bool) {
	parts := strings.SplitN(v, "|", 4)
	if len(parts) != 4 {
		return "", 0, false
	}
	seq, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return "", 0, false
	}
	size, err := strconv.Atoi(parts[2])
	if err != nil {
		return "", 0, false
	}
	return parts[0], seq, v == csValue(parts[0], seq, size)
}

// csKey is what one goroutine knows of one of its string keys.
type csKey struct {
	name    string
	acked   int64            // the number of the last acknowledged write
	unknown map[int64]bool   // writes after acked of unknown outcome
	notSent map[int64]bool   // writes that said ErrNotSent
	wasUnk  map[int64]bool   // every write of unknown outcome
	how     map[int64]string // each write's kind and outcome, for messages
}

// wrote records the outcome of write seq, made by a call of kind what.
func (k *csKey) wrote(what string, seq int64, err error) {
	if what != "" {
		outcome := "ok"
		if err != nil {
			outcome = csNumRe.ReplaceAllString(csAddrRe.ReplaceAllString(err.Error(), "ADDR"), "N")
		}
		k.how[seq] = what + " -> " + outcome
	}
	switch {
	case err == nil:
		k.acked = seq
		for s := range k.unknown {
			if s < seq {
				delete(k.unknown, s)
			}
		}
	case errors.Is(err, respire.ErrNotSent):
		k.notSent[seq] = true
	default:
		k.unknown[seq] = true
		k.wasUnk[seq] = true
	}
}

// read checks a value read from the key; what it returns is the new state.
func (k *csKey) read(s *csStats, what, v string) {
	key, seq, ok := csParse(v)
	switch {
	case !ok || key != k.name:
		s.wrongf(csWrongValue, "%s %s: got a value that is not one of this key's: %.60q", what, k.name, v)
	case k.notSent[seq]:
		s.wrongf(csNotSentRan, "%s %s: got write %d (%s)", what, k.name, seq, k.how[seq])
	case seq == k.acked:
	case seq > k.acked && k.unknown[seq]:
		// That write of unknown outcome did run: the key's state now.
		k.wrote("", seq, nil)
	case seq < k.acked && k.wasUnk[seq]:
		s.wrongf(csLateWrite, "%s %s: got write %d (%s), which ran after write %d (%s)",
			what, k.name, seq, k.how[seq], k.acked, k.how[k.acked])
		k.acked = seq // the key's state now; report the event once
	default:
		s.wrongf(csWrongValue, "%s %s: got write %d (%s), want %d (%s) or one of the unknown %v",
			what, k.name, seq, k.how[seq], k.acked, k.how[k.acked], k.unknown)
	}
}

// csWorker is one goroutine's keys and accounts.
type csWorker struct {
	keys    []*csKey
	counter string
	list    string
	seq     int64
	incrAck int64 // acknowledged INCRs
	incrUnk int64 // INCRs of unknown outcome
	lastCtr int64 // the last counter value an INCR returned
}

func (w *csWorker) incr(s *csStats, v int64, err error) {
	switch {
	case err == nil:
		w.incrAck++
		if v <= w.lastCtr {
			s.wrongf(csWrongCounter, "INCR %s returned %d after %d", w.counter, v, w.lastCtr)
		}
		w.lastCtr = v
	case errors.Is(err, respire.ErrNotSent):
	default:
		w.incrUnk++
	}
}

// csCtx returns a context for one call: a cancel at a random moment of
// 0-2 ms, a deadline as far, or (one call in five) parent alone.
func csCtx(parent context.Context, r *rand.Rand) (context.Context, func()) {
	d := time.Duration(r.Int64N(int64(csMaxDelay) + 1))
	switch r.IntN(5) {
	case 0, 1:
		ctx, cancel := context.WithCancel(parent)
		t := time.AfterFunc(d, cancel)
		return ctx, func() { t.Stop(); cancel() }
	case 2, 3:
		return context.WithTimeout(parent, d)
	default:
		return parent, func() {}
	}
}

// runCancelStorm runs the storm on c for d and checks what must hold.
func runCancelStorm(t *testing.T, c *respire.Client, prefix string, d time.Duration) {
	parent, cancelParent := context.WithTimeout(context.Background(), d+time.Minute)
	defer cancelParent()
	s := &csStats{liveErrs: map[string]int{}, endedErrs: map[string]int{}, wrong: map[string][]string{}, nwrong: map[string]int{}}
	workers := make([]*csWorker, csWorkers)
	for g := range workers {
		// One hash tag per goroutine: its multi-key calls stay on one
		// slot of a cluster, and the goroutines spread over the shards.
		tag := fmt.Sprintf("%s{%d}", prefix, g)
		w := &csWorker{counter: tag + ":ctr", list: tag + ":list"}
		for i := range csKeys {
			k := &csKey{name: fmt.Sprintf("%s:k%d", tag, i), unknown: map[int64]bool{}, notSent: map[int64]bool{}, wasUnk: map[int64]bool{}, how: map[int64]string{}}
			require.NoError(t, c.Set(parent, k.name, csValue(k.name, 0, csSmall), nil))
			w.keys = append(w.keys, k)
		}
		_, err := c.Del(parent, w.counter, w.list)
		require.NoError(t, err)
		workers[g] = w
	}
	stop := time.Now().Add(d)
	var wg sync.WaitGroup
	var panics atomic.Int64
	for g, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					panics.Add(1)
					s.wrongf(csPanic, "goroutine %d panicked: %v", g, p)
				}
			}()
			r := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for time.Now().Before(stop) {
				n := r.IntN(csWeightSum)
				op := csOp(0)
				for ; n >= csWeights[op]; op++ {
					n -= csWeights[op]
				}
				ctx, cancel := csCtx(parent, r)
				csCall(ctx, c, s, w, r, op)
				cancel()
			}
		}()
	}
	wg.Wait()

	// The final counters, read with a live context.
	for _, w := range workers {
		got, err := c.Get(parent, w.counter)
		var n int64
		switch {
		case errors.Is(err, respire.Nil):
		case err != nil:
			require.NoError(t, err)
		default:
			n, err = strconv.ParseInt(got, 10, 64)
			require.NoError(t, err)
		}
		if n < w.incrAck || n > w.incrAck+w.incrUnk {
			s.wrongf(csWrongCounter, "counter %s is %d, want %d acknowledged INCRs plus at most %d of unknown outcome", w.counter, n, w.incrAck, w.incrUnk)
		}
		for _, k := range w.keys {
			v, err := c.Get(parent, k.name)
			require.NoError(t, err)
			k.read(s, "final GET", v)
		}
	}

	calls, ok := csSum(s.calls), csSum(s.ok)
	wrong := 0
	for _, n := range s.nwrong {
		wrong += n
	}
	live, ended, mismatch := csSum(s.live), csSum(s.ended), csSum(s.mismatch)
	t.Logf("cancel storm %s: %d calls, %d ok, %d failed with their context live, %d failed after it ended (%d not matching errors.Is(err, ctx.Err())), %d wrong results, %d panics",
		prefix, calls, ok, live, ended+mismatch, mismatch, wrong, panics.Load())
	var per strings.Builder
	for op := range csOps {
		fmt.Fprintf(&per, "\n    %-10s calls %6d ok %6d live-failed %5d ended %6d not-matching %5d",
			csOpNames[op], s.calls[op], s.ok[op], s.live[op], s.ended[op], s.mismatch[op])
	}
	t.Logf("per kind:%s", per.String())
	if live > 0 {
		t.Errorf("%d calls failed while their own context was live; top kinds:%s", live, csTop(s.liveErrs, csTopErrs))
	}
	if mismatch > 0 {
		t.Errorf("%d errors of calls whose context ended do not match errors.Is(err, ctx.Err()); top kinds:%s", mismatch, csTop(s.endedErrs, csTopErrs))
	}
	cats := make([]string, 0, len(s.nwrong))
	for c := range s.nwrong {
		cats = append(cats, c)
	}
	sort.Strings(cats)
	for _, c := range cats {
		t.Errorf("%d wrong results (%s), the first %d:\n    %s", s.nwrong[c], c, len(s.wrong[c]), strings.Join(s.wrong[c], "\n    "))
	}
	require.NotZero(t, ok, "no call succeeded")
}

// csCall runs one call of kind op under ctx and accounts for it.
func csCall(ctx context.Context, c *respire.Client, s *csStats, w *csWorker, r *rand.Rand, op csOp) {
	key := func() *csKey { return w.keys[r.IntN(len(w.keys))] }
	next := func() int64 { w.seq++; return w.seq }
	switch op {
	case csGet:
		k := key()
		v, err := c.Get(ctx, k.name)
		if s.record(ctx, op, err) {
			k.read(s, "GET", v)
		}
	case csSetSmall, csSetLarge:
		k, seq := key(), next()
		size := csSmall
		if op == csSetLarge {
			size = csLarge
		}
		err := c.Set(ctx, k.name, csValue(k.name, seq, size), nil)
		s.record(ctx, op, err)
		k.wrote(csOpNames[op], seq, err)
	case csIncr:
		v, err := c.Incr(ctx, w.counter)
		s.record(ctx, op, err)
		w.incr(s, v, err)
	case csMGet:
		names := make([]string, len(w.keys))
		for i, k := range w.keys {
			names[i] = k.name
		}
		vs, err := c.MGet(ctx, names...)
		if s.record(ctx, op, err) {
			if len(vs) != len(w.keys) {
				s.wrongf(csWrongValue, "MGET of %d keys returned %d values", len(w.keys), len(vs))
				return
			}
			for i, v := range vs {
				if !v.Valid {
					s.wrongf(csWrongValue, "MGET %s: nil", w.keys[i].name)
					continue
				}
				w.keys[i].read(s, "MGET", v.V)
			}
		}
	case csBatch:
		// Ten commands: SETs of 1 KiB on the first two keys, INCRs, and
		// GETs of the other keys (so no GET depends on a SET of this batch).
		b := c.NewBatch()
		type set struct {
			k   *csKey
			seq int64
			f   *respire.Future[struct{}]
		}
		type get struct {
			k *csKey
			f *respire.Future[string]
		}
		var sets []set
		var gets []get
		var incrs []*respire.Future[int64]
		for range 10 {
			switch r.IntN(3) {
			case 0:
				k, seq := w.keys[r.IntN(2)], next()
				sets = append(sets, set{k, seq, b.Set(k.name, csValue(k.name, seq, csSmall), nil)})
			case 1:
				incrs = append(incrs, b.Incr(w.counter))
			default:
				k := w.keys[2+r.IntN(len(w.keys)-2)]
				gets = append(gets, get{k, b.Get(k.name)})
			}
		}
		err := b.Exec(ctx)
		s.record(ctx, op, err)
		// Each command's outcome is its Future's: a reply ran, ErrNotSent
		// did not, any other error may have.
		for _, x := range sets {
			ferr := x.f.Err()
			if err == nil && ferr != nil {
				s.wrongf(csWrongFuture, "batch SET %s: Exec returned nil, the Future %v", x.k.name, ferr)
			}
			x.k.wrote("BATCH SET", x.seq, ferr)
		}
		for _, f := range incrs {
			v, ferr := f.Result()
			w.incr(s, v, ferr)
		}
		for _, x := range gets {
			v, ferr := x.f.Result()
			switch {
			case ferr == nil:
				x.k.read(s, "batch GET", v)
			case err == nil:
				s.wrongf(csWrongFuture, "batch GET %s: Exec returned nil, the Future %v", x.k.name, ferr)
			}
		}
	case csTx:
		tx := c.NewTx()
		k, seq := key(), next()
		set := tx.Set(k.name, csValue(k.name, seq, csSmall), nil)
		incr := tx.Incr(w.counter)
		get := tx.Get(k.name)
		err := tx.Exec(ctx)
		s.record(ctx, op, err)
		if err != nil {
			// All or nothing: the whole transaction shares one outcome.
			k.wrote("MULTI/EXEC SET", seq, err)
			w.incr(s, 0, err)
			return
		}
		if e := set.Err(); e != nil {
			s.wrongf(csWrongFuture, "MULTI/EXEC SET %s: %v", k.name, e)
		}
		k.wrote("MULTI/EXEC SET", seq, set.Err())
		v, e := incr.Result()
		w.incr(s, v, e)
		got, e := get.Result()
		if e != nil {
			s.wrongf(csWrongFuture, "MULTI/EXEC GET %s: %v", k.name, e)
			return
		}
		k.read(s, "MULTI/EXEC GET", got)
	case csPush:
		_, err := c.RPush(ctx, w.list, w.list+"|"+strconv.FormatInt(next(), 10))
		s.record(ctx, op, err)
	case csBLPop:
		ke, err := c.BLPop(ctx, csBlock, w.list)
		if errors.Is(err, respire.Nil) {
			err = nil // the server's timeout: no element, no failure
		} else if err == nil && (ke.Key != w.list || !strings.HasPrefix(ke.Element, w.list+"|")) {
			s.wrongf(csWrongValue, "BLPOP %s returned %q from %q", w.list, ke.Element, ke.Key)
		}
		s.record(ctx, op, err)
	}
}

// TestCancelStorm: the storm on one server with default Options, in RESP3
// and in RESP2.
func TestCancelStorm(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	for _, proto := range []int{3, 2} {
		t.Run(fmt.Sprintf("resp%d", proto), func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto})
			d := 3 * time.Second
			if proto == 2 {
				d = 2 * time.Second
			}
			runCancelStorm(t, c, fmt.Sprintf("cstorm%d:", proto), d)
		})
	}
}

// TestClusterCancelStorm: the storm on the shared 3-primary cluster with
// default Options.
func TestClusterCancelStorm(t *testing.T) {
	hc := harness.SharedCluster(t, "")
	c := connect(t, respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}})
	runCancelStorm(t, c, "ccstorm:", 3*time.Second)
}
