package transport

import (
	"math/rand/v2"
	"time"
)

// retryDelay paces redials: capped exponential backoff with equal jitter
// (half of each delay fixed, half random), on one reused timer.
type retryDelay struct {
	min, max, next time.Duration
	timer          *time.Timer
}

func newRetryDelay(cfg *Config) *retryDelay {
	return &retryDelay{min: cfg.MinBackoff, max: cfg.MaxBackoff, next: cfg.MinBackoff}
}

// reset starts over from the smallest delay, after a success.
func (r *retryDelay) reset() { r.next = r.min }

// advance returns the next delay and doubles the one after, up to max.
func (r *retryDelay) advance() time.Duration { return r.delay(true) }

// delay returns the next delay, the one after doubled (up to max) when
// grow is set.
func (r *retryDelay) delay(grow bool) time.Duration {
	d := r.next/2 + rand.N(r.next/2+1)
	if grow {
		r.next = min(2*r.next, r.max)
	}
	return d
}

// wait sleeps for the next delay, and doubles the one after; it returns
// false when done closes first.
func (r *retryDelay) wait(done <-chan struct{}) bool { return r.waitThen(done, true) }

// waitThen is wait, the delay after doubled only when grow is set.
func (r *retryDelay) waitThen(done <-chan struct{}, grow bool) bool {
	d := r.delay(grow)
	if r.timer == nil {
		r.timer = time.NewTimer(d)
	} else {
		r.timer.Reset(d)
	}
	select {
	case <-r.timer.C:
		return true
	case <-done:
		return false
	}
}

// stop releases the timer.
func (r *retryDelay) stop() {
	if r.timer != nil {
		r.timer.Stop()
	}
}
