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
func (r *retryDelay) advance() time.Duration {
	d := r.next/2 + rand.N(r.next/2+1)
	r.next = min(2*r.next, r.max)
	return d
}

// wait sleeps for the next delay; it returns false when done closes first.
func (r *retryDelay) wait(done <-chan struct{}) bool {
	d := r.advance()
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
