// Command load runs Respire and its peers through the scenario shapes of
// the load harness (get-1k-seq ... get-8k-pipe32) against one server,
// interleaving clients and repeating rounds, and verifies every reply byte
// for byte. Per cell it reports ops/s, p50/p99 latency, client CPU per op,
// allocations per op, the server's commands per read and, for Respire, the
// bytes each parse pass found; redis-benchmark on the same server and shapes
// is the ceiling. It prints a Markdown table and writes JSON.
//
//	go run ./cmd/load                      # starts Redis 8.0 itself
//	go run ./cmd/load -addr 127.0.0.1:6379 -duration 5s -rounds 5
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/tests/harness"
)

func main() {
	if isChild, err := runChild(); isChild {
		if err != nil {
			fmt.Fprintln(os.Stderr, "load child:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		addr     = flag.String("addr", "", "server to use (host:port); by default the tool starts one through the test harness")
		flavor   = flag.String("flavor", string(server.FlavorFromEnv()), "server flavor to start: redis-7.0, redis-8.0, valkey-8.1 (default from "+server.FlavorEnv+")")
		duration = flag.Duration("duration", 2*time.Second, "measured time per cell")
		warmup   = flag.Duration("warmup", 300*time.Millisecond, "unmeasured time per cell before measuring")
		rounds   = flag.Int("rounds", 3, "rounds over every client and shape")
		clist    = flag.String("clients", strings.Join(clients.Names, ","), "clients, comma-separated")
		slist    = flag.String("shapes", groupStandard, "shapes or groups of shapes ("+groupStandard+", "+groupPipes+", "+groupGrowth+", "+groupCallers+", "+groupValues+", "+groupBatch+", "+groupCluster+", "+groupRound4+", all), comma-separated")
		jsonPath = flag.String("json", "load.json", "write the results as JSON here (empty: do not)")
		cpuProf  = flag.String("cpuprofile", "", "write a CPU profile of the whole run here")
		svgPath  = flag.String("svg", "load.svg", "write a chart of ops/s per shape and client here (empty: do not)")
		rbench   = flag.String("redis-benchmark", "redis-benchmark", `redis-benchmark executable for the ceiling rows ("off" to skip)`)
		heapMiB  = flag.Int("heap", 0, "MiB of live heap to hold while measuring, as an application's own data would (0: none)")
		busy     = flag.Int("busy", 0, "busy loops competing for the cores during every cell, in a child process (0: none)")
		busyPin  = flag.Bool("busy-pin", true, "bind busy loop i to CPU i (Linux), so that every core has a busy neighbour in every cell; false leaves their placement to the kernel")
		link     = flag.Duration("link", 0, "round trip to add between clients and server: a delaying proxy on loopback in a child process, half of it each way (0: none)")
		fresh    = flag.Bool("fresh", false, "run every cell in a child process of its own (a fresh heap, collector and threads), not all in this one")
		deadline = flag.Duration("deadline", 0, "run every call (every pipeline) under a context with this timeout, cancelled after the call, as a service's handlers would (0: context.Background())")
	)
	flag.Parse()
	held := holdHeap(*heapMiB)
	defer runtime.KeepAlive(held)
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}

	rep := &Report{Meta: Meta{
		Started:    time.Now().UTC(),
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		NumCPU:     runtime.NumCPU(),
		Duration:   duration.String(),
		Warmup:     warmup.String(),
		Rounds:     *rounds,
		Clients:    split(*clist),
		HeapMiB:    *heapMiB,
		Busy:       *busy,
		Fresh:      *fresh,
	}}
	if *busy > 0 {
		rep.Meta.BusyPinned = *busyPin
	}
	if *deadline > 0 {
		rep.Meta.Deadline = deadline.String()
	}
	if *link > 0 {
		rep.Meta.Link = link.String()
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		rep.Meta.LoadAverage = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	sel, err := selectShapes(split(*slist))
	if err != nil {
		return err
	}
	for _, s := range sel {
		rep.Meta.Shapes = append(rep.Meta.Shapes, s.Name)
	}

	ctx := context.Background()
	rep.Meta.CPU = cpuModel()
	if *clusterMasters > 0 {
		seeds, stop, err := startCluster(harness.Flavor(*flavor), rep)
		if err != nil {
			return err
		}
		defer stop()
		*addr, *rbench = seeds, "off"
	} else if *addr == "" {
		srv, err := server.Start(harness.Flavor(*flavor))
		if err != nil {
			return err
		}
		defer srv.Close()
		*addr = srv.Addr
		rep.Meta.Server = srv.Flavor + " " + srv.Version
	} else {
		if err := server.Seed(*addr); err != nil {
			return err
		}
		rep.Meta.Server = "server at " + *addr
	}
	if *clusterMasters == 0 && needsSweepSeed(sel) {
		if err := server.SeedSweep(*addr); err != nil {
			return err
		}
	}
	for _, s := range sel {
		if s.Cmd == "MIX" {
			if err := server.SeedMix(*addr); err != nil {
				return err
			}
			break
		}
	}
	obs, err := server.NewObserver(firstAddr(*addr))
	if err != nil {
		return err
	}
	defer obs.Close()

	// Clients (and redis-benchmark) connect to cellAddr: the server, or
	// the link in front of it; seeding and INFO go to the server itself.
	cellAddr, stopLink := *addr, func() {}
	if *link > 0 {
		lk, laddr, err := startLink(*addr, *link)
		if err != nil {
			return err
		}
		defer func() {
			if lk != nil {
				lk.stop()
			}
		}()
		cellAddr = laddr
		stopLink = func() {
			rep.Meta.LinkCores = lk.stop()
			lk = nil
		}
	}

	names := rep.Meta.Clients
	rep.Meta.RedisBenchmark = "off"
	if *rbench != "off" {
		if p, err := exec.LookPath(*rbench); err != nil {
			rep.Meta.RedisBenchmark = "not found (install redis-tools)"
		} else {
			out, _ := exec.Command(p, "--version").Output()
			rep.Meta.RedisBenchmark = strings.TrimSpace(string(out))
			*rbench = p
			names = append(names, ceilingName)
		}
	}

	var failed error
	for round := range *rounds {
		// Rotate the order every round so that no client always runs
		// right after the same neighbour.
		order := slices.Concat(names[round%len(names):], names[:round%len(names)])
		for _, s := range sel {
			for _, name := range order {
				cfg := cellConfig{Client: name, Shape: s, Addr: cellAddr, Duration: *duration, Warmup: *warmup, Link: *link, Deadline: *deadline}
				if name == ceilingName && ceilingArgs(s) == nil {
					continue // a shape redis-benchmark cannot run
				}
				bz, err := startBusy(*busy, *busyPin)
				if err != nil {
					return fmt.Errorf("-busy: %w", err)
				}
				var m Measurement
				if name == ceilingName {
					m, err = redisBenchmark(ctx, *rbench, cfg, obs)
				} else if *fresh {
					m, err = runFreshCell(cfg, firstAddr(*addr), *heapMiB)
				} else {
					m, err = runCell(ctx, cfg, obs)
				}
				if bz != nil {
					m.BusyCores = bz.stop()
				}
				c := rep.cell(name, s.Name)
				if err != nil {
					c.Error = err.Error()
					failed = errors.Join(failed, fmt.Errorf("%s %s: %w", name, s.Name, err))
					fmt.Fprintf(os.Stderr, "round %d %-14s %-16s ERROR %v\n", round+1, s.Name, name, err)
					continue
				}
				c.Rounds = append(c.Rounds, m)
				fmt.Fprintf(os.Stderr, "round %d %-14s %-16s %10.0f ops/s  p50 %7.1fµs  p99 %7.1fµs%s\n",
					round+1, s.Name, name, m.OpsPerSec, m.P50us, m.P99us, busyNote(m))
			}
		}
	}
	stopLink()
	rep.summarize()
	rep.writeMarkdown(os.Stdout)
	if *jsonPath != "" {
		if err := rep.writeJSON(*jsonPath); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "wrote", *jsonPath)
	}
	if *svgPath != "" {
		if err := rep.writeSVG(*svgPath); err != nil {
			return err
		}
		fmt.Fprintln(os.Stderr, "wrote", *svgPath)
	}
	return failed
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}
