package lock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestNewValidates(t *testing.T) {
	c, err := respire.NewClient(respire.Options{Addr: "127.0.0.1:1"})
	require.NoError(t, err)
	defer c.Close()
	for _, o := range []Options{{TTL: time.Microsecond}, {Prefix: "a{b"}, {Prefix: "x}"}} {
		_, err := New(c, o)
		assert.ErrorIs(t, err, ErrInvalidOption, "%+v", o)
	}
	_, err = New(nil, Options{})
	assert.ErrorIs(t, err, ErrInvalidOption)
	l, err := New(c, Options{})
	require.NoError(t, err)
	assert.Equal(t, "lock:{a}", l.Key("a"))
	assert.Equal(t, "lock:{a}:fence", l.FenceKey("a"))
	_, err = l.TryLock(context.Background(), "")
	assert.ErrorIs(t, err, ErrInvalidOption)
	require.NoError(t, l.Close())
	_, err = l.Lock(context.Background(), "a")
	assert.ErrorIs(t, err, ErrClosed)
}

// TestNewChecksNotifier: a Notifier the client is not set up for (no
// client-side cache, or a Tracer that is not the Notifier's) is refused at
// construction, naming what is missing; waiters would otherwise only wake
// when the holder's TTL ran out.
func TestNewChecksNotifier(t *testing.T) {
	n := NewNotifier()
	client := func(o respire.Options) *respire.Client {
		o.Addr = "127.0.0.1:1"
		c, err := respire.NewClient(o)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return c
	}
	for _, c := range []struct {
		name string
		opts respire.Options
		want string
	}{
		{"no cache", respire.Options{Tracer: n.Tracer(nil)}, "Options.ClientCache"},
		{"no tracer", respire.Options{ClientCache: &respire.CacheOptions{}}, "n.Tracer(opts.Tracer)"},
		{"another tracer", respire.Options{ClientCache: &respire.CacheOptions{}, Tracer: &respire.Tracer{}}, "Options.Tracer"},
		{"another Notifier's", respire.Options{ClientCache: &respire.CacheOptions{}, Tracer: NewNotifier().Tracer(nil)}, "Options.Tracer"},
	} {
		_, err := New(client(c.opts), Options{Notifier: n})
		require.ErrorIs(t, err, ErrInvalidOption, c.name)
		assert.Contains(t, err.Error(), c.want, c.name)
	}
	l, err := New(client(respire.Options{ClientCache: &respire.CacheOptions{}, Tracer: n.Tracer(&respire.Tracer{})}), Options{Notifier: n})
	require.NoError(t, err)
	require.NoError(t, l.Close())
}

func TestWaiters(t *testing.T) {
	var w waiters
	a, b := w.add("k"), w.add("k")
	assert.True(t, a == b, "waiters of one key share a channel")
	other := w.add("other")
	w.wake("k")
	for _, ch := range []chan struct{}{a, b} {
		select {
		case <-ch:
		default:
			t.Fatal("waiter of k not woken")
		}
	}
	select {
	case <-other:
		t.Fatal("waiter of another key woken")
	default:
	}
	w.done("k", a) // after a wake-up: nothing to undo
	w.done("k", b)
	assert.Equal(t, 1, w.len())
	w.done("other", other)
	assert.Equal(t, 0, w.len())

	c := w.add("x")
	w.wakeAll()
	_, open := <-c
	assert.False(t, open)
}

func TestNotifierTracer(t *testing.T) {
	n := NewNotifier()
	var seen int
	tr := n.Tracer(&respire.Tracer{CacheInvalidate: func(context.Context, *respire.Client, respire.TraceCacheInvalidateData) { seen++ }})
	ch := n.w.add("lock:{a}")
	tr.CacheInvalidate(context.Background(), nil, respire.TraceCacheInvalidateData{Key: []byte("lock:{b}")})
	tr.CacheInvalidate(context.Background(), nil, respire.TraceCacheInvalidateData{Key: []byte("lock:{a}")})
	<-ch
	ch = n.w.add("lock:{a}")
	tr.CacheInvalidate(context.Background(), nil, respire.TraceCacheInvalidateData{Flush: true})
	<-ch
	assert.Equal(t, 3, seen, "the next tracer's function is called too")
	assert.Nil(t, n.Tracer(nil).CommandStart)
	assert.False(t, errors.Is(ErrNotHeld, ErrNotAcquired))
}
