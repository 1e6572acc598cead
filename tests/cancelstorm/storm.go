// Package cancelstorm runs a cancellation storm against a client: many
// goroutines share it and run every kind of call (GET, SET of 1 KiB and
// 128 KiB, INCR, MGET, a batch of ten, MULTI/EXEC, RPUSH and BLPOP) under
// contexts that mostly end 0-2 ms in, some by a cancel, some by a
// deadline, the rest left alone. It counts what a caller should never see
// and checks the data:
//   - calls that failed while their own context was still live (another
//     caller leaving is no reason for them to fail);
//   - errors of calls whose context had ended that do not match
//     errors.Is(err, ctx.Err());
//   - wrong results: a value that is not its key's, an older acknowledged
//     value after a newer acknowledged write (or a write of unknown outcome
//     that ran after a later acknowledged one), a write that said it was
//     not sent but ran, a counter outside its acknowledged INCRs and those
//     plus the ones of unknown outcome.
//
// The client is behind the small Client interface, so the same storm runs
// against Respire in the integration tests and beside its peers in the
// benchmarks module.
package cancelstorm

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Client is what the storm does with a client. Every key a call names
// shares one hash tag, so a cluster client serves the call on one slot.
type Client interface {
	Get(ctx context.Context, key string) (string, error)
	Set(ctx context.Context, key, value string) error
	Incr(ctx context.Context, key string) (int64, error)
	// MGet returns the values of keys; "" for a missing key.
	MGet(ctx context.Context, keys []string) ([]string, error)
	// Batch sends cmds as one pipeline, stores each one's result and error
	// in it, and returns the error of the pipeline as a whole.
	Batch(ctx context.Context, cmds []Cmd) error
	// Tx sends cmds between MULTI and EXEC and stores each one's result
	// and error in it when EXEC ran; otherwise it returns the error.
	Tx(ctx context.Context, cmds []Cmd) error
	RPush(ctx context.Context, list, value string) error
	// BLPop pops from list, waiting up to timeout on the server; key is ""
	// (and err nil) when the server's timeout passed with no element.
	BLPop(ctx context.Context, list string, timeout time.Duration) (key, elem string, err error)
	// NotSent reports whether err says the command was certainly not sent
	// (Respire's ErrNotSent); false when the client cannot tell.
	NotSent(err error) bool
	// IsNil reports whether err is the client's nil reply (a missing key).
	IsNil(err error) bool
}

// CmdKind is the kind of a command of a batch or a transaction.
type CmdKind int

// The kinds of commands of batches and transactions.
const (
	CmdSet CmdKind = iota
	CmdIncr
	CmdGet
)

// Cmd is one command of a batch or transaction, and then its result.
type Cmd struct {
	Kind  CmdKind
	Key   string
	Value string // for CmdSet
	Str   string // CmdGet's value
	Int   int64  // CmdIncr's value
	Err   error
}

// Op is a kind of call of the storm.
type Op int

// The kinds of calls.
const (
	OpGet Op = iota
	OpSetSmall
	OpSetLarge
	OpIncr
	OpMGet
	OpBatch
	OpTx
	OpPush
	OpBLPop
	NumOps
)

// OpNames are the kinds' names, in Op order.
var OpNames = [NumOps]string{"GET", "SET1K", "SET128K", "INCR", "MGET", "BATCH", "MULTI/EXEC", "RPUSH", "BLPOP"}

// weights is how often each kind runs, in parts of their sum.
var weights = [NumOps]int{OpGet: 20, OpSetSmall: 15, OpSetLarge: 8, OpIncr: 15, OpMGet: 8, OpBatch: 8, OpTx: 8, OpPush: 10, OpBLPop: 8}

// The categories of wrong results.
const (
	WrongValue   = "wrong value"        // not the key's, or an older acknowledged write's
	LateWrite    = "late write"         // a write of unknown outcome ran after a later acknowledged one
	NotSentRan   = "not-sent write ran" // a write whose error said it was not sent ran
	WrongCounter = "counter"            // INCR accounting
	WrongFuture  = "future"             // a batch's or transaction's command disagrees with it
	Panic        = "panic"
)

