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
	// Link is the round trip the -link proxy adds (0: none).
	Link time.Duration
	// Deadline, when set, is the timeout of a context each call runs
	// under, cancelled after it (-deadline).
	Deadline time.Duration
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
	// GCsPerMop is the garbage collections per million operations: with
	// the bytes allocated per operation it sets how much of the CPU the
	// collector takes, and it falls as the process's live heap grows
	// (see -heap).
	GCsPerMop float64 `json:"gcs_per_mop"`
	// SrvCmdsPerRead is total_commands_processed / total_reads_processed
	// on the server over the run.
	SrvCmdsPerRead float64 `json:"server_cmds_per_read"`
	// SrvCPUusPerOp is the server process's CPU time (INFO cpu,
	// used_cpu_user + used_cpu_sys) per command over the run: what the
	// client's way of sending costs the server, and, beside CPUusPerOp,
	// what the pair costs the machine.
	SrvCPUusPerOp float64 `json:"server_cpu_us_per_op"`
	// ClientBytesPerRead is the bytes each of Respire's parse passes found
	// (Stats().Bytes / Stats().Reads); ClientBytesPerSockRead the bytes
	// per read system call (the same without the filler);
	// ClientCmdsPerWrite the commands per write system call.
	ClientBytesPerRead     float64 `json:"client_bytes_per_read,omitempty"`
	ClientBytesPerSockRead float64 `json:"client_bytes_per_socket_read,omitempty"`
	ClientCmdsPerWrite     float64 `json:"client_cmds_per_write,omitempty"`
	// BusyCores is the cores the -busy loops used on average during the
	// cell (connect, warm-up and measurement): how much of the machine
	// the contention took.
	BusyCores float64 `json:"busy_cores,omitempty"`
}

// runCell connects a fresh client, warms it up (filling pools, letting
// rueidis or Respire settle), then measures one run.
func runCell(ctx context.Context, cfg cellConfig, obs *server.Observer) (Measurement, error) {
	var m Measurement
	c, err := connect(ctx, cfg.Client, cfg.Addr)
	if err != nil {
		return m, err
	}
	defer c.Close()
	dr := newDriver(c, cfg.Shape)
	dr.deadline = cfg.Deadline
	if cfg.Warmup > 0 {
		if _, err := dr.run(ctx, cfg.Warmup); err != nil {
			return m, fmt.Errorf("warm-up: %w", err)
		}
	}
	rs, hasStats := c.(clients.IOStatser)
	var io0 clients.IO
	if hasStats {
		io0 = rs.IOStats()
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
		GCsPerMop:      float64(ms1.NumGC-ms0.NumGC) / ops * 1e6,
		SrvCmdsPerRead: server.CommandsPerRead(before, after),
		SrvCPUusPerOp:  server.CPUPerOp(before, after, res.Ops),
	}
	if hasStats {
		io1 := rs.IOStats()
		m.ClientBytesPerRead = clients.Per(io1.ParseBytes-io0.ParseBytes, io1.ParseReads-io0.ParseReads)
		m.ClientBytesPerSockRead = clients.Per(io1.SocketBytes-io0.SocketBytes, io1.SocketReads-io0.SocketReads)
		m.ClientCmdsPerWrite = clients.Per(io1.Commands-io0.Commands, io1.Writes-io0.Writes)
	}
	return m, nil
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// busyNote is the progress line's note of the busy loops' share.
func busyNote(m Measurement) string {
	if m.BusyCores == 0 {
		return ""
	}
	return fmt.Sprintf("  busy loops %.2f cores", m.BusyCores)
}
