package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// StaleCmpEnv turns on TestStaleCmp, which takes tens of seconds.
const StaleCmpEnv = "RESPIRE_STALECMP"

// TestStaleCmp measures how long a client-side cache keeps serving a value
// after another connection overwrote it, for Respire's Cached.Get and
// rueidis's DoCache(GET), in the same scenario: a writer on a plain
// connection of its own SETs the key to a new value; right after the
// write's reply, the reader (the caching client) reads through its cache
// until it sees the new value, then reads it 20 times more so that the
// next write finds it cached. Neither client can know of a write made
// elsewhere before the server's invalidation reaches it, so some stale
// reads are expected; this compares how many and for how long.
//
// Two reader styles: "io" does other I/O between reads (a plain GET of
// another key on the reading client, as an application does), "spin" only
// spins on cache hits, which keeps the goroutine busy and delays the
// network poller that wakes the connection's reader goroutine.
//
// Run it with
//
//	RESPIRE_STALECMP=1 go test -run StaleCmp -v -count=1 .
func TestStaleCmp(t *testing.T) {
	if os.Getenv(StaleCmpEnv) != "1" {
		t.Skipf("set %s=1 to measure stale reads after writes from another connection", StaleCmpEnv)
	}
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	ctx := context.Background()
	writes := 1000
	if s := os.Getenv("RESPIRE_STALECMP_WRITES"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			t.Fatalf("RESPIRE_STALECMP_WRITES=%q", s)
		}
		writes = n
	}

	// The writer: a plain connection, no cache, the same for both readers.
	writer, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr})
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()

	rc, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, ClientCache: &respire.CacheOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	ru, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr}, DisableRetry: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ru.Close()

	type reader struct {
		client string
		key    string
		get    func(key string) (string, error) // through the cache
		io     func() error                     // other I/O of the reading client
	}
	cached := rc.Cached(time.Minute)
	readers := []reader{
		{
			client: "respire",
			key:    "stalecmp:respire",
			get:    func(k string) (string, error) { return cached.Get(ctx, k) },
			io: func() error {
				_, err := rc.Get(ctx, "stalecmp:unrelated")
				if errors.Is(err, respire.Nil) {
					return nil
				}
				return err
			},
		},
		{
			client: "rueidis",
			key:    "stalecmp:rueidis",
			get: func(k string) (string, error) {
				return ru.DoCache(ctx, ru.B().Get().Key(k).Cache(), time.Minute).ToString()
			},
			io: func() error {
				err := ru.Do(ctx, ru.B().Get().Key("stalecmp:unrelated").Build()).Error()
				if rueidis.IsRedisNil(err) {
					return nil
				}
				return err
			},
		},
	}

	var rows []staleResult
	for _, style := range []string{"io", "spin"} {
		for _, r := range readers {
			res := staleResult{client: r.client, style: style, writes: writes}
			for i := range writes {
				want := strconv.Itoa(i)
				if err := writer.Set(ctx, r.key, want, nil); err != nil {
					t.Fatal(err)
				}
				acked := time.Now()
				for n := 0; ; n++ {
					v, err := r.get(r.key)
					if err != nil {
						t.Fatalf("%s: %v", r.client, err)
					}
					res.reads++
					if v == want {
						if n > 0 {
							res.staleWrites++
							res.windows = append(res.windows, time.Since(acked))
						}
						break
					}
					res.stale++
					if time.Since(acked) > 5*time.Second {
						t.Fatalf("%s/%s: still %q 5s after the write of %q", r.client, style, v, want)
					}
					if style == "io" {
						if err := r.io(); err != nil {
							t.Fatalf("%s: %v", r.client, err)
						}
					}
				}
				// Warm the entry again, so that the next write finds it
				// cached.
				for range 20 {
					if _, err := r.get(r.key); err != nil {
						t.Fatalf("%s: %v", r.client, err)
					}
					res.reads++
				}
			}
			rows = append(rows, res)
		}
	}

	t.Logf("server %s %s; %d writes per row, each followed by reads until fresh and 20 more", srv.Flavor, srv.Version, writes)
	t.Logf("%-8s %-5s %14s %16s %10s %10s %10s", "client", "style", "stale writes", "stale reads", "p50", "p90", "max")
	for _, r := range rows {
		slices.Sort(r.windows)
		t.Logf("%-8s %-5s %14s %16s %10v %10v %10v", r.client, r.style,
			fmt.Sprintf("%d (%.1f%%)", r.staleWrites, 100*float64(r.staleWrites)/float64(r.writes)),
			fmt.Sprintf("%d (%.3f%%)", r.stale, 100*float64(r.stale)/float64(r.reads)),
			quantile(r.windows, 0.5), quantile(r.windows, 0.9), quantile(r.windows, 1))
	}
}

// staleResult is one row of TestStaleCmp: a client and reader style.
type staleResult struct {
	client, style       string
	writes, staleWrites int
	reads, stale        int
	// windows are the stale windows of the writes followed by stale
	// reads: from the write's reply to the first fresh read.
	windows []time.Duration
}

// quantile returns the q-quantile of sorted ds (nearest rank); 0 for none.
func quantile(ds []time.Duration, q float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(q*float64(len(ds))+0.5) - 1
	return ds[min(max(i, 0), len(ds)-1)]
}