// Config shapes a storm; zero fields take the defaults.
type Config struct {
	Workers  int           // goroutines; default 48
	Duration time.Duration // default 3s
	// Prefix starts every key, so that storms can share a server.
	Prefix string
	// MaxDelay bounds when a call's context ends; default 2ms.
	MaxDelay time.Duration
	// LiveOneIn: one call in LiveOneIn runs under the parent context
	// alone; default 5.
	LiveOneIn int
	// BlockTimeout is BLPOP's server-side timeout; default 20ms.
	BlockTimeout time.Duration
	// StuckAfter: once the storm ended, a call that has been running
	// this long is stuck, and Run returns ErrStuck without waiting for
	// it; default 10s.
	StuckAfter time.Duration
}

// ErrStuck is wrapped by Run's error when calls did not return (Result's
// Stuck and StuckReport say which).
var ErrStuck = errors.New("cancelstorm: calls did not return")

const (
	smallValue = 1 << 10
	largeValue = 128 << 10
	keysPer    = 4 // string keys per goroutine
)

// Result is what a storm counted.
type Result struct {
	mu sync.Mutex
	// Calls, OK: calls made, calls that succeeded.
	Calls, OK [NumOps]int64
	// Live: calls that failed while their own context was live.
	Live [NumOps]int64
	// Ended: calls that failed after their context ended, with an error
	// matching errors.Is(err, ctx.Err()); Mismatch: not matching it.
	Ended, Mismatch [NumOps]int64
	// LiveErrs and MismatchErrs count the errors of Live and Mismatch by
	// kind: how the call's context was to end ([cancel], [deadline] or
	// [live], the parent alone), the call's kind and the error's text
	// without addresses and numbers.
	LiveErrs, MismatchErrs map[string]int
	// NotSent counts the errors the client said were not sent.
	NotSent int64
	// Wrong holds the first wrong results of each category; NWrong counts
	// them all.
	Wrong  map[string][]string
	NWrong map[string]int
	// MaxLate is, by kind of call, the longest a call took to return
	// after its context ended.
	MaxLate [NumOps]time.Duration
	// Stuck counts the calls found running for longer than StuckAfter
	// once the storm ended; StuckReport names them and shows their
	// goroutines.
	Stuck       int
	StuckReport string
}

// Total sums a per-kind count.
func Total(a [NumOps]int64) (n int64) {
	for _, v := range a {
		n += v
	}
	return n
}

// WrongTotal is the number of wrong results.
func (r *Result) WrongTotal() (n int) {
	for _, v := range r.NWrong {
		n += v
	}
	return n
}

// Summary is one line of the totals.
func (r *Result) Summary() string {
	var late time.Duration
	for _, d := range r.MaxLate {
		late = max(late, d)
	}
	return fmt.Sprintf("%d calls, %d ok, %d failed with their context live, %d failed after it ended (%d not matching errors.Is(err, ctx.Err()), %d said not sent), %d wrong results, %d stuck; the latest return %v after its context ended",
		Total(r.Calls), Total(r.OK), Total(r.Live), Total(r.Ended)+Total(r.Mismatch), Total(r.Mismatch), r.NotSent, r.WrongTotal(), r.Stuck, late.Round(time.Microsecond))
}

// PerOp is a table of the counts by kind of call, a line each.
func (r *Result) PerOp() string {
	var b strings.Builder
	for op := range NumOps {
		fmt.Fprintf(&b, "%-10s calls %6d ok %6d live-failed %5d ended %6d not-matching %5d latest return %v\n",
			OpNames[op], r.Calls[op], r.OK[op], r.Live[op], r.Ended[op], r.Mismatch[op], r.MaxLate[op].Round(time.Microsecond))
	}
	return b.String()
}

// WrongReport lists the wrong results by category, "" when there are none.
func (r *Result) WrongReport(except ...string) string {
	cats := make([]string, 0, len(r.NWrong))
	for c := range r.NWrong {
		if !slices.Contains(except, c) {
			cats = append(cats, c)
		}
	}
	sort.Strings(cats)
	var b strings.Builder
	for _, c := range cats {
		fmt.Fprintf(&b, "%d wrong results (%s), the first %d:\n    %s\n", r.NWrong[c], c, len(r.Wrong[c]), strings.Join(r.Wrong[c], "\n    "))
	}
	return b.String()
}

