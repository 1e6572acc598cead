package lock

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/respire-go/respire/respire"
)

// Errors of the package, for errors.Is.
var (
	// ErrNotAcquired is returned by TryLock when another owner holds the lock.
	ErrNotAcquired = errors.New("lock: not acquired")
	// ErrNotHeld is returned by Release and Refresh when the lock is no
	// longer the caller's: its TTL ran out, and perhaps another took it.
	ErrNotHeld = errors.New("lock: not held")
	// ErrInvalidOption is wrapped by the errors of New and of methods
	// given a bad argument.
	ErrInvalidOption = errors.New("lock: invalid option")
	// ErrClosed is returned by a Locker's methods after Close.
	ErrClosed = errors.New("lock: locker closed")
)

// DefaultTTL is the lock TTL when Options.TTL is zero.
const DefaultTTL = 10 * time.Second

// expirySlack is added to the holder's remaining TTL for a waiter's timer,
// so that the key is gone on the server when the timer fires.
const expirySlack = 2 * time.Millisecond

// Options configure a Locker. The zero value is usable: TTL DefaultTTL,
// Prefix "lock:", waiters woken through the pub/sub channel "lock:released".
type Options struct {
	// TTL is how long a lock lasts unless released or refreshed; 0 means
	// DefaultTTL. It must be at least a millisecond.
	TTL time.Duration
	// Prefix starts every key of the Locker; "" means "lock:". It must not
	// contain '{' or '}': the lock's name is the hash tag.
	Prefix string
	// Notifier, when set, wakes waiters on the server's invalidations of
	// the lock key (see the package documentation); the client must have
	// Options.ClientCache and Options.Tracer from Notifier.Tracer, which
	// New checks. When nil, waiters are woken by messages on Channel.
	Notifier *Notifier
	// Channel is the pub/sub channel releases publish to and waiters
	// listen on when Notifier is nil; "" means Prefix+"released".
	Channel string
}

// Locker hands out locks on one client. It is safe for concurrent use.
// Close it when done: without a Notifier it holds a subscription.
type Locker struct {
	c    *respire.Client
	o    Options
	wait *waiters // the Notifier's, or the Locker's own fed by sub

	mu     sync.Mutex
	sub    *respire.Subscription
	done   chan struct{} // closed when the subscription's reader ends
	closed bool
}

// New returns a Locker over c, or an error wrapping ErrInvalidOption that
// says what is wrong: a bad TTL or Prefix, or a Notifier that the client
// is not set up for (no Options.ClientCache, or an Options.Tracer that is
// not the Notifier's), with which waiters would only wake when the
// holder's TTL ran out.
func New(c *respire.Client, o Options) (*Locker, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	switch {
	case o.TTL == 0:
		o.TTL = DefaultTTL
	case o.TTL < time.Millisecond:
		return nil, fmt.Errorf("%w: TTL %v is under a millisecond", ErrInvalidOption, o.TTL)
	}
	if o.Prefix == "" {
		o.Prefix = "lock:"
	}
	if strings.ContainsAny(o.Prefix, "{}") {
		return nil, fmt.Errorf("%w: Prefix %q contains a brace", ErrInvalidOption, o.Prefix)
	}
	l := &Locker{c: c, o: o}
	if o.Notifier != nil {
		if err := o.Notifier.check(c); err != nil {
			return nil, err
		}
		l.wait = &o.Notifier.w
	} else {
		if l.o.Channel == "" {
			l.o.Channel = o.Prefix + "released"
		}
		l.wait = new(waiters)
	}
	return l, nil
}

// Close ends the Locker's subscription, if any. Locks taken stay valid
// until released or expired; the Locker's methods return ErrClosed after.
func (l *Locker) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	sub, done := l.sub, l.done
	l.mu.Unlock()
	if sub == nil {
		return nil
	}
	err := sub.Close()
	<-done
	l.wait.wakeAll()
	return err
}

// Key returns the key that holds the lock called name.
func (l *Locker) Key(name string) string { return l.o.Prefix + "{" + name + "}" }

// FenceKey returns the key of the fence counter of the lock called name.
func (l *Locker) FenceKey(name string) string { return l.Key(name) + ":fence" }

// TryLock takes the lock called name if it is free, in one round trip; it
// returns ErrNotAcquired if another owner holds it.
func (l *Locker) TryLock(ctx context.Context, name string) (*Lock, error) {
	if err := l.usable(name); err != nil {
		return nil, err
	}
	lk, _, err := l.try(ctx, name)
	return lk, err
}

// Lock takes the lock called name, waiting until it is free or ctx is done
// (then it returns ctx's error). A waiter sends commands only when the
// lock may have become free: when it is released, changed or expired.
func (l *Locker) Lock(ctx context.Context, name string) (*Lock, error) {
	if err := l.usable(name); err != nil {
		return nil, err
	}
	if l.o.Notifier == nil {
		if err := l.subscribe(ctx); err != nil {
			return nil, err
		}
	}
	key := l.Key(name)
	for {
		ch := l.wait.add(key) // before trying: a release after the try wakes us
		lk, pttl, err := l.try(ctx, name)
		if !errors.Is(err, ErrNotAcquired) {
			l.wait.done(key, ch)
			return lk, err
		}
		if l.o.Notifier != nil {
			// Track the key: the server invalidates it on any change.
			_, err := l.c.Cached(l.o.TTL).Get(ctx, key)
			if errors.Is(err, respire.Nil) {
				l.wait.done(key, ch)
				continue // freed meanwhile
			}
			if err != nil {
				l.wait.done(key, ch)
				return nil, fmt.Errorf("lock: watching %q: %w", key, err)
			}
		}
		if err := l.await(ctx, key, ch, pttl); err != nil {
			return nil, err
		}
	}
}

