package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/respire"
)

// lateSlack is how far past its deadline a call may return before it is
// counted late.
const lateSlack = 50 * time.Millisecond

// stats are the counters every load goroutine adds to.
type stats struct {
	ok, errs, late atomic.Int64
	// corrupt counts replies that were not the reply of their command: a
	// value of another key, an old value, a reply of the wrong shape.
	corrupt atomic.Int64
	// stale counts cached reads that returned a value older than a write
	// of this process that had already succeeded.
	stale atomic.Int64
	// lost counts pub/sub messages published to our subscriber that never
	// arrived, with no Gap to say so; gaps counts the Gaps.
	lost, gaps atomic.Int64
	// msgs counts the pub/sub messages received.
	msgs atomic.Int64
	// epoch grows before the server is killed and after it serves again:
	// a value may be gone only when the epoch changed since it was written.
	epoch atomic.Uint64
	// lastOK is when a call last succeeded (UnixNano), for recovery times.
	lastOK atomic.Int64

	mu           sync.Mutex
	maxOver      time.Duration
	kinds        map[string]int64
	slots        []*slot
	reported     int // violations printed
	lateReported int // late calls printed
}

func newStats() *stats { return &stats{kinds: map[string]int64{}} }

// slot holds the deadline (UnixNano) of the call its goroutine is making,
// 0 between calls, so that a call that never returns is seen.
type slot = atomic.Int64

func (s *stats) newSlot() *slot {
	sl := new(slot)
	s.mu.Lock()
	s.slots = append(s.slots, sl)
	s.mu.Unlock()
	return sl
}

// stuck counts the calls running more than a second past their deadline.
func (s *stats) stuck() int {
	limit := time.Now().Add(-time.Second).UnixNano()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, sl := range s.slots {
		if d := sl.Load(); d != 0 && d < limit {
			n++
		}
	}
	return n
}

// call runs op with its own deadline and records its timing and outcome
// (bad: what is wrong with its reply, or "").
func (s *stats) call(sl *slot, parent context.Context, timeout time.Duration, op func(ctx context.Context) (string, error)) error {
	ctx, cancel := context.WithTimeout(parent, timeout)
	deadline, _ := ctx.Deadline()
	sl.Store(deadline.UnixNano())
	bad, err := op(ctx)
	sl.Store(0)
	end := time.Now()
	cancel()
	if parent.Err() != nil {
		return err // the run is ending: not a fault of the client
	}
	s.record(end, deadline, err, bad, 1)
	return err
}

// record adds n outcomes of a call that ended at end.
func (s *stats) record(end, deadline time.Time, err error, bad string, n int64) {
	if over := end.Sub(deadline); over > 0 {
		s.mu.Lock()
		s.maxOver = max(s.maxOver, over)
		s.mu.Unlock()
		if over > lateSlack {
			s.late.Add(n)
			s.reportLate(over, err)
		}
	}
	s.outcome(err, bad, n, end)
}

func (s *stats) outcome(err error, bad string, n int64, end time.Time) {
	var ue *respire.UnexpectedReplyError
	if bad == "" && errors.As(err, &ue) {
		bad = ue.Error()
	}
	switch {
	case bad != "":
		s.corrupt.Add(n)
		s.report("corrupted", bad)
	case err != nil:
		s.errs.Add(n)
		s.mu.Lock()
		s.kinds[errKind(err)] += n
		s.mu.Unlock()
	default:
		s.ok.Add(n)
		s.lastOK.Store(end.UnixNano())
	}
}

// report prints the first violations, so a long run's log stays readable.
func (s *stats) report(what, detail string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.reported < 20 {
		s.reported++
		fmt.Fprintf(os.Stderr, "soak: %s: %s\n", what, detail)
	}
}

// reportLate prints the first late calls.
func (s *stats) reportLate(over time.Duration, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lateReported < 10 {
		s.lateReported++
		fmt.Fprintf(os.Stderr, "soak: late: %v past the deadline: %v\n", over.Round(time.Millisecond), err)
	}
}

func (s *stats) errKinds() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, k := range []string{"conn", "stalled", "unavailable", "deadline", "protocol", "server", "closed", "other"} {
		if n := s.kinds[k]; n > 0 {
			fmt.Fprintf(&b, " %s=%d", k, n)
		}
	}
	return strings.TrimSpace(b.String())
}

func errKind(err error) string {
	var se *respire.Error
	var ce *respire.ConnError
	switch {
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
		return "server"
	case errors.Is(err, respire.ErrClosed):
		return "closed"
	}
	return "other"
}

// load is the running workload.
type load struct {
	ctx     context.Context
	c       *respire.Client // plain client: KV, batches, pub/sub
	cc      *respire.Client // client with the client-side cache
	timeout time.Duration
	st      *stats
}

