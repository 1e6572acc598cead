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

// redisBenchmark measures a shape with redis-benchmark (C, one event loop,
// no reply checking) as the practical ceiling. Its conc64 shapes use 64
// connections with one command in flight each, its pipe shapes one
// connection with -P; it speaks RESP2. It runs a count, not a duration, so
// a short calibration run sizes the measured one.
func redisBenchmark(ctx context.Context, bin string, cfg cellConfig, obs *server.Observer) (Measurement, error) {
	var m Measurement
	host, port, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return m, err
	}
	s := cfg.Shape
	clientsN, pipeline := 1, 1
	switch s.Mode {
	case modeConc:
		clientsN = s.Width
	case modePipe:
		pipeline = s.Width
	}
	run := func(n int64) (*exec.Cmd, []string, error) {
		cmd := exec.CommandContext(ctx, bin, "-h", host, "-p", port,
			"-c", strconv.Itoa(clientsN), "-P", strconv.Itoa(pipeline),
			"-n", strconv.FormatInt(n, 10), "--csv", s.Cmd, s.Key)
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
	}
	return m, nil
}
