package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/respire-go/respire/tests/faultproxy"
)

// recoveryMax bounds the wait for a successful call after a fault ended;
// none by then fails the run.
const recoveryMax = 30 * time.Second

// injector injects the faults, in turn, and reports how the load
// recovered from each.
type injector struct {
	ctx   context.Context
	srv   *server
	p     *faultproxy.Proxy
	st    *stats
	start time.Time
	fail  context.CancelFunc // ends the run

	count  atomic.Int64
	failed string // why the run failed; read after the injector ended
	// errs and late as of the previous fault line, for the deltas.
	errs, late int64
}

type fault struct {
	name string
	run  func(in *injector) error
}

var faults = []fault{
	{"cut-rst", func(in *injector) error {
		in.p.CutRST()
		return nil
	}},
	{"kill-9-restart", func(in *injector) error {
		in.st.epoch.Add(1)
		in.srv.kill()
		err := in.srv.start()
		in.st.epoch.Add(1)
		return err
	}},
	{"blackhole-2s", func(in *injector) error {
		in.p.Hold(true)
		in.lasts(2 * time.Second)
		in.p.Hold(false)
		return nil
	}},
	{"delay-200ms-for-5s", func(in *injector) error {
		in.p.Delay(200 * time.Millisecond)
		in.lasts(5 * time.Second)
		in.p.Delay(0)
		return nil
	}},
}

// lasts lets a fault last for d, or until the run ends.
func (in *injector) lasts(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-in.ctx.Done():
	}
}

func (in *injector) loop(every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for i := 0; ; i++ {
		select {
		case <-in.ctx.Done():
			return
		case <-t.C:
		}
		f := faults[i%len(faults)]
		began := time.Now()
		if err := f.run(in); err != nil {
			in.failed = fmt.Sprintf("fault %s: %v", f.name, err)
			in.fail()
			return
		}
		ended := time.Now()
		in.count.Add(1)
		rec, ok := in.recovery(ended)
		if in.ctx.Err() != nil {
			return
		}
		if !ok {
			in.failed = fmt.Sprintf("fault %s: no call succeeded within %v of its end", f.name, recoveryMax)
			in.fail()
			return
		}
		errs, late := in.st.errs.Load(), in.st.late.Load()
		fmt.Printf("soak: fault %d %s at %v: lasted %v, first successful call %v after its end; since the last fault: err +%d, late +%d\n",
			in.count.Load(), f.name, began.Sub(in.start).Round(time.Second), ended.Sub(began).Round(time.Millisecond), rec.Round(time.Millisecond),
			errs-in.errs, late-in.late)
		in.errs, in.late = errs, late
	}
}

// recovery waits for a call that succeeded after end and returns how long
// after end it returned.
func (in *injector) recovery(end time.Time) (time.Duration, bool) {
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	limit := time.NewTimer(recoveryMax)
	defer limit.Stop()
	for {
		if ok := in.st.lastOK.Load(); ok > end.UnixNano() {
			return time.Unix(0, ok).Sub(end), true
		}
		select {
		case <-poll.C:
		case <-limit.C:
			return 0, false
		case <-in.ctx.Done():
			return 0, true
		}
	}
}