// seed sets a counter to its base, until it succeeds or the run ends.
func (l *load) seed(sl *slot, c *respire.Client, ctr *counter) {
	epoch := l.st.epoch.Load()
	err := l.st.call(sl, l.ctx, l.timeout, func(ctx context.Context) (string, error) {
		err := c.Set(ctx, ctr.key, strconv.FormatInt(ctr.base, 10), nil)
		if errors.Is(err, respire.Nil) {
			return "SET " + ctr.key + " replied null", nil
		}
		return "", err
	})
	if err == nil {
		ctr.seeded, ctr.seededAt, ctr.prev = true, epoch, ctr.base
	}
}

// kv is a goroutine doing SET, GET and INCR on keys of its own.
func (l *load) kv(id int) {
	k := newKeyState(fmt.Sprintf("soak:kv:{%d}:v", id))
	ctr := &counter{key: fmt.Sprintf("soak:kv:{%d}:n", id), base: int64(id+1) * 1e9}
	sl := l.st.newSlot()
	for l.ctx.Err() == nil {
		if !ctr.seeded {
			l.seed(sl, l.c, ctr)
			continue
		}
		l.set(sl, l.c, k)
		l.get(sl, k, func(ctx context.Context) (string, error) { return l.c.Get(ctx, k.key) }, false)
		_ = l.st.call(sl, l.ctx, l.timeout, func(ctx context.Context) (string, error) {
			n, err := l.c.Incr(ctx, ctr.key)
			if err != nil {
				return "", err
			}
			return ctr.check(n, l.st.epoch.Load()), nil
		})
	}
}

func (l *load) set(sl *slot, c *respire.Client, k *keyState) {
	seq, v := k.next()
	epoch := l.st.epoch.Load()
	var err error
	_ = l.st.call(sl, l.ctx, l.timeout, func(ctx context.Context) (string, error) {
		err = c.Set(ctx, k.key, v, nil)
		if errors.Is(err, respire.Nil) {
			return "SET " + k.key + " replied null", nil
		}
		return "", err
	})
	if l.ctx.Err() == nil {
		k.setDone(seq, err, epoch)
	}
}

// get reads k with read and checks the value. For a cached read, an old
// value of k counts as stale rather than corrupted.
func (l *load) get(sl *slot, k *keyState, read func(ctx context.Context) (string, error), cached bool) {
	_ = l.st.call(sl, l.ctx, l.timeout, func(ctx context.Context) (string, error) {
		got, err := read(ctx)
		bad, old := "", false
		switch {
		case errors.Is(err, respire.Nil):
			bad, err = k.checkNil(l.st.epoch.Load()), nil
		case err == nil:
			bad, old = k.check(got)
		}
		if cached && old {
			// An old value of the right key from the cache: stale, not
			// misattributed.
			l.st.stale.Add(1)
			l.st.report("stale cached read", bad)
			return "", nil
		}
		return bad, err
	})
}

// cached is a goroutine that writes a key through the caching client and
// reads it back through its cache: once a write's reply is in, no read may
// return the old value.
func (l *load) cached(id int) {
	k := newKeyState(fmt.Sprintf("soak:cached:{%d}", id))
	read := func(ctx context.Context) (string, error) { return l.cc.Cached(time.Minute).Get(ctx, k.key) }
	sl := l.st.newSlot()
	for l.ctx.Err() == nil {
		l.set(sl, l.cc, k)
		for range 3 { // a miss, then hits
			l.get(sl, k, read, true)
		}
	}
}

// batch is a goroutine running batches of 10 commands on keys of its own.
func (l *load) batch(id int) {
	keys := []*keyState{
		newKeyState(fmt.Sprintf("soak:batch:{%d}:a", id)),
		newKeyState(fmt.Sprintf("soak:batch:{%d}:b", id)),
		newKeyState(fmt.Sprintf("soak:batch:{%d}:c", id)),
	}
	ctr := &counter{key: fmt.Sprintf("soak:batch:{%d}:n", id), base: int64(1000+id) * 1e9}
	sl := l.st.newSlot()
	for l.ctx.Err() == nil {
		if !ctr.seeded {
			l.seed(sl, l.c, ctr)
			continue
		}
		l.runBatch(sl, keys, ctr)
	}
}