// Top lists the n most frequent kinds of m, a line each, most frequent
// first.
func Top(m map[string]int, n int) []string {
	type kv struct {
		k string
		v int
	}
	all := make([]kv, 0, len(m))
	for k, v := range m {
		all = append(all, kv{k, v})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].v > all[j].v || all[i].v == all[j].v && all[i].k < all[j].k })
	var out []string
	for i, e := range all {
		if i == n {
			out = append(out, fmt.Sprintf("... %d more kinds", len(all)-n))
			break
		}
		out = append(out, fmt.Sprintf("%6d  %s", e.v, e.k))
	}
	return out
}

func (r *Result) wrongf(category, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.NWrong[category]++
	if len(r.Wrong[category]) < 8 {
		r.Wrong[category] = append(r.Wrong[category], fmt.Sprintf(format, args...))
	}
}

var (
	addrRe = regexp.MustCompile(`\[?[0-9a-f:.]*\]?:\d{2,5}\b`)
	numRe  = regexp.MustCompile(`\d+`)
)

// ErrKind reduces an error's text to its kind: addresses and numbers out.
func ErrKind(err error) string {
	return numRe.ReplaceAllString(addrRe.ReplaceAllString(err.Error(), "ADDR"), "N")
}

// ended returns why ctx ended, or nil: its Err, or DeadlineExceeded once
// its deadline passed (a deadline passes a moment before the context's
// timer says so).
func ended(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) {
		return context.DeadlineExceeded
	}
	return nil
}

// ctxKindKey keys, in a call's context, how that context ends: "cancel",
// "deadline" or "live" (the parent alone).
type ctxKindKey struct{}

// record classifies one call's outcome; it reports whether err was nil.
func (r *Result) record(ctx context.Context, c Client, op Op, err error) bool {
	cerr := ended(ctx)
	kind, _ := ctx.Value(ctxKindKey{}).(string)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Calls[op]++
	if err != nil && c.NotSent(err) {
		r.NotSent++
	}
	switch {
	case err == nil:
		r.OK[op]++
		return true
	case cerr == nil:
		r.Live[op]++
		r.LiveErrs["["+kind+"] "+OpNames[op]+": "+ErrKind(err)]++
	case errors.Is(err, cerr):
		r.Ended[op]++
	default:
		r.Mismatch[op]++
		r.MismatchErrs["["+kind+"] "+OpNames[op]+": "+ErrKind(err)]++
	}
	return false
}

// value is the value of key's write number seq: its key, number and size,
// then filler derived from seq, so that a value can be told apart from
// every other and checked whole.
func value(key string, seq int64, size int) string {
	head := key + "|" + strconv.FormatInt(seq, 10) + "|" + strconv.Itoa(size) + "|"
	b := make([]byte, max(size, len(head)))
	copy(b, head)
	fill := byte('a' + seq%26)
	for i := len(head); i < len(b); i++ {
		b[i] = fill
	}
	return string(b)
}

// parse returns the key and number of a value made by value, checking its
// size and filler.
func parse(v string) (key string, seq int64, ok bool) {
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
	return parts[0], seq, v == value(parts[0], seq, size)
}

// key is what one goroutine knows of one of its string keys.
type key struct {
	name    string
	acked   int64            // the number of the last acknowledged write
	unknown map[int64]bool   // writes after acked of unknown outcome
	wasUnk  map[int64]bool   // every write of unknown outcome
	notSent map[int64]bool   // writes that said they were not sent
	how     map[int64]string // each write's kind and outcome, for messages
}

