package benchmarks

// The helpers (packages lock, ratelimit and aside) beside the peers'
// equivalents, one goroutine each, on one server: ops/s, and round trips
// per operation counted as socket writes (one goroutine waits for each
// reply before the next write, so a write is a round trip).
//
//	go test -run '^$' -bench 'Helpers' -benchtime 2000x -count 5 .

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/redis/rueidis/rueidisaside"
	"github.com/redis/rueidis/rueidislock"
	"github.com/respire-go/respire/aside"
	"github.com/respire-go/respire/lock"
	"github.com/respire-go/respire/ratelimit"
	"github.com/respire-go/respire/respire"
)

// writeCounter counts the writes of the connections it dials.
type writeCounter struct{ n atomic.Int64 }

type countedConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countedConn) Write(p []byte) (int, error) {
	c.n.Add(1)
	return c.Conn.Write(p)
}

func (w *writeCounter) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return countedConn{c, &w.n}, nil
}

func (w *writeCounter) rueidisDial(ctx context.Context, addr string, d *net.Dialer, _ *tls.Config) (net.Conn, error) {
	return w.dial(ctx, "tcp", addr)
}

// measure runs op b.N times and reports ops/s and writes per op.
func measure(b *testing.B, w *writeCounter, op func(i int) error) {
	b.Helper()
	if err := op(-1); err != nil { // warm up: scripts loaded, connections up
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	before := w.n.Load()
	for i := 0; i < b.N; i++ {
		if err := op(i); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(w.n.Load()-before)/float64(b.N), "rt/op")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "ops/s")
}

func respireHelperClient(b *testing.B, w *writeCounter, cache bool, tr *respire.Tracer) *respire.Client {
	b.Helper()
	o := respire.Options{Addr: benchServer(b).Addr, Dialer: w.dial, Tracer: tr}
	if cache {
		o.ClientCache = &respire.CacheOptions{}
	}
	c, err := respire.Connect(context.Background(), o)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func goRedisHelperClient(b *testing.B, w *writeCounter) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: benchServer(b).Addr, Dialer: w.dial})
	b.Cleanup(func() { c.Close() })
	return c
}

func rueidisHelperOption(b *testing.B, w *writeCounter) rueidis.ClientOption {
	return rueidis.ClientOption{InitAddress: []string{benchServer(b).Addr}, DialCtxFn: w.rueidisDial}
}

// BenchmarkHelpersLock: take and release an uncontended lock.
func BenchmarkHelpersLock(b *testing.B) {
	ctx := context.Background()
	b.Run("respire", func(b *testing.B) {
		w := new(writeCounter)
		n := lock.NewNotifier()
		l, err := lock.New(respireHelperClient(b, w, true, n.Tracer(nil)), lock.Options{Notifier: n, Prefix: "bench:lock:"})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		measure(b, w, func(int) error {
			k, err := l.TryLock(ctx, "a")
			if err != nil {
				return err
			}
			return k.Release(ctx)
		})
	})
	b.Run("respire-pubsub", func(b *testing.B) { // no client-side cache: waiters woken by the release channel
		w := new(writeCounter)
		l, err := lock.New(respireHelperClient(b, w, false, nil), lock.Options{Prefix: "bench:lockps:"})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		measure(b, w, func(int) error {
			k, err := l.TryLock(ctx, "a")
			if err != nil {
				return err
			}
			return k.Release(ctx)
		})
	})
	b.Run("redislock", func(b *testing.B) {
		w := new(writeCounter)
		l := redislock.New(goRedisHelperClient(b, w))
		measure(b, w, func(int) error {
			k, err := l.Obtain(ctx, "bench:redislock:a", 10*time.Second, nil)
			if err != nil {
				return err
			}
			return k.Release(ctx)
		})
	})
	b.Run("rueidislock", func(b *testing.B) {
		w := new(writeCounter)
		// KeyMajority 1: one key per lock, as the others use.
		l, err := rueidislock.NewLocker(rueidislock.LockerOption{ClientOption: rueidisHelperOption(b, w), KeyMajority: 1, NoLoopTracking: true})
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		measure(b, w, func(int) error {
			_, cancel, err := l.WithContext(ctx, "bench:rueidislock:a") // waits for the previous release
			if err != nil {
				return err
			}
			cancel()
			return nil
		})
	})
}

// BenchmarkHelpersRateLimit: one decision under a limit never reached.
func BenchmarkHelpersRateLimit(b *testing.B) {
	ctx := context.Background()
	b.Run("respire", func(b *testing.B) {
		w := new(writeCounter)
		l, err := ratelimit.New(respireHelperClient(b, w, false, nil), ratelimit.Options{Prefix: "bench:rate:"})
		if err != nil {
			b.Fatal(err)
		}
		lim := ratelimit.PerSecond(1_000_000, 1_000_000)
		measure(b, w, func(int) error {
			r, err := l.Allow(ctx, "a", lim)
			if err == nil && !r.Allowed {
				err = errors.New("refused")
			}
			return err
		})
	})
	b.Run("redis_rate", func(b *testing.B) {
		w := new(writeCounter)
		l := redis_rate.NewLimiter(goRedisHelperClient(b, w))
		lim := redis_rate.Limit{Rate: 1_000_000, Burst: 1_000_000, Period: time.Second}
		measure(b, w, func(int) error {
			r, err := l.Allow(ctx, "bench:redis_rate:a", lim)
			if err == nil && r.Allowed == 0 {
				err = errors.New("refused")
			}
			return err
		})
	})
}

// BenchmarkHelpersAside: cache-aside reads. hit: the same key, served from
// process memory; miss: a new key each time (read, load, store).
func BenchmarkHelpersAside(b *testing.B) {
	ctx := context.Background()
	load := func(_ context.Context, key string) (string, error) { return "value:" + key, nil }
	check := func(key, v string, err error) error {
		if err == nil && v != "value:"+key {
			err = errors.New("wrong value " + v)
		}
		return err
	}
	for _, shape := range []string{"hit", "miss"} {
		keyOf := func(prefix string, i int) string {
			if shape == "hit" {
				return prefix + "hit"
			}
			return prefix + strconv.Itoa(i) + ":" + strconv.FormatInt(time.Now().UnixNano(), 36)
		}
		b.Run(shape+"/respire", func(b *testing.B) {
			w := new(writeCounter)
			a, err := aside.New(respireHelperClient(b, w, true, nil), aside.Options{TTL: time.Minute})
			if err != nil {
				b.Fatal(err)
			}
			measure(b, w, func(i int) error {
				k := keyOf("bench:aside:", i)
				v, err := a.Get(ctx, k, load)
				return check(k, v, err)
			})
		})
		b.Run(shape+"/rueidisaside", func(b *testing.B) {
			w := new(writeCounter)
			a, err := rueidisaside.NewClient(rueidisaside.ClientOption{ClientOption: rueidisHelperOption(b, w)})
			if err != nil {
				b.Fatal(err)
			}
			defer a.Close()
			measure(b, w, func(i int) error {
				k := keyOf("bench:rueidisaside:", i)
				v, err := a.Get(ctx, time.Minute, k, load)
				return check(k, v, err)
			})
		})
	}
}
