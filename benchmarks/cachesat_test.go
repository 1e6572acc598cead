package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/hist"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// CacheSatEnv turns on TestCacheSaturated and TestCacheMissStorm, which
// take several seconds each.
const CacheSatEnv = "RESPIRE_CACHESAT"

// cacheReader is a caching client under test: get reads through its
// client-side cache.
type cacheReader struct {
	name  string
	get   func(ctx context.Context, key string) (string, error)
	close func()
}

// cacheReaders returns Respire (defaults, ClientCache) and rueidis
// (defaults, DoCache) on addr.
func cacheReaders(t *testing.T, addr string) []cacheReader {
	t.Helper()
	ctx := context.Background()
	rc, err := respire.Connect(ctx, respire.Options{Addr: addr, ClientCache: &respire.CacheOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	cached := rc.Cached(time.Minute)
	nilToEmpty := func(s string, err error, isNil bool) (string, error) {
		if isNil {
			return "", nil
		}
		return s, err
	}
	return []cacheReader{
		{
			name: "respire",
			get: func(ctx context.Context, k string) (string, error) {
				s, err := cached.Get(ctx, k)
				return nilToEmpty(s, err, errors.Is(err, respire.Nil))
			},
			close: func() { _ = rc.Close() },
		},
		{
			name: "rueidis",
			get: func(ctx context.Context, k string) (string, error) {
				s, err := ru.DoCache(ctx, ru.B().Get().Key(k).Cache(), time.Minute).ToString()
				return nilToEmpty(s, err, rueidis.IsRedisNil(err))
			},
			close: ru.Close,
		},
	}
}

// TestCacheSaturated measures how stale cached reads get when the readers
// keep every CPU busy: 32 goroutines read cached GETs of 8 keys in a tight
// loop (never waiting on I/O once warmed), while 8 writers, each on a
// plain connection of its own, SET their key to the next sequence number
// every millisecond. A read is stale when it returns a number older than
// the newest write acknowledged before the read began; its age is the time
// from the acknowledgement of the first newer write to the read's return.
// (Comparing with the newest write after the read instead counted reads
// whose goroutine was preempted between the read and the comparison:
// fresh when read, stale when looked at, up to a second later.) The
// writers run in this process, so the readers starve them too: they write
// less often than asked (the count is reported) and note some
// acknowledgements late, which makes ages look smaller; both clients
// share that. Respire and rueidis run in turn on one server.
//
// Run it with
//
//	RESPIRE_CACHESAT=1 go test -run CacheSaturated -v -count=1 .
//
// (RESPIRE_CACHESAT_SECONDS sets each client's run, default 5.)
func TestCacheSaturated(t *testing.T) {
	if os.Getenv(CacheSatEnv) != "1" {
		t.Skipf("set %s=1 to measure staleness under saturated readers", CacheSatEnv)
	}
	secs := 5
	if s := os.Getenv("RESPIRE_CACHESAT_SECONDS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("RESPIRE_CACHESAT_SECONDS=%q", s)
		}
		secs = n
	}
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	const readers, writers = 32, 8
	// Room for the sequence numbers a writer reaches: one per ms.
	maxSeq := secs*1000*2 + 1000
	t.Logf("server %s %s; GOMAXPROCS %d; %d readers, %d writers (1 SET/ms each), %ds per client",
		srv.Flavor, srv.Version, runtime.GOMAXPROCS(0), readers, writers, secs)
	t.Logf("%-8s %12s %10s %8s %12s %10s %10s %10s %10s", "client", "reads", "reads/s", "writes", "stale", "p50", "p99", "p99.9", "max")
	for _, cr := range cacheReaders(t, srv.Addr) {
		ctx := context.Background()
		keys := make([]string, writers)
		acks := make([][]atomic.Int64, writers) // seq -> ack time (ns since start)
		latest := make([]atomic.Int64, writers)
		ws := make([]*respire.Client, writers)
		for i := range keys {
			keys[i] = fmt.Sprintf("cachesat:%s:%d", cr.name, i)
			acks[i] = make([]atomic.Int64, maxSeq)
			w, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr})
			if err != nil {
				t.Fatal(err)
			}
			ws[i] = w
			if err := w.Set(ctx, keys[i], "0", nil); err != nil {
				t.Fatal(err)
			}
		}
		start := time.Now()
		for _, k := range keys {
			if _, err := cr.get(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
		stop := make(chan struct{})
		var failed atomic.Value
		var wg sync.WaitGroup
		for i := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for seq := 1; seq < maxSeq; seq++ {
					select {
					case <-stop:
						return
					case <-time.After(time.Millisecond):
					}
					if err := ws[i].Set(ctx, keys[i], strconv.Itoa(seq), nil); err != nil {
						failed.Store(err)
						return
					}
					acks[i][seq].Store(int64(time.Since(start)))
					latest[i].Store(int64(seq))
				}
			}()
		}
		hs := make([]hist.H, readers)
		reads := make([]int64, readers)
		for r := range readers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				h := &hs[r]
				for n := 0; ; n++ {
					if n&1023 == 0 {
						select {
						case <-stop:
							return
						default:
						}
					}
					i := (r + n) % writers
					before := latest[i].Load()
					v, err := cr.get(ctx, keys[i])
					now := time.Since(start)
					if err != nil {
						failed.Store(err)
						return
					}
					reads[r]++
					seq, err := strconv.Atoi(v)
					if err != nil {
						failed.Store(fmt.Errorf("%s: %q is not a sequence number", keys[i], v))
						return
					}
					if int64(seq) < before {
						h.Record(now - time.Duration(acks[i][seq+1].Load()))
					}
				}
			}()
		}
		time.Sleep(time.Duration(secs) * time.Second)
		close(stop)
		wg.Wait()
		elapsed := time.Since(start)
		if err, _ := failed.Load().(error); err != nil {
			t.Fatalf("%s: %v", cr.name, err)
		}
		var all hist.H
		var total int64
		for r := range hs {
			all.Merge(&hs[r])
			total += reads[r]
		}
		var writes int64
		for i := range latest {
			writes += latest[i].Load()
		}
		t.Logf("%-8s %12d %9.1fM %8d %12d %10v %10v %10v %10v", cr.name, total,
			float64(total)/elapsed.Seconds()/1e6, writes, all.Count(),
			all.Quantile(0.5), all.Quantile(0.99), all.Quantile(0.999), all.Max())
		for _, w := range ws {
			_ = w.Close()
		}
		cr.close()
	}
}

