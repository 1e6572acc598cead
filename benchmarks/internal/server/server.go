// Package server starts the Redis or Valkey server the benchmarks run
// against, seeds the values they read, and reads the server's own counters
// (INFO stats) around a measurement.
package server

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/tests/harness"
)

// FlavorEnv names the environment variable that chooses the server flavor
// (redis-7.0, redis-8.0, valkey-8.1). The default is DefaultFlavor.
const FlavorEnv = "RESPIRE_BENCH_FLAVOR"

// DefaultFlavor is the server the benchmarks use unless told otherwise.
const DefaultFlavor = harness.Redis80

// FlavorFromEnv returns the flavor named by FlavorEnv, or DefaultFlavor.
func FlavorFromEnv() harness.Flavor {
	if f := os.Getenv(FlavorEnv); f != "" {
		return harness.Flavor(f)
	}
	return DefaultFlavor
}

// Server is a running server started by Start.
type Server struct {
	Addr    string
	Flavor  string
	Version string
	tb      *processTB
}

// Start starts a server of flavor f through the test harness (on a free
// loopback port, without persistence) and seeds it. Close stops it.
func Start(f harness.Flavor) (*Server, error) {
	tb := newProcessTB()
	done := make(chan *harness.Server, 1)
	go func() {
		defer close(done)
		done <- harness.Start(tb, harness.Config{Flavor: f})
	}()
	hs := <-done
	if hs == nil || tb.Failed() {
		tb.close()
		return nil, fmt.Errorf("starting %s: %s", f, strings.Join(tb.messages(), "; "))
	}
	s := &Server{Addr: hs.Addr, Flavor: string(hs.Flavor), Version: hs.Version, tb: tb}
	if err := Seed(s.Addr); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// Close stops the server and removes its directory.
func (s *Server) Close() { s.tb.close() }

// Seed writes the values the GET shapes read and resets the counter.
func Seed(addr string) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("seeding %s: %w", addr, err)
	}
	defer c.Close()
	for _, kv := range [][2]string{
		{fixture.KeyGet1K, fixture.Value1K},
		{fixture.KeyGet8K, fixture.Value8K},
		{fixture.KeySet1K, fixture.Value1K},
		{fixture.KeyIncr, "0"},
		{fixture.KeyGet100K, fixture.Value100K},
		{fixture.KeyGet1M, fixture.Value1M},
	} {
		if _, err := c.Do("SET", kv[0], kv[1]); err != nil {
			return fmt.Errorf("seeding %s: %w", addr, err)
		}
	}
	for _, ks := range []*fixture.Keyset{fixture.Pipe1K, fixture.Pipe8K, fixture.MGet} {
		if err := SeedKeyset(c, ks); err != nil {
			return fmt.Errorf("seeding %s: %w", addr, err)
		}
	}
	return nil
}

// SeedKeyset writes every key of ks over c, pipelined.
func SeedKeyset(c redis.Conn, ks *fixture.Keyset) error {
	const chunk = 500
	for i := 0; i < ks.N; i += chunk {
		n := min(chunk, ks.N-i)
		for j := i; j < i+n; j++ {
			if err := c.Send("SET", ks.Key(j), ks.Value(j)); err != nil {
				return err
			}
		}
		if err := c.Flush(); err != nil {
			return err
		}
		for range n {
			if _, err := c.Receive(); err != nil {
				return err
			}
		}
	}
	return nil
}

// SeedMix writes the mixed workload's keys (fixture.Mix, about 100 MiB):
// only when that shape runs.
func SeedMix(addr string) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second))
	if err != nil {
		return fmt.Errorf("seeding %s: %w", addr, err)
	}
	defer c.Close()
	return SeedKeyset(c, fixture.Mix)
}

// Counters are the server's totals from INFO stats and INFO cpu.
type Counters struct {
	Commands int64 // total_commands_processed
	Reads    int64 // total_reads_processed
	// CPU is the server process's CPU time in seconds, user and system
	// (used_cpu_user + used_cpu_sys: every thread of the process).
	CPU float64
}

// CPUPerOp is the server's CPU time in microseconds per command between
// two readings, over ops commands of the client (0 when ops is not
// positive).
func CPUPerOp(before, after Counters, ops int64) float64 {
	if ops <= 0 {
		return 0
	}
	return (after.CPU - before.CPU) * 1e6 / float64(ops)
}

// CommandsPerRead is the number of commands the server processed per
// socket read between two readings: how well the client batched its writes
// (1 when every command arrives alone). Observer's own INFO is subtracted.
func CommandsPerRead(before, after Counters) float64 {
	cmds := after.Commands - before.Commands - 1
	reads := after.Reads - before.Reads - 1
	if reads <= 0 {
		return 0
	}
	return float64(cmds) / float64(reads)
}

// Observer reads INFO stats over a connection of its own, kept open so that
// its reads cost the server one command and one read each.
type Observer struct {
	c redis.Conn
}

// NewObserver dials addr.
func NewObserver(addr string) (*Observer, error) {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(5*time.Second))
	if err != nil {
		return nil, err
	}
	return &Observer{c: c}, nil
}

// Counters returns the server's current totals.
func (o *Observer) Counters() (Counters, error) {
	info, err := redis.String(o.c.Do("INFO", "stats", "cpu"))
	if err != nil {
		return Counters{}, err
	}
	var n Counters
	var seen int
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "total_commands_processed":
			n.Commands, err = strconv.ParseInt(v, 10, 64)
			seen++
		case "total_reads_processed":
			n.Reads, err = strconv.ParseInt(v, 10, 64)
			seen++
		case "used_cpu_user", "used_cpu_sys":
			var t float64
			t, err = strconv.ParseFloat(v, 64)
			n.CPU += t
			seen++
		}
		if err != nil {
			return Counters{}, fmt.Errorf("INFO %s: %w", k, err)
		}
	}
	if seen != 4 {
		return Counters{}, errors.New("INFO stats cpu lacks total_commands_processed, total_reads_processed, used_cpu_user or used_cpu_sys")
	}
	return n, nil
}

// Close closes the connection.
func (o *Observer) Close() error { return o.c.Close() }
