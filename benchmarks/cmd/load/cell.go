package main

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/server"
)

// cellConfig is one measurement: a client driving a shape.
type cellConfig struct {
	Client   string
	Shape    shape
	Addr     string
	Duration time.Duration
	Warmup   time.Duration
}

// Measurement is what one cell measured. Fields that do not apply are 0
// (allocations of redis-benchmark, bytes per read of peers).
type Measurement struct {
	Ops       int64   `json:"ops"`
	Seconds   float64 `json:"seconds"`
	OpsPerSec float64 `json:"ops_per_sec"`
	// Latency is per command, or per pipeline for the pipe shapes.
	P50us      float64 `json:"p50_us"`
	P99us      float64 `json:"p99_us"`
	CPUusPerOp float64 `json:"cpu_us_per_op"`
	// CtxSwPerOp is the client process's OS context switches per command:
	// each is a thread going to sleep (futex, blocking system call) or
	// being preempted, the visible cost of goroutine hand-offs.
	CtxSwPerOp float64 `json:"ctx_switches_per_op"`
	AllocsOp   float64 `json:"allocs_per_op"`
	BytesOp    float64 `json:"bytes_per_op"`
	// SrvCmdsPerRead is total_commands_processed / total_reads_processed
	// on the server over the run.
	SrvCmdsPerRead float64 `json:"server_cmds_per_read"`
	// ClientBytesPerRead is Respire's Stats().Bytes / Stats().Reads.
	ClientBytesPerRead float64 `json:"client_bytes_per_read,omitempty"`
}

// runCell connects a fresh client, warms it up (filling pools, letting
// rueidis or Respire settle), then measures one run.
func runCell(ctx context.Context, cfg cellConfig, obs *server.Observer) (Measurement, error) {
	var m Measurement
	c, err := clients.New(ctx, cfg.Client, cfg.Addr)
	if err != nil {
		return m, err
	}
	defer c.Close()
	dr := newDriver(c, cfg.Shape)
	if cfg.Warmup > 0 {
		if _, err := dr.run(ctx, cfg.Warmup); err != nil {
			return m, fmt.Errorf("warm-up: %w", err)
		}
	}
	rs, hasStats := c.(clients.ReadStatser)
	var reads0, bytes0 int64
	if hasStats {
		reads0, bytes0 = rs.ReadStats()
	}
	runtime.GC()
	before, err := obs.Counters()
	if err != nil {
		return m, err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	u0 := selfUsage()

	res, err := dr.run(ctx, cfg.Duration)

	u1 := selfUsage()
	runtime.ReadMemStats(&ms1)
	if err != nil {
		return m, err
	}
	after, err := obs.Counters()
	if err != nil {
		return m, err
	}
	ops := float64(res.Ops)
	m = Measurement{
		Ops:            res.Ops,
		Seconds:        res.Took.Seconds(),
		OpsPerSec:      ops / res.Took.Seconds(),
		P50us:          us(res.Lat.Quantile(0.50)),
		P99us:          us(res.Lat.Quantile(0.99)),
		CPUusPerOp:     us(u1.cpu-u0.cpu) / ops,
		CtxSwPerOp:     float64(u1.csw-u0.csw) / ops,
		AllocsOp:       float64(ms1.Mallocs-ms0.Mallocs) / ops,
		BytesOp:        float64(ms1.TotalAlloc-ms0.TotalAlloc) / ops,
		SrvCmdsPerRead: server.CommandsPerRead(before, after),
	}
	if hasStats {
		reads1, bytes1 := rs.ReadStats()
		if reads1 > reads0 {
			m.ClientBytesPerRead = float64(bytes1-bytes0) / float64(reads1-reads0)
		}
	}
	return m, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
