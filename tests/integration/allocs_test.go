package integration

import (
	"context"
	"strings"
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
	for _, m := range modes {
		for _, cx := range allocContexts(t) {
			t.Run(m.name+"/"+cx.name, func(t *testing.T) {
				c := connect(t, respire.Options{Addr: srv.Addr, Filler: m.filler, Protocol: m.protocol})
				hotPathAllocs(t, c, cx.ctx)
			})
		}
	}
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
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis80, Replicas: -1})
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
	// A Batch: the batch, one string per GET, and a slab of
	// futures per 32 commands at most.
	check("Batch of 32 GETs", 32+4, func() {
		b := c.NewBatch()
		for range 32 {
			b.Get("allocs:k")
		}
		err = b.Exec(ctx)
	})
	check("Batch of 32 GetLease", 4, func() {
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
