package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/tests/harness"
)

// The sweeps of issue 26, "how cost grows with the work": one group of
// shapes per dimension, each point a shape whose name says where it lies
// (benchmarks/cmd/charts reads the names back):
//
//	callers-get-1k-xN         N goroutines GET one 1 KiB value (N = 1 ... 1,024)
//	value-get-SIZE-xN         GET of SIZE bytes (16 ... 1 MiB), N = 1 or 16 goroutines
//	value-set-SIZE-xN         SET of the same
//	batch-get-1k-bB-xN        N goroutines (1 or 4), each sending batches of B GETs
//	                          (1 ... 10,000) of consecutive keys of fixture.Batch10K
//	cluster-get-1k-x64        64 goroutines, each GETting the keys of
//	                          fixture.Cluster1K in turn (spread over the slots)
//
// The cluster group runs against a cluster the tool starts with -cluster
// MASTERS (primaries only); the others against one server.
const (
	groupCallers = "callers"
	groupValues  = "values"
	groupBatch   = "batch"
	groupCluster = "cluster"
)

// Sweep points.
var (
	sweepCallers = []int{1, 4, 16, 64, 256, 1024}
	sweepBatches = []int{1, 10, 100, 1000, 10_000}
)

var clusterMasters = flag.Int("cluster", 0, "start a cluster of this many primaries (no replicas) instead of one server, and connect the clients in cluster mode (respire-nofiller, goredis, rueidis); for the "+groupCluster+" shapes")

func init() { shapes = append(shapes, sweepShapes()...) }

func sweepShapes() []shape {
	var out []shape
	for _, n := range sweepCallers {
		out = append(out, shape{Name: fmt.Sprintf("callers-get-1k-x%d", n), Cmd: "GET", Key: fixture.KeyGet1K, Value: fixture.Value1K,
			Mode: seqOrConc(n), Callers: n, Group: groupCallers})
	}
	for _, cmd := range []string{"GET", "SET"} {
		for _, n := range []int{1, 16} {
			for _, size := range fixture.SweepSizes {
				key := fixture.SizeKeyGet(size)
				if cmd == "SET" {
					key = fixture.SizeKeySet(size)
				}
				out = append(out, shape{Name: fmt.Sprintf("value-%s-%d-x%d", strings.ToLower(cmd), size, n), Cmd: cmd,
					Key: key, Value: fixture.SizeValue(size), Mode: seqOrConc(n), Callers: n, Group: groupValues})
			}
		}
	}
	for _, n := range []int{1, 4} {
		for _, b := range sweepBatches {
			out = append(out, shape{Name: fmt.Sprintf("batch-get-1k-b%d-x%d", b, n), Cmd: "GET", Keys: fixture.Batch10K,
				Mode: modePipe, Width: b, Callers: n, Group: groupBatch})
		}
	}
	out = append(out, shape{Name: "cluster-get-1k-x64", Cmd: "GET", Keys: fixture.Cluster1K, Mode: modeConc, Callers: 64, Group: groupCluster})
	return out
}

func seqOrConc(n int) mode {
	if n == 1 {
		return modeSeq
	}
	return modeConc
}

// needsSweepSeed reports whether a shape of sel reads what
// server.SeedSweep writes.
func needsSweepSeed(sel []shape) bool {
	for _, s := range sel {
		switch s.Group {
		case groupCallers, groupValues, groupBatch, groupCluster:
			return true
		}
	}
	return false
}

// connect is how a cell connects its client: to one server, or with
// -cluster to the cluster whose seeds addr lists, comma-separated.
func connect(ctx context.Context, name, addr string) (clients.Client, error) {
	if *clusterMasters > 0 {
		return clients.NewCluster(ctx, name, strings.Split(addr, ","))
	}
	return clients.New(ctx, name, addr)
}

// startCluster starts the -cluster cluster and returns its seeds as one
// comma-separated address, and what to call to stop it.
func startCluster(f harness.Flavor, rep *Report) (string, func(), error) {
	cl, err := server.StartCluster(f, *clusterMasters)
	if err != nil {
		return "", nil, err
	}
	rep.Meta.Server = fmt.Sprintf("cluster of %d %s %s primaries", *clusterMasters, cl.Flavor, cl.Version)
	rep.Meta.ClusterMasters = *clusterMasters
	return strings.Join(cl.Seeds, ","), cl.Close, nil
}

// firstAddr is the server the observer reads INFO from: the first seed of
// a cluster (its counters are that node's only).
func firstAddr(addr string) string {
	a, _, _ := strings.Cut(addr, ",")
	return a
}

// cpuModel names the processor, for the charts' note.
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}