// TestCacheMissStorm counts the GETs that reach the server while 4
// goroutines read, through the cache, a key set with PX 200: during the
// first 1.2 s (the key's life and a second after it expired). A cache that
// keeps misses (tracked, so a later SET invalidates them) sends a handful;
// one that does not sends one per read.
//
//	RESPIRE_CACHESAT=1 go test -run CacheMissStorm -v -count=1 .
func TestCacheMissStorm(t *testing.T) {
	if os.Getenv(CacheSatEnv) != "1" {
		t.Skipf("set %s=1 to count the GETs of readers of an expired key", CacheSatEnv)
	}
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	ctx := context.Background()
	admin, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	getCalls := func() int64 {
		s, err := admin.Do(ctx, "INFO", "commandstats")
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`cmdstat_get:calls=(\d+)`).FindStringSubmatch(fmt.Sprint(s))
		if m == nil {
			return 0
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	t.Logf("server %s %s; 4 readers of a key set with PX 200, for 1.2 s", srv.Flavor, srv.Version)
	t.Logf("%-8s %12s %14s", "client", "reads", "server GETs")
	for _, cr := range cacheReaders(t, srv.Addr) {
		key := "missstorm:" + cr.name
		before := getCalls()
		if _, err := admin.Do(ctx, "SET", key, "v", "PX", "200"); err != nil {
			t.Fatal(err)
		}
		end := time.Now().Add(1200 * time.Millisecond)
		var reads atomic.Int64
		var failed atomic.Value
		var wg sync.WaitGroup
		for range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(end) {
					v, err := cr.get(ctx, key)
					if err != nil || (v != "v" && v != "") {
						failed.Store(fmt.Errorf("%q, %v", v, err))
						return
					}
					reads.Add(1)
				}
			}()
		}
		wg.Wait()
		if err, _ := failed.Load().(error); err != nil {
			t.Fatalf("%s: %v", cr.name, err)
		}
		t.Logf("%-8s %12d %14d", cr.name, reads.Load(), getCalls()-before)
		cr.close()
	}
}
