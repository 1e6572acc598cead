package respiretest_test

import (
	"context"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/respiretest"
)

// StartCluster in a test: three primaries with a replica each, a cluster
// client of them, and a failover. Everything is gone when the test ends.
func ExampleStartCluster() {
	testFailover := func(t *testing.T) {
		c, cluster := respiretest.StartCluster(t, &respiretest.ClusterOptions{
			Masters:           3,
			ReplicasPerMaster: 1,
		})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Set(ctx, "cart:{7}", "3 items", nil); err != nil {
			t.Fatal(err)
		}

		// Crash the primary of the key's slot and wait for its replica.
		primary, err := cluster.PrimaryOf(ctx, "cart:{7}")
		if err != nil {
			t.Fatal(err)
		}
		if err := primary.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitFailover(ctx, primary); err != nil {
			t.Fatal(err)
		}
		// The client learns the new primary from its first failed write;
		// code under test retries as it would in production.
		for {
			err := c.Set(ctx, "cart:{7}", "4 items", nil)
			if err == nil {
				break
			}
			select {
			case <-ctx.Done():
				t.Fatal(err)
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	_ = testFailover // func TestFailover(t *testing.T) { ... } in a _test.go file
}

// Node.Stop and Node.Continue: a node that hangs, then recovers.
func ExampleNode_Stop() {
	testHang := func(t *testing.T) {
		_, cluster := respiretest.StartCluster(t, nil)
		node := cluster.Nodes()[0]
		ctx := context.Background()
		direct, err := respire.Connect(ctx, respire.Options{Addr: node.Addr})
		if err != nil {
			t.Fatal(err)
		}
		defer direct.Close()
		if err := node.Stop(); err != nil { // SIGSTOP: sockets open, no replies
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if _, err := direct.Ping(short); err == nil {
			t.Error("a stopped node answered")
		}
		if err := node.Continue(); err != nil { // SIGCONT
			t.Fatal(err)
		}
	}
	_ = testHang
}

// StartSentinel in a test: a primary, two replicas and three sentinels,
// a client that follows the sentinels, and a failover.
func ExampleStartSentinel() {
	testSentinelFailover := func(t *testing.T) {
		c, sentinel := respiretest.StartSentinel(t, &respiretest.SentinelOptions{Replicas: 2})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := c.Set(ctx, "k", "v", nil); err != nil {
			t.Fatal(err)
		}
		old, err := sentinel.KillPrimary(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := sentinel.WaitFailover(ctx, old); err != nil {
			t.Fatal(err)
		}
		primary, _ := sentinel.Primary(ctx)
		t.Logf("%s took over from %s", primary.Addr, old.Addr)
		// c (Options.Sentinel) now writes to the new primary.
	}
	_ = testSentinelFailover
}

// NewCluster in TestMain: one cluster for the package's tests, each under
// keys of its own. Tests that kill or stop nodes should start their own.
func ExampleNewCluster() {
	var shared *respiretest.Cluster
	testMain := func(m *testing.M) int {
		var err error
		shared, err = respiretest.NewCluster(context.Background(), &respiretest.ClusterOptions{ReplicasPerMaster: 1})
		if err != nil {
			panic(err)
		}
		defer shared.Close()
		return m.Run()
	}
	_ = testMain // func TestMain(m *testing.M) { os.Exit(testMain(m)) }, with tests that call shared.Connect(t, respire.Options{})
}
