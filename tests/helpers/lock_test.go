package helpers

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/lock"
	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// lockModes are the ways waiters are woken: by invalidation (the
// Notifier, through Tracer.CacheInvalidate) or by a pub/sub channel.
func lockModes(topology) []string { return []string{"notifier", "pubsub"} }

// newLocker returns a Locker on a client of its own, woken as mode says,
// with cc (if not nil) counting the client's commands.
func newLocker(t *testing.T, tp topology, mode string, o lock.Options, cc *commandCounter) *lock.Locker {
	t.Helper()
	opts := tp.opts()
	if cc != nil {
		opts.Interceptors = []respire.Interceptor{cc.interceptor()}
	}
	if mode == "notifier" {
		n := lock.NewNotifier()
		opts.ClientCache = &respire.CacheOptions{}
		opts.Tracer = n.Tracer(nil)
		o.Notifier = n
	} else {
		o.Channel = prefix(t) + "released"
	}
	o.Prefix = prefix(t)
	l, err := lock.New(connect(t, opts), o)
	require.NoError(t, err)
	t.Cleanup(func() { assert.NoError(t, l.Close()) })
	return l
}

func testLock(t *testing.T, tp topology) {
	for _, mode := range lockModes(tp) {
		t.Run(mode, func(t *testing.T) {
			t.Run("exclusion", func(t *testing.T) { testLockExclusion(t, tp, mode) })
			t.Run("expiry", func(t *testing.T) { testLockExpiry(t, tp, mode) })
			t.Run("no-polling", func(t *testing.T) { testLockNoPolling(t, tp, mode) })
		})
	}
	t.Run("half-set-up", func(t *testing.T) { testLockHalfSetUp(t, tp) })
}

// A Notifier the client is not set up for is refused by lock.New, naming
// what is missing: without the client-side cache, or without the
// Notifier's Tracer, waiters would only wake when the holder's TTL ran
// out.
func testLockHalfSetUp(t *testing.T, tp topology) {
	n := lock.NewNotifier()
	noCache := tp.opts()
	noCache.Tracer = n.Tracer(nil)
	noTracer := tp.opts()
	noTracer.ClientCache = &respire.CacheOptions{}
	for _, c := range []struct {
		opts respire.Options
		want string
	}{{noCache, "Options.ClientCache"}, {noTracer, "n.Tracer(opts.Tracer)"}} {
		_, err := lock.New(connect(t, c.opts), lock.Options{Notifier: n, Prefix: prefix(t)})
		require.ErrorIs(t, err, lock.ErrInvalidOption)
		assert.Contains(t, err.Error(), c.want)
	}
}

