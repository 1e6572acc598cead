package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/tests/harness"
)

// TestSweepShapes checks that the sweep groups hold the points issue 26
// asks for, under names that are unique.
func TestSweepShapes(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range shapes {
		if seen[s.Name] {
			t.Errorf("shape %s defined twice", s.Name)
		}
		seen[s.Name] = true
	}
	for group, want := range map[string]int{groupCallers: 6, groupValues: 24, groupBatch: 10, groupCluster: 1} {
		sel, err := selectShapes([]string{group})
		if err != nil {
			t.Fatal(err)
		}
		if len(sel) != want {
			t.Errorf("group %s has %d shapes, want %d", group, len(sel), want)
		}
	}
}

// TestSweepCells runs the extreme points of the sweeps (largest values,
// batches and caller count, the keyed GETs) for one short cell each on one
// server, so that a wrong key, value or batch fails here, not in a sweep.
func TestSweepCells(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
	if err := server.Seed(srv.Addr); err != nil {
		t.Fatal(err)
	}
	if err := server.SeedSweep(srv.Addr); err != nil {
		t.Fatal(err)
	}
	obs, err := server.NewObserver(srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	for _, name := range []string{"callers-get-1k-x1024", "value-get-16-x1", "value-set-1048576-x16", "batch-get-1k-b10000-x4", "batch-get-1k-b1-x1", "cluster-get-1k-x64"} {
		s, err := shapeByName(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, client := range []string{"respire-nofiller", "rueidis"} {
			m, err := runCell(context.Background(), cellConfig{Client: client, Shape: s, Addr: srv.Addr, Duration: 60 * time.Millisecond}, obs)
			if err != nil {
				t.Fatalf("%s %s: %v", client, name, err)
			}
			if m.Ops <= 0 || m.CPUusPerOp <= 0 {
				t.Errorf("%s %s: implausible measurement %+v", client, name, m)
			}
			if strings.HasPrefix(name, "batch-get-1k-b10000") && m.Ops%10_000 != 0 {
				t.Errorf("%s %s: %d GETs, not whole batches of 10,000", client, name, m.Ops)
			}
		}
	}
}
