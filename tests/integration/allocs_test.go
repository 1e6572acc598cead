package integration

import (
	"context"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHotPathAllocations checks the allocation targets against a real
// server: SET, INCR and GET into a Lease or a caller's buffer allocate
// nothing; GET returning a string allocates the string; a Batch of 32 GETs
// allocates each string and little besides. Allocation counts are only
// meaningful without the race detector: `make test` runs this test a
// second time without -race.
func TestHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	srv := harness.Start(t, harness.Config{})
	for _, m := range allocModes() {
		for _, cx := range allocContexts(t) {
			t.Run(m.name+"/"+cx.name, func(t *testing.T) {
				opts := m.opts
				opts.Addr = srv.Addr
				c := connect(t, opts)
				hotPathAllocs(t, c, cx.ctx)
				leaseFormAllocs(t, c, cx.ctx)
				largeSetAllocs(t, c, cx.ctx)
			})
		}
	}
}

// allocModes are the transport modes of the allocation targets: each
// read path. A lone caller reads its own reply, polling first (the
// default on Linux) or not; the reader goroutine reads with the filler
// and without it (ReadModeBackground); TestConcurrentAllocations covers the background
// reader that serves concurrent callers.
func allocModes() []struct {
	name string
	opts respire.Options
} {
	var ms []struct {
		name string
		opts respire.Options
	}
	for _, m := range modes {
		ms = append(ms, struct {
			name string
			opts respire.Options
		}{m.name, respire.Options{ReadMode: m.readMode, Protocol: m.protocol}})
	}
	return append(ms, struct {
		name string
		opts respire.Options
	}{"resp3-nopoll", respire.Options{ReadMode: respire.ReadModeDirect}}, struct {
		name string
		opts respire.Options
	}{"resp3-nodirect", respire.Options{ReadMode: respire.ReadModeBackground}})
}

// allocContexts are the contexts the targets hold for: Background, and
// what a server handler passes (a deadline on a cancellable parent). They
// end with the test.
func allocContexts(t *testing.T) []struct {
	name string
	ctx  context.Context
} {
	parent, cancelParent := context.WithCancel(context.Background())
	t.Cleanup(cancelParent)
	real, cancel := context.WithTimeout(parent, time.Hour)
	t.Cleanup(cancel)
	return []struct {
		name string
		ctx  context.Context
	}{{"background", context.Background()}, {"deadline+cancel", real}}
}

// TestClusterHotPathAllocations: on a cluster too, INCR and SET allocate
// nothing and GET only its string, with either kind of context.
func TestClusterHotPathAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	hc := sharedMasters(t, harness.Redis80)
	for _, cx := range allocContexts(t) {
		t.Run(cx.name, func(t *testing.T) {
			c := clusterClient(t, hc, respire.Options{})
			ctx := cx.ctx
			val := strings.Repeat("v", 1024)
			require.NoError(t, c.Set(ctx, "allocs:k", val, nil))
			var err error
			check := allocChecker(t, &err)
			check("SET", 0, func() { err = c.Set(ctx, "allocs:k", val, nil) })
			check("INCR", 0, func() { _, err = c.Incr(ctx, "allocs:n") })
			check("GET", 1, func() { _, err = c.Get(ctx, "allocs:k") })
		})
	}
}

// allocChecker returns a check that fn allocates at most want times per
// call and that the error fn leaves in *err is nil.
func allocChecker(t *testing.T, err *error) func(name string, want float64, fn func()) {
	return func(name string, want float64, fn func()) {
		t.Helper()
		fn() // warm pools and buffers
		got := testing.AllocsPerRun(200, fn)
		t.Logf("%s: %.2f allocs per call", name, got)
		assert.LessOrEqual(t, got, want, "%s: %.2f allocs per call", name, got)
		require.NoError(t, *err, name)
	}
}

