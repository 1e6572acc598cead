// Package ecosystem runs libraries written for go-redis on Respire,
// through the goredis adapter, against real servers started by the
// harness: each library is used as its users use it.
package ecosystem

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/goredis"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(stopShared{m})
}

// stopShared stops the clusters harness.SharedCluster started, before the
// leak check.
type stopShared struct{ m *testing.M }

func (s stopShared) Run() int {
	code := s.m.Run()
	harness.StopSharedClusters()
	return code
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// connect returns a Respire client with opts, closed at the end of the
// test.
func connect(t testing.TB, opts respire.Options) *respire.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := respire.Connect(ctx, opts)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// adapter returns a go-redis client on a Respire client with opts, both
// closed at the end of the test.
func adapter(t testing.TB, opts respire.Options) (*goredis.Client, *respire.Client) {
	t.Helper()
	rc := connect(t, opts)
	rdb := goredis.New(rc)
	t.Cleanup(func() { require.NoError(t, rdb.Close()) })
	return rdb, rc
}

// standalone starts a server for the test and returns its address.
func standalone(t testing.TB) string {
	t.Helper()
	return harness.Start(t, harness.Config{}).Addr
}

// onCluster returns an adapter on the shared cluster.
func onCluster(t *testing.T) (*goredis.Client, *respire.Client) {
	t.Helper()
	hc := harness.SharedCluster(t, "")
	return adapter(t, respire.Options{
		Cluster:         &respire.ClusterOptions{Addrs: hc.Seeds()},
		MinRetryBackoff: 5 * time.Millisecond,
		MaxRetryBackoff: 100 * time.Millisecond,
	})
}

// unique returns a key prefix no earlier run in this process used, for
// servers shared across tests (the shared cluster, and -count).
func unique(name string) string {
	return fmt.Sprintf("%s%d:", name, runs.Add(1))
}

var runs atomic.Int64

// protocols are the RESP versions the adapter's own tests run on.
var protocols = []int{2, 3}
