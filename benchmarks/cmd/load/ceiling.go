package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/server"
)

// ceilingName is the client name the redis-benchmark rows carry.
const ceilingName = "redis-benchmark"

// ceilingArgs returns the command redis-benchmark runs for s, or nil for
// a shape it cannot run the same way (SET of a value too long for a
// command line, the mixed workload). Keys of a keyset are drawn at random
// (-r) instead of in turn.
func ceilingArgs(s shape) []string {
	switch {
	case s.Cmd == "GET" && s.Keys != nil:
		return []string{"-r", strconv.Itoa(s.Keys.N), "GET", s.Keys.Prefix + "__rand_int__"}
	case s.Cmd == "GET" || s.Cmd == "INCR":
		return []string{s.Cmd, s.Key}
	case s.Cmd == "MGET":
		args := []string{"MGET"}
		for i := range s.Width {
			args = append(args, s.Keys.Key(i))
		}
		return args
	}
	return nil
}

// redisBenchmark measures a shape with redis-benchmark (C, one event loop,
// no reply checking) as the practical ceiling. Its concurrent shapes use a
// connection per caller with one command in flight each, its pipe shapes a
// connection per caller with -P; it speaks RESP2. It runs a count, not a
// duration, so a short calibration run sizes the measured one.
func redisBenchmark(ctx context.Context, bin string, cfg cellConfig, obs *server.Observer) (Measurement, error) {
	var m Measurement
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return m, err
	}
	s := cfg.Shape
	clientsN, pipeline := s.callers(), 1
	if s.Mode == modePipe {
		pipeline = s.Width
	}
	run := func(n int64) (*exec.Cmd, []string, error) {
		args := append([]string{"-h", host, "-p", port,
			"-c", strconv.Itoa(clientsN), "-P", strconv.Itoa(pipeline),
			"-n", strconv.FormatInt(n, 10), "--csv"}, ceilingArgs(s)...)
		cmd := exec.CommandContext(ctx, bin, args...)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		if err := cmd.Run(); err != nil {
			return nil, nil, fmt.Errorf("%s: %w: %s", bin, err, errOut.String())
		}
		rows, err := csv.NewReader(&out).ReadAll()
		if err != nil || len(rows) < 2 || len(rows[1]) < 8 {
			return nil, nil, fmt.Errorf("%s: unexpected output %q", bin, out.String())
		}
		return cmd, rows[1], nil
	}
	// Calibrate (and warm up) on about a tenth of a second's worth.
	calib := int64(2000)
	if s.Mode != modeSeq {
		calib = 20000
	}
	if len(s.Value) >= 100<<10 {
		calib = 200
	}
	if cfg.Link > 0 {
		calib = max(calib/10, 100) // every round trip takes the link's time
	}
	_, row, err := run(calib)
	if err != nil {
		return m, err
	}
	rps, _ := strconv.ParseFloat(row[1], 64)
	n := max(int64(rps*cfg.Duration.Seconds()), calib)
	n -= n % int64(clientsN*pipeline)

	before, err := obs.Counters()
	if err != nil {
		return m, err
	}
	start := time.Now()
	cmd, row, err := run(n)
	took := time.Since(start)
	if err != nil {
		return m, err
	}
	after, err := obs.Counters()
	if err != nil {
		return m, err
	}
	f := func(i int) float64 { v, _ := strconv.ParseFloat(row[i], 64); return v }
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	m = Measurement{
		Ops:     n,
		Seconds: took.Seconds(),
		// redis-benchmark's own rate excludes its start-up.
		OpsPerSec:      f(1),
		P50us:          f(4) * 1000,
		P99us:          f(6) * 1000,
		CPUusPerOp:     us(cpu) / float64(n),
		SrvCmdsPerRead: server.CommandsPerRead(before, after),
		SrvCPUusPerOp:  server.CPUPerOp(before, after, n),
	}
	return m, nil
}