func hotPathAllocs(t *testing.T, c *respire.Client, ctx context.Context) {
	val := strings.Repeat("v", 1024)
	require.NoError(t, c.Set(ctx, "allocs:k", val, nil))
	buf := make([]byte, 0, 2048)
	var err error
	check := allocChecker(t, &err)
	check("SET", 0, func() { err = c.Set(ctx, "allocs:k", val, nil) })
	check("INCR", 0, func() { _, err = c.Incr(ctx, "allocs:n") })
	check("DEL", 0, func() { _, err = c.Del(ctx, "allocs:gone") })
	check("GET", 1, func() { _, err = c.Get(ctx, "allocs:k") })
	check("GetLease", 0, func() {
		var l *respire.Lease
		l, err = c.GetLease(ctx, "allocs:k")
		l.Release()
	})
	check("GetAppend", 0, func() { buf, err = c.GetAppend(ctx, buf[:0], "allocs:k") })
	check("MGetLease", 0, func() {
		var l *respire.LeaseList
		l, err = c.MGetLease(ctx, "allocs:k", "allocs:k", "allocs:missing")
		l.Release()
	})
	// A Batch: the batch (with its first 8 futures), a slab of 24 more,
	// and one string per GET.
	check("Batch of 32 GETs", 32+2, func() {
		b := c.NewBatch()
		for range 32 {
			b.Get("allocs:k")
		}
		err = b.Exec(ctx)
	})
	// The batch, and slabs of 8 and 24 Lease futures.
	check("Batch of 32 GetLease", 3, func() {
		b := c.NewBatch()
		fs := [32]*respire.Future[*respire.Lease]{}
		for i := range fs {
			fs[i] = b.GetLease("allocs:k")
		}
		err = b.Exec(ctx)
		for _, f := range fs {
			f.Val().Release()
		}
	})
}

// largeSetAllocs: a large value is written from the caller's memory, by
// the caller under its context's deadline (transport/bigwrite.go), and
// costs no allocation. (A traced or intercepted command copies its large
// arguments into its buffer, for Args: not checked here.)
func largeSetAllocs(t *testing.T, c *respire.Client, ctx context.Context) {
	big := strings.Repeat("b", 1<<20)
	var err error
	check := allocChecker(t, &err)
	check("SET of 1 MiB", 0, func() { err = c.Set(ctx, "allocs:big", big, nil) })
}

// TestConcurrentAllocations: the allocation targets hold when several
// callers share the connection, so that the background reader (not the
// caller) reads most replies, and when concurrent batches pass the read
// role among themselves, with either kind of context. Counts come from
// the process's allocation total over many calls: a little slack covers
// the goroutines the test starts.
func TestConcurrentAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not meaningful under the race detector")
	}
	srv := harness.Start(t, harness.Config{})
	const callers, calls, slack = 8, 400, 0.05
	for _, cx := range allocContexts(t) {
		t.Run(cx.name, func(t *testing.T) {
			c := connect(t, respire.Options{Addr: srv.Addr})
			ctx := cx.ctx
			val := strings.Repeat("v", 1024)
			require.NoError(t, c.Set(ctx, "allocs:k", val, nil))
			perCall := func(name string, want float64, fn func() error) {
				t.Helper()
				var ms0, ms1 runtime.MemStats
				runtime.ReadMemStats(&ms0)
				var wg sync.WaitGroup
				errs := make([]error, callers)
				for g := range callers {
					wg.Go(func() {
						for range calls {
							if err := fn(); err != nil {
								errs[g] = err
								return
							}
						}
					})
				}
				wg.Wait()
				runtime.ReadMemStats(&ms1)
				for _, err := range errs {
					require.NoError(t, err, name)
				}
				got := float64(ms1.Mallocs-ms0.Mallocs) / (callers * calls)
				t.Logf("%s: %.3f allocs per call", name, got)
				assert.LessOrEqual(t, got, want+slack, "%s: %.3f allocs per call", name, got)
			}
			perCall("SET", 0, func() error { return c.Set(ctx, "allocs:k", val, nil) })
			perCall("INCR", 0, func() error { _, err := c.Incr(ctx, "allocs:n"); return err })
			perCall("GET", 1, func() error { _, err := c.Get(ctx, "allocs:k"); return err })
			perCall("GetLease", 0, func() error {
				l, err := c.GetLease(ctx, "allocs:k")
				l.Release()
				return err
			})
			// Pools (batch lists, commands) miss now and then under
			// concurrency and after a collection: one more per batch.
			perCall("Batch of 32 GETs", 32+3, func() error {
				b := c.NewBatch()
				for range 32 {
					b.Get("allocs:k")
				}
				return b.Exec(ctx)
			})
		})
	}
}