// wrote records the outcome of write seq, made by a call of kind what.
func (k *key) wrote(c Client, what string, seq int64, err error) {
	if what != "" {
		outcome := "ok"
		if err != nil {
			outcome = ErrKind(err)
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
	case c.NotSent(err):
		k.notSent[seq] = true
	default:
		k.unknown[seq] = true
		k.wasUnk[seq] = true
	}
}

// read checks a value read from the key.
func (k *key) read(r *Result, what, v string) {
	name, seq, ok := parse(v)
	switch {
	case !ok || name != k.name:
		r.wrongf(WrongValue, "%s %s: got a value that is not one of this key's: %.60q", what, k.name, v)
	case k.notSent[seq]:
		r.wrongf(NotSentRan, "%s %s: got write %d (%s)", what, k.name, seq, k.how[seq])
	case seq == k.acked:
	case seq > k.acked && k.unknown[seq]:
		// That write of unknown outcome ran: it is the key's state now.
		k.acked = seq
	case seq < k.acked && k.wasUnk[seq]:
		r.wrongf(LateWrite, "%s %s: got write %d (%s), which ran after write %d (%s)",
			what, k.name, seq, k.how[seq], k.acked, k.how[k.acked])
		k.acked = seq // the key's state now; report the event once
	default:
		r.wrongf(WrongValue, "%s %s: got write %d (%s), want %d (%s) or one of the unknown %v",
			what, k.name, seq, k.how[seq], k.acked, k.how[k.acked], k.unknown)
	}
}

// worker is one goroutine's keys and accounts.
type worker struct {
	keys    []*key
	names   []string
	counter string
	list    string
	seq     int64
	incrAck int64 // acknowledged INCRs
	incrUnk int64 // INCRs of unknown outcome
	lastCtr int64 // the last counter value an INCR returned
	// busy is the call running (its Op plus one; 0 between calls), since
	// when (UnixNano), for finding stuck calls.
	busy, since atomic.Int64
}

func (w *worker) incr(c Client, r *Result, v int64, err error) {
	switch {
	case err == nil:
		w.incrAck++
		if v <= w.lastCtr {
			r.wrongf(WrongCounter, "INCR %s returned %d after %d", w.counter, v, w.lastCtr)
		}
		w.lastCtr = v
	case c.NotSent(err):
	default:
		w.incrUnk++
	}
}

// Run runs the storm on c under parent, which should allow the storm's
// Duration and a margin. Its error is about the set-up or the final reads,
// made under parent alone; what the storm saw is in the Result.
func Run(parent context.Context, c Client, cfg Config) (*Result, error) {
	if cfg.Workers == 0 {
		cfg.Workers = 48
	}
	if cfg.Duration == 0 {
		cfg.Duration = 3 * time.Second
	}
	if cfg.MaxDelay == 0 {
		cfg.MaxDelay = 2 * time.Millisecond
	}
	if cfg.LiveOneIn == 0 {
		cfg.LiveOneIn = 5
	}
	if cfg.BlockTimeout == 0 {
		cfg.BlockTimeout = 20 * time.Millisecond
	}
	if cfg.StuckAfter == 0 {
		cfg.StuckAfter = 10 * time.Second
	}
	r := &Result{LiveErrs: map[string]int{}, MismatchErrs: map[string]int{}, Wrong: map[string][]string{}, NWrong: map[string]int{}}
	workers := make([]*worker, cfg.Workers)
	for g := range workers {
		// One hash tag per goroutine: its multi-key calls stay on one
		// slot of a cluster, and the goroutines spread over the shards.
		tag := fmt.Sprintf("%s{%d}", cfg.Prefix, g)
		w := &worker{counter: tag + ":ctr", list: tag + ":list"}
		for i := range keysPer {
			k := &key{name: fmt.Sprintf("%s:k%d", tag, i), unknown: map[int64]bool{}, wasUnk: map[int64]bool{}, notSent: map[int64]bool{}, how: map[int64]string{0: "set-up"}}
			if err := c.Set(parent, k.name, value(k.name, 0, smallValue)); err != nil {
				return nil, fmt.Errorf("set-up: SET %s: %w", k.name, err)
			}
			w.keys = append(w.keys, k)
			w.names = append(w.names, k.name)
		}
		if err := c.Set(parent, w.counter, "0"); err != nil {
			return nil, fmt.Errorf("set-up: SET %s: %w", w.counter, err)
		}
		workers[g] = w
	}
	var weightSum int
	for _, w := range weights {
		weightSum += w
	}
	stop := time.Now().Add(cfg.Duration)
	var wg sync.WaitGroup
	for g, w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if p := recover(); p != nil {
					r.wrongf(Panic, "goroutine %d panicked: %v", g, p)
				}
			}()
			rnd := rand.New(rand.NewPCG(uint64(g), uint64(time.Now().UnixNano())))
			for time.Now().Before(stop) {
				n := rnd.IntN(weightSum)
				op := Op(0)
				for ; n >= weights[op]; op++ {
					n -= weights[op]
				}
				ctx, cancel, end := callCtx(parent, rnd, cfg)
				w.since.Store(time.Now().UnixNano())
				w.busy.Store(int64(op) + 1)
				call(ctx, c, r, w, rnd, op, cfg)
				w.busy.Store(0)
				if late := time.Since(end); !end.IsZero() && late > 0 {
					r.mu.Lock()
					r.MaxLate[op] = max(r.MaxLate[op], late)
					r.mu.Unlock()
				}
				cancel()
			}
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(cfg.StuckAfter / 4)
	defer tick.Stop()
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if time.Now().After(stop) && r.stuck(workers, cfg.StuckAfter) {
				return r, fmt.Errorf("%w: %d calls had not returned after %v", ErrStuck, r.Stuck, cfg.StuckAfter)
			}
		}
	}

	// The final state, read under parent.
	for _, w := range workers {
		got, err := c.Get(parent, w.counter)
		if err != nil {
			return r, fmt.Errorf("final GET %s: %w", w.counter, err)
		}
		n, err := strconv.ParseInt(got, 10, 64)
		if err != nil {
			return r, fmt.Errorf("final GET %s: %q: %w", w.counter, got, err)
		}
		if n < w.incrAck || n > w.incrAck+w.incrUnk {
			r.wrongf(WrongCounter, "counter %s is %d, want %d acknowledged INCRs plus at most %d of unknown outcome", w.counter, n, w.incrAck, w.incrUnk)
		}
		for _, k := range w.keys {
			v, err := c.Get(parent, k.name)
			if err != nil {
				return r, fmt.Errorf("final GET %s: %w", k.name, err)
			}
			k.read(r, "final GET", v)
		}
	}
	return r, nil
}

