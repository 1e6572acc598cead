package aside

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/respire-go/respire/respire"
)

// ErrInvalidOption is wrapped by the errors of New and of Get given a bad
// argument.
var ErrInvalidOption = errors.New("aside: invalid option")

// DefaultLoadTimeout bounds a loader's run when Options.LoadTimeout is zero.
const DefaultLoadTimeout = 10 * time.Second

// Options configure a Cache.
type Options struct {
	// TTL is the life of a stored value in Redis (SET PX) and the bound of
	// its copy in process memory. It is required (at least a millisecond).
	TTL time.Duration
	// LoadTimeout bounds each loader run; 0 means DefaultLoadTimeout.
	LoadTimeout time.Duration
}

// Loader loads the value of key when it is missing from Redis. Its ctx
// carries the first caller's values, not its cancellation, and ends after
// Options.LoadTimeout.
type Loader func(ctx context.Context, key string) (string, error)

// Cache is a cache-aside view of a client. It is safe for concurrent use.
type Cache struct {
	c *respire.Client
	o Options

	mu      sync.Mutex
	flights map[string]*flight
}

// flight is one load of a key, shared by the callers that missed it.
type flight struct {
	done chan struct{} // closed once val and err are set
	val  string
	err  error
}

// New returns a Cache over c, which must have Options.ClientCache, or an
// error wrapping ErrInvalidOption: one that also wraps
// respire.ErrCacheDisabled when c has no client-side cache.
func New(c *respire.Client, o Options) (*Cache, error) {
	if c == nil {
		return nil, fmt.Errorf("%w: nil client", ErrInvalidOption)
	}
	if c.Options().ClientCache == nil {
		return nil, fmt.Errorf("%w: the client has no client-side cache: set respire.Options.ClientCache "+
			"(&respire.CacheOptions{}) when creating it: %w", ErrInvalidOption, respire.ErrCacheDisabled)
	}
	if o.TTL < time.Millisecond {
		return nil, fmt.Errorf("%w: TTL %v is under a millisecond", ErrInvalidOption, o.TTL)
	}
	if o.LoadTimeout < 0 {
		return nil, fmt.Errorf("%w: negative LoadTimeout %v", ErrInvalidOption, o.LoadTimeout)
	}
	if o.LoadTimeout == 0 {
		o.LoadTimeout = DefaultLoadTimeout
	}
	return &Cache{c: c, o: o, flights: make(map[string]*flight)}, nil
}

// Get returns the value of key: from process memory when cached there,
// else from Redis, else from load (called once for all the callers that
// miss key at the same time in this process), storing its value. When
// storing fails, Get returns the loaded value and an error saying so.
func (a *Cache) Get(ctx context.Context, key string, load Loader) (string, error) {
	if load == nil {
		return "", fmt.Errorf("%w: nil loader", ErrInvalidOption)
	}
	v, err := a.c.Cached(a.o.TTL).Get(ctx, key)
	if !errors.Is(err, respire.Nil) {
		if err != nil {
			return "", fmt.Errorf("aside: reading %q: %w", key, err)
		}
		return v, nil
	}
	f := a.join(ctx, key, load)
	select {
	case <-f.done:
		return f.val, f.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// Delete deletes keys in Redis, dropping them from the client-side cache of
// every client that cached them.
func (a *Cache) Delete(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := a.c.Del(ctx, keys...); err != nil {
		return fmt.Errorf("aside: deleting: %w", err)
	}
	return nil
}

// join returns the flight of key, starting one if none runs.
func (a *Cache) join(ctx context.Context, key string, load Loader) *flight {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f := a.flights[key]; f != nil {
		return f
	}
	f := &flight{done: make(chan struct{})}
	a.flights[key] = f
	go a.fly(context.WithoutCancel(ctx), key, load, f)
	return f
}

// fly runs f: a second read (an earlier flight may have stored the value
// after this caller's miss), then the loader and the SET.
func (a *Cache) fly(ctx context.Context, key string, load Loader, f *flight) {
	ctx, cancel := context.WithTimeout(ctx, a.o.LoadTimeout)
	defer cancel()
	defer func() {
		a.mu.Lock()
		delete(a.flights, key)
		a.mu.Unlock()
		close(f.done)
	}()
	v, err := a.c.Cached(a.o.TTL).Get(ctx, key)
	if err == nil {
		f.val = v
		return
	}
	if !errors.Is(err, respire.Nil) {
		f.err = fmt.Errorf("aside: reading %q: %w", key, err)
		return
	}
	v, err = a.call(ctx, key, load)
	if err != nil {
		f.err = err
		return
	}
	f.val = v
	if err := a.c.Set(ctx, key, v, &respire.SetOptions{PX: a.o.TTL}); err != nil {
		f.err = fmt.Errorf("aside: storing %q: %w", key, err)
	}
}

// call runs load, turning a panic into an error so that the waiters are
// not left hanging.
func (a *Cache) call(ctx context.Context, key string, load Loader) (v string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("aside: loader of %q panicked: %v", key, p)
		}
	}()
	v, err = load(ctx, key)
	if err != nil {
		err = fmt.Errorf("aside: loading %q: %w", key, err)
	}
	return v, err
}