// await waits for ch, the holder's TTL pttl (plus a little) or ctx.
func (l *Locker) await(ctx context.Context, key string, ch chan struct{}, pttl time.Duration) error {
	defer l.wait.done(key, ch)
	if pttl < 0 {
		return nil // no TTL reported: the key went away
	}
	t := time.NewTimer(pttl + expirySlack)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	if l.isClosed() {
		return ErrClosed
	}
	return nil
}

// try runs the acquire script once. When the lock is taken it returns
// ErrNotAcquired and the holder's remaining TTL.
func (l *Locker) try(ctx context.Context, name string) (*Lock, time.Duration, error) {
	owner, err := newOwner()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	r, err := acquire.Run(ctx, l.c, []string{l.Key(name), l.FenceKey(name)}, owner, l.o.TTL)
	if err != nil {
		return nil, 0, fmt.Errorf("lock: acquiring %q: %w", name, err)
	}
	ok, n, err := pair(r)
	if err != nil {
		return nil, 0, fmt.Errorf("lock: acquiring %q: %w", name, err)
	}
	if !ok {
		return nil, time.Duration(n) * time.Millisecond, ErrNotAcquired
	}
	return &Lock{l: l, name: name, owner: owner, token: n, deadline: start.Add(l.o.TTL)}, 0, nil
}

// subscribe starts the Locker's subscription to its channel, once.
func (l *Locker) subscribe(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return ErrClosed
	}
	if l.sub != nil {
		return nil
	}
	sub, err := l.c.Subscribe(ctx, l.o.Channel)
	if err != nil {
		return fmt.Errorf("lock: subscribing to %q: %w", l.o.Channel, err)
	}
	l.sub, l.done = sub, make(chan struct{})
	go l.listen(sub, l.done)
	return nil
}

// listen wakes the waiters of each key published to the channel, and all
// of them when messages may have been lost, until the subscription closes.
func (l *Locker) listen(sub *respire.Subscription, done chan struct{}) {
	defer close(done)
	for {
		m, err := sub.Next(context.Background())
		if err != nil {
			return
		}
		if m.Gap != nil {
			l.wait.wakeAll()
			continue
		}
		l.wait.wake(m.Payload)
	}
}

func (l *Locker) isClosed() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.closed
}

// usable checks name and that the Locker is open.
func (l *Locker) usable(name string) error {
	if name == "" {
		return fmt.Errorf("%w: empty lock name", ErrInvalidOption)
	}
	if l.isClosed() {
		return ErrClosed
	}
	return nil
}

// pair decodes a script's {flag, number} reply.
func pair(r respire.Reply) (bool, int64, error) {
	s, err := r.Slice()
	if err != nil {
		return false, 0, err
	}
	if len(s) != 2 {
		return false, 0, fmt.Errorf("reply of %d elements, want 2", len(s))
	}
	f, err := s[0].Int64()
	if err != nil {
		return false, 0, err
	}
	n, err := s[1].Int64()
	return f == 1, n, err
}

// newOwner returns a random owner string.
func newOwner() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("lock: random owner: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// Lock is a lock held, as TryLock and Lock return it. Its methods are safe
// for concurrent use.
type Lock struct {
	l     *Locker
	name  string
	owner string
	token int64

	mu       sync.Mutex
	deadline time.Time
}

// Name returns the lock's name.
func (k *Lock) Name() string { return k.name }

// Token returns the fencing token of this acquisition: higher than that of
// every earlier acquisition of the same name (see the package
// documentation for what a failover can break). Pass it to the resource
// the lock protects, which should refuse tokens lower than the last it
// accepted.
func (k *Lock) Token() int64 { return k.token }

// Deadline returns the local time until which the lock is surely held if
// the server's clock runs no faster than this process's: the time taken
// before the acquiring (or last refreshing) command was sent, plus the TTL.
func (k *Lock) Deadline() time.Time {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.deadline
}

// Release frees the lock if it is still this owner's; ErrNotHeld if not.
// Waiters are woken.
func (k *Lock) Release(ctx context.Context) error {
	r, err := release.Run(ctx, k.l.c, []string{k.l.Key(k.name)}, k.owner, k.l.o.Channel)
	if err != nil {
		return fmt.Errorf("lock: releasing %q: %w", k.name, err)
	}
	if n, err := r.Int64(); err != nil {
		return fmt.Errorf("lock: releasing %q: %w", k.name, err)
	} else if n != 1 {
		return fmt.Errorf("lock: releasing %q: %w", k.name, ErrNotHeld)
	}
	return nil
}

// Refresh sets the lock's TTL to ttl (0 means the Locker's TTL) if it is
// still this owner's; ErrNotHeld if not. The token does not change.
func (k *Lock) Refresh(ctx context.Context, ttl time.Duration) error {
	if ttl == 0 {
		ttl = k.l.o.TTL
	}
	if ttl < time.Millisecond {
		return fmt.Errorf("%w: TTL %v is under a millisecond", ErrInvalidOption, ttl)
	}
	start := time.Now()
	r, err := refresh.Run(ctx, k.l.c, []string{k.l.Key(k.name)}, k.owner, ttl)
	if err != nil {
		return fmt.Errorf("lock: refreshing %q: %w", k.name, err)
	}
	if n, err := r.Int64(); err != nil {
		return fmt.Errorf("lock: refreshing %q: %w", k.name, err)
	} else if n != 1 {
		return fmt.Errorf("lock: refreshing %q: %w", k.name, ErrNotHeld)
	}
	k.mu.Lock()
	k.deadline = start.Add(ttl)
	k.mu.Unlock()
	return nil
}
