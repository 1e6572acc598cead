package integration

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"regexp"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/faultproxy"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// valuePool is 1 MiB of random bytes, with CR and LF bytes mixed in (one
// byte in four), so framing mistakes show. Values are slices of it:
// writing megabytes of random bytes one at a time for every value cost
// the race detector more than the test itself.
var valuePool = sync.OnceValue(func() []byte {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, 1<<20)
	for i := 0; i < len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i, x := range b {
		switch x % 8 {
		case 0:
			b[i] = '\r'
		case 1:
			b[i] = '\n'
		}
	}
	return b
})

// randomValue returns a binary value of 0 B to 1 MiB, mostly small, taken
// from valuePool at a random offset, so that two values of the same length
// differ too.
func randomValue(r *rand.Rand) []byte {
	var n int
	switch p := r.IntN(100); {
	case p < 2:
		n = 0
	case p < 80:
		n = r.IntN(200)
	case p < 97:
		n = r.IntN(16 << 10)
	default:
		n = r.IntN(1<<20 + 1)
	}
	pool := valuePool()
	off := r.IntN(len(pool) - n + 1)
	return pool[off : off+n : off+n]
}

// TestConcurrentGetSet: 64 goroutines share one client and each checks
// every reply byte for byte, on every server, in every transport mode.
func TestConcurrentGetSet(t *testing.T) {
	const goroutines = 64
	opsPer := 60
	if testing.Short() {
		opsPer = 10
	}
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, mode := range modes {
			t.Run(mode.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, ReadMode: mode.readMode, Protocol: mode.protocol})
				ctx := ctxT(t)
				var mismatches, ops atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, goroutines)
				for g := range goroutines {
					wg.Add(1)
					go func() {
						defer wg.Done()
						r := rand.New(rand.NewPCG(uint64(g), 7))
						for i := range opsPer {
							key := fmt.Sprintf("%s:%s:%d:%d", t.Name(), mode.name, g, i%5)
							val := randomValue(r)
							if err := c.Set(ctx, key, string(val), nil); err != nil {
								errs <- fmt.Errorf("SET %s: %w", key, err)
								return
							}
							got, err := c.Get(ctx, key)
							if err != nil {
								errs <- fmt.Errorf("GET %s: %w", key, err)
								return
							}
							ops.Add(2)
							if !bytes.Equal([]byte(got), val) {
								mismatches.Add(1)
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					require.NoError(t, err)
				}
				require.Zero(t, mismatches.Load(), "replies that differ from what was set")
				require.Equal(t, int64(goroutines*opsPer*2), ops.Load())
			})
		}
	})
}

// TestRoutePerKey: with several connections, all commands on one key go
// through one connection (seen by a proxy), so their order holds; and the
// values come back in order.
func TestRoutePerKey(t *testing.T) {
	srv := harness.Start(t, harness.Config{})
	p, err := faultproxy.New(srv.Addr)
	require.NoError(t, err)
	defer p.Close()
	var mu sync.Mutex
	seen := map[int]*bytes.Buffer{}
	p.OnClientData(func(id int, b []byte) {
		mu.Lock()
		defer mu.Unlock()
		if seen[id] == nil {
			seen[id] = new(bytes.Buffer)
		}
		seen[id].Write(b)
	})
	c := connect(t, respire.Options{Addr: p.Addr(), Connections: 4})
	ctx := ctxT(t)
	const keys, pushes = 32, 100
	var wg sync.WaitGroup
	for k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprintf("route:{%d}", k)
			for i := range pushes {
				if _, err := c.Incr(ctx, key); err != nil {
					t.Error(err)
					return
				}
				_, err := c.Do(ctx, "RPUSH", key+":list", i)
				if err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Equal(t, 4, p.Accepted())
	mu.Lock()
	owner := map[string]int{}
	re := regexp.MustCompile(`route:\{\d+\}(:list)?`)
	for id, buf := range seen {
		for _, k := range re.FindAllString(buf.String(), -1) {
			if o, ok := owner[k]; ok && o != id {
				t.Errorf("key %s went through connections %d and %d", k, o, id)
			}
			owner[k] = id
		}
	}
	mu.Unlock()
	require.Len(t, owner, 2*keys)
	for k := range keys {
		r, err := c.Do(ctx, "LRANGE", fmt.Sprintf("route:{%d}:list", k), 0, -1)
		require.NoError(t, err)
		items, err := r.Slice()
		require.NoError(t, err)
		require.Len(t, items, pushes)
		for i, it := range items {
			v, err := it.Int64()
			require.NoError(t, err)
			require.Equal(t, int64(i), v)
		}
	}
}