// 50 goroutines on two clients take one lock in turn: never two holders,
// and each holder's token is higher than the previous holder's.
func testLockExclusion(t *testing.T, tp topology, mode string) {
	ctx := ctxT(t)
	lockers := []*lock.Locker{newLocker(t, tp, mode, lock.Options{}, nil), newLocker(t, tp, mode, lock.Options{}, nil)}
	var (
		holders, overlaps atomic.Int32
		mu                sync.Mutex // for the race detector, which cannot see the lock
		tokens            []int64    // appended by holders only
		wg                sync.WaitGroup
		errs              = make(chan error, 50)
	)
	for i := range 50 {
		wg.Go(func() {
			l, err := lockers[i%2].Lock(ctx, "x")
			if err != nil {
				errs <- err
				return
			}
			if holders.Add(1) != 1 {
				overlaps.Add(1)
			}
			mu.Lock()
			tokens = append(tokens, l.Token())
			mu.Unlock()
			holders.Add(-1)
			errs <- l.Release(ctx)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	assert.Zero(t, overlaps.Load(), "two holders at once")
	require.Len(t, tokens, 50)
	for i := 1; i < len(tokens); i++ {
		assert.Greater(t, tokens[i], tokens[i-1], "token %d after %d", tokens[i], tokens[i-1])
	}
}

// A lock that is not released expires after its TTL; its owner can then
// neither release nor refresh it, and a waiter gets it.
func testLockExpiry(t *testing.T, tp topology, mode string) {
	ctx := ctxT(t)
	const ttl = 300 * time.Millisecond
	a := newLocker(t, tp, mode, lock.Options{TTL: ttl}, nil)
	b := newLocker(t, tp, mode, lock.Options{TTL: 10 * time.Second}, nil)
	start := time.Now()
	first, err := a.TryLock(ctx, "e")
	tried := time.Now()
	require.NoError(t, err)
	// The deadline counts the TTL from the moment the attempt was sent:
	// between the call and its return, however slow the round trip.
	assert.False(t, first.Deadline().Before(start.Add(ttl)), "deadline %v before the call's start + TTL", first.Deadline())
	assert.False(t, first.Deadline().After(tried.Add(ttl)), "deadline %v after the return + TTL", first.Deadline())
	_, err = b.TryLock(ctx, "e")
	require.ErrorIs(t, err, lock.ErrNotAcquired)

	second, err := b.Lock(ctx, "e") // no release: woken by the expiry
	require.NoError(t, err)
	waited := time.Since(start)
	assert.GreaterOrEqual(t, waited, ttl-5*time.Millisecond, "taken before the first expired")
	// Woken by the expiry, which the refused attempt's reply announced,
	// not by a timer of its own (b's TTL is 10s): 5s is a margin no slow
	// machine reaches.
	assert.Less(t, waited, ttl+5*time.Second)
	assert.Greater(t, second.Token(), first.Token())

	assert.ErrorIs(t, first.Release(ctx), lock.ErrNotHeld, "released by a former owner")
	assert.ErrorIs(t, first.Refresh(ctx, 0), lock.ErrNotHeld, "refreshed by a former owner")
	_, err = a.TryLock(ctx, "e")
	assert.ErrorIs(t, err, lock.ErrNotAcquired)
	require.NoError(t, second.Refresh(ctx, time.Minute))
	require.NoError(t, second.Release(ctx))
	assert.ErrorIs(t, second.Release(ctx), lock.ErrNotHeld, "released twice")
	third, err := a.TryLock(ctx, "e")
	require.NoError(t, err)
	assert.Greater(t, third.Token(), second.Token())
	require.NoError(t, third.Release(ctx))
}

// A waiter sends one attempt when it starts waiting and one when the
// holder releases, however long the holder keeps the lock, and it is woken
// at the release, well before the holder's TTL.
func testLockNoPolling(t *testing.T, tp topology, mode string) {
	ctx := ctxT(t)
	holder := newLocker(t, tp, mode, lock.Options{TTL: 10 * time.Second}, nil)
	cc := newCounter()
	waiter := newLocker(t, tp, mode, lock.Options{}, cc)
	h, err := holder.TryLock(ctx, "w")
	require.NoError(t, err)

	got := make(chan *lock.Lock, 1)
	var acquired time.Time
	go func() {
		l, err := waiter.Lock(ctx, "w")
		acquired = time.Now()
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	for name := range cc.sent { // the waiter's first attempt
		if name == "EVALSHA" {
			break
		}
	}
	hold := time.NewTimer(300 * time.Millisecond) // a poller would retry meanwhile
	select {
	case <-hold.C:
	case l := <-got:
		t.Fatalf("acquired while held: %v", l)
	}
	assert.Equal(t, 1, cc.count("EVALSHA"), "attempts while the lock was held")
	released := time.Now()
	require.NoError(t, h.Release(ctx))
	l := <-got
	require.NotNil(t, l)
	// The holder's TTL is 10s: a waiter woken by its timer would take
	// that long; 5s is a margin no slow machine reaches.
	assert.Less(t, acquired.Sub(released), 5*time.Second, "woken late: by the timer, not the release")
	assert.Equal(t, 2, cc.count("EVALSHA"), "attempts in all: %v", cc.snapshot())
	assert.Greater(t, l.Token(), h.Token())
	require.NoError(t, l.Release(ctx))

	// A waiter gives up when its context ends.
	h, err = holder.TryLock(ctx, "w")
	require.NoError(t, err)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = waiter.Lock(short, "w")
	assert.True(t, errors.Is(err, context.DeadlineExceeded), "%v", err)
	require.NoError(t, h.Release(ctx))
}
