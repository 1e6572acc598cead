package respire

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/internal/testpeer"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTracker is a scripted server for cached reads. For each GET it runs
// script(n), which returns what to write for the GET and its PTTL, so a
// test can put an invalidation push before or after the reply.
type fakeTracker struct {
	*testpeer.Peer
	gets atomic.Int64
}

func newFakeTracker(t *testing.T, script func(n int64, key string) string) *fakeTracker {
	f := &fakeTracker{}
	f.Peer = testpeer.Start(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			return "%1\r\n+proto\r\n:3\r\n"
		case "GET":
			return script(f.gets.Add(1), args[1])
		case "PTTL":
			return "" // written by the GET's script
		case "PING":
			return "+PONG\r\n"
		}
		return "+OK\r\n"
	})
	return f
}

func invalidate(key string) string {
	return ">2\r\n$10\r\ninvalidate\r\n*1\r\n$" + strconv.Itoa(len(key)) + "\r\n" + key + "\r\n"
}

// The server changes the key while the read is in flight: the invalidation
// comes between the read's reply and the PTTL's (or before the read's
// reply). The value must not be cached.
func TestCacheInvalidationDuringRead(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script func(n int64, key string) string
		cached bool
	}{
		{"push-before-reply", func(n int64, k string) string { return invalidate(k) + "$2\r\nv1\r\n:-1\r\n" }, false},
		{"push-between-reply-and-pttl", func(n int64, k string) string { return "$2\r\nv1\r\n" + invalidate(k) + ":-1\r\n" }, false},
		{"push-for-other-key", func(n int64, k string) string { return "$2\r\nv1\r\n" + invalidate("z") + ":-1\r\n" }, true},
		{"no-push", func(n int64, k string) string {
			if n == 1 {
				return "$2\r\nv1\r\n:-1\r\n"
			}
			return "$2\r\nv2\r\n:-1\r\n"
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeTracker(t, tc.script)
			c, err := Connect(context.Background(), Options{Addr: f.Addr(), ClientCache: &CacheOptions{}})
			require.NoError(t, err)
			defer c.Close()
			ctx := context.Background()
			v, err := c.Cached(0).Get(ctx, "k")
			require.NoError(t, err)
			assert.Equal(t, "v1", v)
			v, err = c.Cached(0).Get(ctx, "k")
			require.NoError(t, err)
			if tc.cached {
				assert.Equal(t, "v1", v)
				assert.Equal(t, int64(1), f.gets.Load())
			} else {
				assert.Equal(t, int64(2), f.gets.Load(), "the spoiled value was not cached")
			}
		})
	}
}

// A read in flight when the tracking connection breaks is not cached, and
// the cache is empty once the connection is replaced.
func TestCacheConnectionLossDuringRead(t *testing.T) {
	var f *fakeTracker
	f = newFakeTracker(t, func(n int64, k string) string {
		if k == "other" {
			return "$1\r\no\r\n:-1\r\n"
		}
		if n == 2 {
			// Break the connection instead of answering.
			f.CloseConns()
			return ""
		}
		return "$2\r\nv" + strconv.Itoa(int(n)) + "\r\n:-1\r\n"
	})
	c, err := Connect(context.Background(), Options{Addr: f.Addr(), ClientCache: &CacheOptions{}})
	require.NoError(t, err)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Cached(0).Get(ctx, "other")
	require.NoError(t, err)
	_, err = c.Cached(0).Get(ctx, "k")
	require.Error(t, err)
	require.Eventually(t, func() bool { return c.CacheStats().Entries == 0 }, 5*time.Second, time.Millisecond)
	assert.Positive(t, c.CacheStats().Flushes)
	v, err := c.Cached(0).Get(ctx, "k")
	require.NoError(t, err)
	assert.Equal(t, "v3", v)
}
