package harness

import (
	"context"
	"net"
	"strconv"
	"testing"
)

// StartForeignNodeAt starts, on the port of addr (freed a moment ago, say
// by Kill), a one-node cluster of its own that owns every slot: another
// cluster answering at an address a client knows, for tests that a client
// never routes to it. It returns the node's server, stopped when t ends.
func StartForeignNodeAt(t testing.TB, f Flavor, addr string) *Server {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("harness: %q: %v", addr, err)
	}
	port, _ := strconv.Atoi(p)
	cfg := ClusterConfig{Flavor: f}.withDefaults()
	s := Start(t, Config{Flavor: cfg.Flavor, Args: cfg.nodeArgs(), pickPort: func() (int, error) { return port, nil }})
	ctx, cancel := context.WithTimeout(context.Background(), clusterWait)
	defer cancel()
	if _, err := s.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", strconv.Itoa(SlotCount-1)); err != nil {
		t.Fatalf("harness: CLUSTER ADDSLOTSRANGE on %s: %v", s.Addr, err)
	}
	err = waitClusterOK(ctx, s, "the foreign node's cluster")
	if err != nil {
		t.Fatal(err)
	}
	return s
}
