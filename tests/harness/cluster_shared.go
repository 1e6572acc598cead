package harness

// Clusters shared between tests: started once per flavor on behalf of the
// first test that asks, outside any one test's lifetime.

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// captureTB runs harness code outside the test's goroutine: fatal failures
// are recorded and end only the calling goroutine (runtime.Goexit), for the
// test's goroutine to report. Everything else goes to the test.
type captureTB struct {
	testing.TB
	mu   sync.Mutex
	msgs []string
}

func (c *captureTB) record(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.msgs = append(c.msgs, msg)
}

// message returns the recorded failures, "" if none.
func (c *captureTB) message() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.Join(c.msgs, "\n")
}

func (c *captureTB) Error(args ...any)                 { c.record(fmt.Sprint(args...)) }
func (c *captureTB) Errorf(format string, args ...any) { c.record(fmt.Sprintf(format, args...)) }
func (c *captureTB) Fail()                             { c.record("failed") }
func (c *captureTB) FailNow()                          { c.record("failed"); runtime.Goexit() }
func (c *captureTB) Fatal(args ...any)                 { c.record(fmt.Sprint(args...)); runtime.Goexit() }
func (c *captureTB) Fatalf(format string, args ...any) {
	c.record(fmt.Sprintf(format, args...))
	runtime.Goexit()
}
func (c *captureTB) Skip(args ...any)                 { c.Fatal(args...) }
func (c *captureTB) Skipf(format string, args ...any) { c.Fatalf(format, args...) }
func (c *captureTB) SkipNow()                         { c.FailNow() }

// sharedTB is the lifetime of a SharedCluster: from its start to
// StopSharedClusters, beyond the test that happened to start it. Cleanups
// and temporary directories are its own; failures are recorded.
type sharedTB struct {
	captureTB
	name     string
	cleanups []func()
	dirs     []string
}

func (s *sharedTB) Helper()             {}
func (s *sharedTB) Name() string        { return s.name }
func (s *sharedTB) Log(...any)          {}
func (s *sharedTB) Logf(string, ...any) {}
func (s *sharedTB) Failed() bool        { return s.message() != "" }
func (s *sharedTB) Cleanup(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cleanups = append(s.cleanups, f)
}
func (s *sharedTB) TempDir() string {
	dir, err := os.MkdirTemp("", "respire-cluster-")
	if err != nil {
		s.Fatalf("harness: %v", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dirs = append(s.dirs, dir)
	return dir
}

// stop runs the cleanups, last first, and removes the directories.
func (s *sharedTB) stop() {
	s.mu.Lock()
	cleanups, dirs := s.cleanups, s.dirs
	s.cleanups, s.dirs = nil, nil
	s.mu.Unlock()
	for i := len(cleanups) - 1; i >= 0; i-- {
		cleanups[i]()
	}
	for _, d := range dirs {
		os.RemoveAll(d)
	}
}

// sharedCluster is one flavor's entry in sharedClusters.
type sharedCluster struct {
	ready chan struct{} // closed once c or err is set
	c     *Cluster
	err   string
	tb    *sharedTB
}

var sharedClusters = struct {
	sync.Mutex
	m map[string]*sharedCluster
}{m: make(map[string]*sharedCluster)}

// SharedCluster returns the test binary's cluster of flavor f (3 masters
// with a replica each), starting it on first use. It outlives the test that
// started it: call StopSharedClusters from TestMain after m.Run, before any
// leak check:
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		harness.StopSharedClusters()
//		os.Exit(code)
//	}
//
// Tests that share it must keep to keys under a prefix of their own and must
// not change the cluster: Kill, Pause, Restart, Failover, MoveSlots and the
// like panic on it. When a test that uses it fails, the end of every node's
// log is written to that test's log.
func SharedCluster(t testing.TB, f Flavor) *Cluster {
	t.Helper()
	if f == "" {
		f = DefaultFlavor
	}
	return SharedClusterWith(t, string(f), ClusterConfig{Flavor: f}, nil)
}

// SharedClusterWith is SharedCluster for a cluster of configuration cfg,
// shared under name by every test that asks for that name (the first
// caller's cfg and setup count). setup, when not nil, runs once after the
// cluster started (to configure its nodes, say); its error fails every test
// that asks for the cluster. The same rules hold as for SharedCluster.
func SharedClusterWith(t testing.TB, name string, cfg ClusterConfig, setup func(ctx context.Context, c *Cluster) error) *Cluster {
	t.Helper()
	sharedClusters.Lock()
	sc, ok := sharedClusters.m[name]
	if !ok {
		sc = &sharedCluster{ready: make(chan struct{})}
		sc.tb = &sharedTB{captureTB: captureTB{TB: t}, name: "harness.SharedCluster(" + name + ")"}
		sharedClusters.m[name] = sc
		go func() {
			defer close(sc.ready)
			defer func() { sc.err = sc.tb.message() }()
			c := StartCluster(sc.tb, cfg)
			if setup != nil {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				if err := setup(ctx, c); err != nil {
					sc.tb.Fatalf("setup: %v", err)
				}
			}
			c.shared = true
			sc.c = c
		}()
	}
	sharedClusters.Unlock()
	<-sc.ready
	if sc.err != "" || sc.c == nil {
		t.Fatalf("harness: the shared %s cluster did not start: %s", name, sc.err)
	}
	c := sc.c
	t.Cleanup(func() {
		if t.Failed() {
			for _, n := range c.nodeList() {
				t.Logf("harness: shared %s cluster node %s id %s:\n%s", name, n.Addr, n.ID, n.Server.logTail(50))
			}
		}
	})
	return c
}

// StopSharedClusters stops the clusters SharedCluster started. Call it from
// TestMain after m.Run. A later SharedCluster starts a new cluster.
func StopSharedClusters() {
	sharedClusters.Lock()
	m := sharedClusters.m
	sharedClusters.m = make(map[string]*sharedCluster)
	sharedClusters.Unlock()
	for _, sc := range m {
		<-sc.ready
		sc.tb.stop()
	}
}
