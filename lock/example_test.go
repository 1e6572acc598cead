package lock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/respire-go/respire/lock"
	"github.com/respire-go/respire/respire"
)

// A Locker whose waiters are woken by the server's invalidations: the
// Notifier goes into the client's Options before the client exists.
func Example() {
	ctx := context.Background()
	n := lock.NewNotifier()
	opts := respire.Options{Addr: "localhost:6379", ClientCache: &respire.CacheOptions{}}
	opts.Tracer = n.Tracer(opts.Tracer)
	c, err := respire.Connect(ctx, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	locker, err := lock.New(c, lock.Options{TTL: 5 * time.Second, Notifier: n})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locker.Close()

	l, err := locker.Lock(ctx, "report:2024-06")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Release(ctx)
	fmt.Println("holding with token", l.Token())
}

// A storage layer that refuses writes from holders whose lock has been
// taken over since: it keeps the highest token it accepted.
func ExampleLock_Token() {
	type store struct{ lastToken int64 }
	write := func(s *store, token int64) error {
		if token <= s.lastToken {
			return errors.New("stale lock holder")
		}
		s.lastToken = token
		return nil
	}
	var s store
	fmt.Println(write(&s, 7)) // the holder of token 7
	fmt.Println(write(&s, 8)) // its lock expired; the next holder got 8
	fmt.Println(write(&s, 7)) // the first holder wakes up and tries to write
	// Output:
	// <nil>
	// <nil>
	// stale lock holder
}

// TryLock gives up at once when another owner holds the lock.
func ExampleLocker_TryLock() {
	ctx := context.Background()
	c, err := respire.Connect(ctx, respire.Options{Addr: "localhost:6379"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	locker, err := lock.New(c, lock.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer locker.Close()
	l, err := locker.TryLock(ctx, "nightly-job")
	if errors.Is(err, lock.ErrNotAcquired) {
		fmt.Println("another instance runs the job")
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	defer l.Release(ctx)
	// Run the job, refreshing the lock while it runs:
	if err := l.Refresh(ctx, 0); errors.Is(err, lock.ErrNotHeld) {
		fmt.Println("lost the lock: stop")
	}
}
