package lock

import (
	"context"
	"fmt"
	"sync"

	"github.com/respire-go/respire/respire"
)

// Notifier wakes the waiters of a lock when the server invalidates the lock
// key in the client-side cache. It must be installed as the client's
// Tracer.CacheInvalidate before the client is created, so it is made
// first and handed to both the client's Options (through Tracer) and the
// Locker's Options:
//
//	n := lock.NewNotifier()
//	opts.ClientCache = &respire.CacheOptions{}
//	opts.Tracer = n.Tracer(opts.Tracer)
//
// New checks both: a Locker with a Notifier over a client without
// Options.ClientCache, or whose Options.Tracer is not one this Notifier's
// Tracer returned (as the outermost layer), fails with ErrInvalidOption.
//
// A Notifier may serve several clients and Lockers; a wake-up it sends in
// error (another client's key of the same name) only costs the waiter one
// more attempt. Its methods are safe for concurrent use.
type Notifier struct {
	w waiters

	mu   sync.Mutex
	made map[*respire.Tracer]bool // the Tracers Tracer returned, for New's check
}

// NewNotifier returns a Notifier with no waiters.
func NewNotifier() *Notifier { return &Notifier{} }

// Tracer returns a Tracer that has next's functions (next may be nil) and a
// CacheInvalidate that first calls next's, if any, and then wakes the
// waiters of the invalidated key (all of them on a flush).
func (n *Notifier) Tracer(next *respire.Tracer) *respire.Tracer {
	var t respire.Tracer
	if next != nil {
		t = *next
	}
	prev := t.CacheInvalidate
	t.CacheInvalidate = func(ctx context.Context, c *respire.Client, d respire.TraceCacheInvalidateData) {
		if prev != nil {
			prev(ctx, c, d)
		}
		if d.Flush {
			n.w.wakeAll()
			return
		}
		n.w.wake(string(d.Key))
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.made == nil {
		n.made = make(map[*respire.Tracer]bool)
	}
	n.made[&t] = true
	return &t
}

// check returns what keeps c from waking n's waiters: the client-side
// cache, which has the server track the lock keys, and n's Tracer, which
// receives the invalidations; nil when c has both.
func (n *Notifier) check(c *respire.Client) error {
	o := c.Options()
	if o.ClientCache == nil {
		return fmt.Errorf("%w: Notifier is set but the client has no Options.ClientCache, so the server would not "+
			"report changes of lock keys and waiters would wait out the holder's TTL: set respire.Options.ClientCache "+
			"(&respire.CacheOptions{}), or leave Notifier nil to be woken through a pub/sub channel", ErrInvalidOption)
	}
	n.mu.Lock()
	made := n.made[o.Tracer]
	n.mu.Unlock()
	if !made {
		return fmt.Errorf("%w: Notifier is set but the client's Options.Tracer was not made by this Notifier's Tracer "+
			"method, so invalidations would not reach its waiters, which would wait out the holder's TTL: set "+
			"opts.Tracer = n.Tracer(opts.Tracer) before creating the client", ErrInvalidOption)
	}
	return nil
}

// waiters are the channels of goroutines waiting for a key to change, by
// key. A wake-up closes the key's channel, waking all its waiters at once.
type waiters struct {
	mu sync.Mutex
	m  map[string]*waitSet
}

// waitSet is the channel shared by a key's waiters and their count.
type waitSet struct {
	ch chan struct{}
	n  int
}

// add registers a waiter of key and returns the channel closed when key
// changes; the waiter calls done(key, ch) when it stops waiting.
func (w *waiters) add(key string) chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.m == nil {
		w.m = make(map[string]*waitSet)
	}
	s := w.m[key]
	if s == nil {
		s = &waitSet{ch: make(chan struct{})}
		w.m[key] = s
	}
	s.n++
	return s.ch
}

// done unregisters a waiter of key that was given ch.
func (w *waiters) done(key string, ch chan struct{}) {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.m[key]
	if s == nil || s.ch != ch {
		return // woken: the set was replaced or removed
	}
	if s.n--; s.n == 0 {
		delete(w.m, key)
	}
}

// wake wakes the waiters of key. It runs on a connection's reader, so it
// only closes a channel.
func (w *waiters) wake(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if s := w.m[key]; s != nil {
		close(s.ch)
		delete(w.m, key)
	}
}

// wakeAll wakes every waiter.
func (w *waiters) wakeAll() {
	w.mu.Lock()
	defer w.mu.Unlock()
	for k, s := range w.m {
		close(s.ch)
		delete(w.m, k)
	}
}

// len is the number of keys waited on, for tests.
func (w *waiters) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.m)
}