// callCtx returns a context for one call: a cancel at a random moment of
// 0 to MaxDelay, a deadline as far, or (one call in LiveOneIn) parent
// alone.
// end is when the context ends (zero for parent alone).
func callCtx(parent context.Context, rnd *rand.Rand, cfg Config) (ctx context.Context, cancel func(), end time.Time) {
	if rnd.IntN(cfg.LiveOneIn) == 0 {
		return context.WithValue(parent, ctxKindKey{}, "live"), func() {}, time.Time{}
	}
	d := time.Duration(rnd.Int64N(int64(cfg.MaxDelay) + 1))
	end = time.Now().Add(d)
	if rnd.IntN(2) == 0 {
		ctx, cancel = context.WithDeadline(context.WithValue(parent, ctxKindKey{}, "deadline"), end)
		return ctx, cancel, end
	}
	ctx, stop := context.WithCancel(context.WithValue(parent, ctxKindKey{}, "cancel"))
	t := time.AfterFunc(d, stop)
	return ctx, func() { t.Stop(); stop() }, end
}

// stuck records the calls that have been running for longer than after,
// and the goroutines that run them; it reports whether there are any.
func (r *Result) stuck(workers []*worker, after time.Duration) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	for g, w := range workers {
		since := time.Since(time.Unix(0, w.since.Load()))
		if op := w.busy.Load(); op != 0 && since > after {
			r.Stuck++
			fmt.Fprintf(&b, "goroutine %d: %s, running for %v\n", g, OpNames[op-1], since.Round(time.Millisecond))
		}
	}
	if r.Stuck == 0 {
		return false
	}
	buf := make([]byte, 4<<20)
	buf = buf[:runtime.Stack(buf, true)]
	shown := 0
	for _, st := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(st, "cancelstorm.call(") && shown < 3 {
			b.WriteString(st + "\n\n")
			shown++
		}
	}
	r.StuckReport = b.String()
	return true
}