// runBatch sends SET a, GET a, SET b, GET b, SET c, GET c, INCR, INCR,
// GET a, GET b in one Batch and checks every result.
func (l *load) runBatch(sl *slot, keys []*keyState, ctr *counter) {
	b := l.c.NewBatch()
	seqs := make([]int, len(keys))
	sets := make([]*respire.Future[struct{}], len(keys))
	gets := make([]*respire.Future[string], 0, 5)
	getKeys := make([]*keyState, 0, 5)
	for i, k := range keys {
		var v string
		seqs[i], v = k.next()
		sets[i] = b.Set(k.key, v, nil)
		gets = append(gets, b.Get(k.key))
		getKeys = append(getKeys, k)
	}
	incrs := []*respire.Future[int64]{b.Incr(ctr.key), b.Incr(ctr.key)}
	gets = append(gets, b.Get(keys[0].key), b.Get(keys[1].key))
	getKeys = append(getKeys, keys[0], keys[1])

	epoch := l.st.epoch.Load()
	ctx, cancel := context.WithTimeout(l.ctx, l.timeout)
	deadline, _ := ctx.Deadline()
	sl.Store(deadline.UnixNano())
	execErr := b.Exec(ctx)
	sl.Store(0)
	end := time.Now()
	cancel()
	if l.ctx.Err() != nil {
		return
	}
	n := int64(len(sets) + len(gets) + len(incrs))
	if execErr != nil {
		for i, k := range keys {
			k.setDone(seqs[i], execErr, epoch)
		}
		l.st.record(end, deadline, execErr, "", n)
		return
	}
	l.st.record(end, deadline, nil, "", 0) // the timing, once per batch
	for i, k := range keys {
		_, err := sets[i].Result()
		bad := ""
		if errors.Is(err, respire.Nil) {
			bad, err = "SET "+k.key+" replied null", nil
		}
		k.setDone(seqs[i], err, epoch)
		l.st.outcome(err, bad, 1, end)
	}
	now := l.st.epoch.Load()
	for i, f := range gets {
		got, err := f.Result()
		bad := ""
		switch {
		case errors.Is(err, respire.Nil):
			bad, err = getKeys[i].checkNil(now), nil
		case err == nil:
			bad, _ = getKeys[i].check(got)
		}
		l.st.outcome(err, bad, 1, end)
	}
	for _, f := range incrs {
		v, err := f.Result()
		bad := ""
		if err == nil && ctr.seeded {
			bad = ctr.check(v, now)
		}
		l.st.outcome(err, bad, 1, end)
	}
}

// pubsub publishes numbered messages on one channel and checks that its
// subscriber gets them in order, without duplicates, and loses none
// without a Gap saying so.
type pubsub struct {
	l       *load
	channel string
	mu      sync.Mutex
	// unsure holds the seqs published with an error, or to no subscriber:
	// they may be missing, or arrive late. Failures are few, so it is
	// kept for the whole run.
	unsure map[int]bool
}

func (p *pubsub) publish(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	sl := p.l.st.newSlot()
	for seq := 1; ; seq++ {
		select {
		case <-p.l.ctx.Done():
			return
		case <-t.C:
		}
		var n int64
		err := p.l.st.call(sl, p.l.ctx, p.l.timeout, func(ctx context.Context) (string, error) {
			var err error
			n, err = p.l.c.Publish(ctx, p.channel, "m|"+strconv.Itoa(seq))
			return "", err
		})
		if err != nil || n == 0 {
			p.mu.Lock()
			p.unsure[seq] = true
			p.mu.Unlock()
		}
	}
}

// subscribe reads sub until the run ends. A message may be missing after
// a Gap, or when its publish failed or reached no subscriber; a message
// whose publish failed may also arrive late (its bytes were held up in the
// network), after later ones. Anything else is a violation: a message
// received twice, a successful publish delivered out of order, or lost
// without a Gap.
func (p *pubsub) subscribe(sub *respire.Subscription) {
	st := p.l.st
	last, gap := 0, false
	missing := map[int]bool{} // skipped seqs; few
	for {
		m, err := sub.Next(p.l.ctx)
		if err != nil {
			if p.l.ctx.Err() == nil {
				st.report("subscription ended", err.Error())
				st.corrupt.Add(1)
			}
			return
		}
		if m.Gap != nil {
			st.gaps.Add(1)
			gap = true
			continue
		}
		s, ok := strings.CutPrefix(m.Payload, "m|")
		seq, err := strconv.Atoi(s)
		if m.Channel != p.channel || !ok || err != nil {
			st.corrupt.Add(1)
			st.report("corrupted", fmt.Sprintf("message %.60q on channel %q", m.Payload, m.Channel))
			continue
		}
		st.msgs.Add(1)
		// The publish of every seq below the newest message received has
		// returned and recorded its outcome: the publisher is sequential.
		p.mu.Lock()
		switch {
		case seq <= last && !missing[seq]:
			st.corrupt.Add(1)
			st.report("corrupted", fmt.Sprintf("pub/sub message %d received twice", seq))
		case seq <= last:
			delete(missing, seq)
			if !p.unsure[seq] {
				st.corrupt.Add(1)
				st.report("corrupted", fmt.Sprintf("pub/sub message %d, published successfully, arrived after %d", seq, last))
			}
		default:
			for s := last + 1; s < seq; s++ {
				missing[s] = true
				if !gap && !p.unsure[s] {
					st.lost.Add(1)
					st.report("pub/sub", fmt.Sprintf("message %d was published to a subscriber but never arrived, and no Gap says so", s))
				}
			}
			last, gap = seq, false
		}
		p.mu.Unlock()
	}
}
