// Package helpers tests the helper packages lock, aside and ratelimit
// against a single server, a cluster and a Sentinel deployment started by
// the harness.
package helpers

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(stopShared{m}) }

// stopShared stops the shared clusters after the tests, before the leak
// check.
type stopShared struct{ m *testing.M }

func (s stopShared) Run() int {
	code := s.m.Run()
	harness.StopSharedClusters()
	return code
}

// topology makes clients of one deployment.
type topology struct {
	name    string
	cluster bool
	opts    func() respire.Options // Addr, Cluster or Sentinel set
}

// topologies starts a single server and a Sentinel deployment (stopped at
// the end of the test) and takes the shared cluster.
func topologies(t *testing.T) []topology {
	srv := harness.Start(t, harness.Config{})
	hc := harness.SharedCluster(t, "")
	sd := harness.StartSentinels(t, harness.SentinelConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, sd.WaitStable(ctx))
	return []topology{
		{name: "single", opts: func() respire.Options { return respire.Options{Addr: srv.Addr} }},
		{name: "cluster", cluster: true, opts: func() respire.Options {
			return respire.Options{Cluster: &respire.ClusterOptions{Addrs: hc.Seeds()}}
		}},
		{name: "sentinel", opts: func() respire.Options {
			return respire.Options{Sentinel: &respire.SentinelOptions{MasterName: sd.Config.MasterName, Addrs: sd.Addrs()}}
		}},
	}
}

// TestHelpers runs every helper's tests on every topology.
func TestHelpers(t *testing.T) {
	runs.Add(1)
	for _, tp := range topologies(t) {
		t.Run(tp.name, func(t *testing.T) {
			t.Run("lock", func(t *testing.T) { testLock(t, tp) })
			t.Run("aside", func(t *testing.T) { testAside(t, tp) })
			t.Run("ratelimit", func(t *testing.T) { testRateLimit(t, tp) })
		})
	}
}

// connect returns a connected client, closed at the end of the test.
func connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// runs numbers the tests' runs in this binary (-count), whose keys must
// differ: the shared cluster outlives a run.
var runs atomic.Int64

// prefix is a key prefix unique to the test and its run.
func prefix(t testing.TB) string {
	return fmt.Sprintf("%s:%d:%d:", t.Name(), os.Getpid(), runs.Load())
}

// commandCounter counts the single commands a client sends, by name.
type commandCounter struct {
	mu sync.Mutex
	n  map[string]int
	// sent receives every command's name, when not nil (never blocks).
	sent chan string
	all  atomic.Int64
}

func newCounter() *commandCounter {
	return &commandCounter{n: make(map[string]int), sent: make(chan string, 1024)}
}

func (cc *commandCounter) interceptor() respire.Interceptor {
	return respire.Interceptor{Command: func(ctx context.Context, cmd respire.Command, next respire.CommandFunc) error {
		name := cmd.Name()
		cc.mu.Lock()
		cc.n[name]++
		cc.mu.Unlock()
		cc.all.Add(1)
		select {
		case cc.sent <- name:
		default:
		}
		return next(ctx, cmd)
	}}
}

func (cc *commandCounter) count(name string) int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.n[name]
}

func (cc *commandCounter) snapshot() map[string]int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	m := make(map[string]int, len(cc.n))
	for k, v := range cc.n {
		m[k] = v
	}
	return m
}
