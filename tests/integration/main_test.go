// Package integration tests Respire against real servers started by the
// harness: Redis 7.0, Redis 8.0 and Valkey 8.1.
package integration

import (
	"context"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopShared{m})
}

// stopShared runs the tests, then stops the clusters harness.SharedCluster
// started, before the leak check.
type stopShared struct{ m *testing.M }

func (s stopShared) Run() int {
	code := s.m.Run()
	harness.StopSharedClusters()
	return code
}

// Tests in parallel: a test whose time goes mostly to waiting for servers
// (a failover, a cluster's node timeout, the sentinels) and that uses
// servers of its own, no shared cluster, calls t.Parallel: such tests run
// together, after the others, up to go test's -parallel at once. A test
// that counts something process-wide (goroutines, allocations) must not.

// connect returns a connected client for srv, closed at the end of the test.
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

// modes are the transport variants every core test runs in.
var modes = []struct {
	name     string
	readMode respire.ReadMode
	protocol int
}{
	{"resp3-nofiller", respire.ReadModeDefault, 3},
	{"resp3-filler", respire.ReadModeFiller, 3},
	{"resp2-nofiller", respire.ReadModeDefault, 2},
	{"resp2-filler", respire.ReadModeFiller, 2},
}

func startFlavor(t *testing.T, f harness.Flavor, cfg harness.Config) *harness.Server {
	cfg.Flavor = f
	return harness.Start(t, cfg)
}

// sharedMasters returns the test binary's cluster of flavor f (the
// default when empty) of 3 masters without replicas, shared as
// harness.SharedCluster is: keys under a prefix of the test's own, and no
// change to the cluster.
func sharedMasters(t *testing.T, f harness.Flavor) *harness.Cluster {
	t.Helper()
	if f == "" {
		f = harness.DefaultFlavor
	}
	return harness.SharedClusterWith(t, string(f)+"-masters", harness.ClusterConfig{Flavor: f, Replicas: -1}, nil)
}