// call runs one call of kind op under ctx and accounts for it.
func call(ctx context.Context, c Client, r *Result, w *worker, rnd *rand.Rand, op Op, cfg Config) {
	pick := func() *key { return w.keys[rnd.IntN(len(w.keys))] }
	next := func() int64 { w.seq++; return w.seq }
	switch op {
	case OpGet:
		k := pick()
		v, err := c.Get(ctx, k.name)
		if r.record(ctx, c, op, err) {
			k.read(r, "GET", v)
		}
	case OpSetSmall, OpSetLarge:
		k, seq := pick(), next()
		size := smallValue
		if op == OpSetLarge {
			size = largeValue
		}
		err := c.Set(ctx, k.name, value(k.name, seq, size))
		r.record(ctx, c, op, err)
		k.wrote(c, OpNames[op], seq, err)
	case OpIncr:
		v, err := c.Incr(ctx, w.counter)
		r.record(ctx, c, op, err)
		w.incr(c, r, v, err)
	case OpMGet:
		vs, err := c.MGet(ctx, w.names)
		if !r.record(ctx, c, op, err) {
			return
		}
		if len(vs) != len(w.keys) {
			r.wrongf(WrongValue, "MGET of %d keys returned %d values", len(w.keys), len(vs))
			return
		}
		for i, v := range vs {
			w.keys[i].read(r, "MGET", v)
		}
	case OpBatch:
		batch(ctx, c, r, w, rnd, next)
	case OpTx:
		k, seq := pick(), next()
		cmds := []Cmd{
			{Kind: CmdSet, Key: k.name, Value: value(k.name, seq, smallValue)},
			{Kind: CmdIncr, Key: w.counter},
			{Kind: CmdGet, Key: k.name},
		}
		err := c.Tx(ctx, cmds)
		r.record(ctx, c, op, err)
		if err != nil {
			// All or nothing: the transaction has one outcome.
			k.wrote(c, "MULTI/EXEC SET", seq, err)
			w.incr(c, r, 0, err)
			return
		}
		for _, x := range cmds {
			if x.Err != nil {
				r.wrongf(WrongFuture, "MULTI/EXEC ran, its command on %s failed: %v", x.Key, x.Err)
			}
		}
		k.wrote(c, "MULTI/EXEC SET", seq, cmds[0].Err)
		w.incr(c, r, cmds[1].Int, cmds[1].Err)
		if cmds[2].Err == nil {
			k.read(r, "MULTI/EXEC GET", cmds[2].Str)
		}
	case OpPush:
		err := c.RPush(ctx, w.list, w.list+"|"+strconv.FormatInt(next(), 10))
		r.record(ctx, c, op, err)
	case OpBLPop:
		key, elem, err := c.BLPop(ctx, w.list, cfg.BlockTimeout)
		if r.record(ctx, c, op, err) && key != "" && (key != w.list || !strings.HasPrefix(elem, w.list+"|")) {
			r.wrongf(WrongValue, "BLPOP %s returned %q from %q", w.list, elem, key)
		}
	}
}

// batch runs a batch of ten: SETs of 1 KiB on the first two keys, INCRs,
// and GETs of the other keys (so that no GET depends on a SET of the same
// batch).
func batch(ctx context.Context, c Client, r *Result, w *worker, rnd *rand.Rand, next func() int64) {
	cmds := make([]Cmd, 10)
	seqs := make([]int64, 10)
	for i := range cmds {
		switch rnd.IntN(3) {
		case 0:
			k := w.keys[rnd.IntN(2)]
			seqs[i] = next()
			cmds[i] = Cmd{Kind: CmdSet, Key: k.name, Value: value(k.name, seqs[i], smallValue)}
		case 1:
			cmds[i] = Cmd{Kind: CmdIncr, Key: w.counter}
		default:
			cmds[i] = Cmd{Kind: CmdGet, Key: w.keys[2+rnd.IntN(len(w.keys)-2)].name}
		}
	}
	err := c.Batch(ctx, cmds)
	r.record(ctx, c, OpBatch, err)
	// Each command's outcome is its own: a reply ran, a not-sent error
	// did not, any other error may have.
	for i, x := range cmds {
		if err == nil && x.Err != nil {
			r.wrongf(WrongFuture, "batch succeeded, its command on %s failed: %v", x.Key, x.Err)
		}
		switch x.Kind {
		case CmdSet:
			w.keyOf(x.Key).wrote(c, "BATCH SET", seqs[i], x.Err)
		case CmdIncr:
			w.incr(c, r, x.Int, x.Err)
		case CmdGet:
			if x.Err == nil {
				w.keyOf(x.Key).read(r, "batch GET", x.Str)
			}
		}
	}
}

func (w *worker) keyOf(name string) *key {
	for _, k := range w.keys {
		if k.name == name {
			return k
		}
	}
	panic("cancelstorm: no key " + name)
}
