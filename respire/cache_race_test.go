package respire

import (
	"context"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/transport/resp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTracker is a scripted server for cached reads. For each GET it runs
// script(n), which returns what to write for the GET and its PTTL, so a
// test can put an invalidation push before or after the reply.
type fakeTracker struct {
	ln    net.Listener
	wg    sync.WaitGroup
	gets  atomic.Int64
	mu    sync.Mutex
	conns []net.Conn
}

func newFakeTracker(t *testing.T, script func(n int64, key string) string) *fakeTracker {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeTracker{ln: ln}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				rd := resp.NewReader(c, resp.Limits{})
				for {
					m, err := rd.Next()
					if err != nil {
						return
					}
					v := m.Tree()
					var out string
					switch strings.ToUpper(v.Elems[0].Str) {
					case "HELLO":
						out = "%1\r\n+proto\r\n:3\r\n"
					case "GET":
						out = script(f.gets.Add(1), v.Elems[1].Str)
					case "PTTL":
						// Written by the GET's script.
					case "PING":
						out = "+PONG\r\n"
					default:
						out = "+OK\r\n"
					}
					if out != "" {
						if _, err := c.Write([]byte(out)); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
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
			c, err := Connect(context.Background(), Options{Addr: f.ln.Addr().String(), ClientCache: &CacheOptions{}})
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
			f.mu.Lock()
			for _, c := range f.conns {
				c.Close()
			}
			f.mu.Unlock()
			return ""
		}
		return "$2\r\nv" + strconv.Itoa(int(n)) + "\r\n:-1\r\n"
	})
	c, err := Connect(context.Background(), Options{Addr: f.ln.Addr().String(), ClientCache: &CacheOptions{}})
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
