package benchmarks

// Client CPU per operation (round 4, issue 26). On a shared 2-core machine
// wall time per op swings by ±50% or more from one sample to the next,
// because other processes take the cores the server and the client need;
// the CPU time the client process itself spends per op varies far less, and
// is what a change to the client's hot paths moves. These benchmarks run
// the shapes of the load tool's issue-26 targets for the Respire client
// and its two main peers and report, beside ns/op:
//
//   - cpu-ns/op: user+system CPU of this process (getrusage) per op, the
//     warm-up included (one op or one pipeline per goroutine);
//   - GCs/Mop: garbage collections per million ops (runtime.MemStats).
//
//	go test -run '^$' -bench 'CPU' -benchmem -count 6 . | tee cpu.txt
//	benchstat -col /client cpu.txt

import (
	"runtime"
	"syscall"
	"testing"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/benchmarks/internal/server"
)

// cpuClients are the clients the CPU benchmarks compare.
var cpuClients = []string{"respire-nofiller", "goredis", "rueidis"}

func BenchmarkCPUGet1KPipe32x4(b *testing.B) { cpuEach(b, pipeConc(fixture.Pipe1K, 4)) }
func BenchmarkCPUGet1KConc64(b *testing.B) {
	cpuEach(b, par(getOp(fixture.KeyGet1K, fixture.Value1K)))
}
func BenchmarkCPUGet8KConc64(b *testing.B) {
	cpuEach(b, par(getOp(fixture.KeyGet8K, fixture.Value8K)))
}
func BenchmarkCPUSet1MSeq(b *testing.B) { cpuEach(b, seq(setOp(fixture.KeySet1M, fixture.Value1M))) }

// cpuEach is eachClient over cpuClients, with the CPU and GC metrics.
func cpuEach(b *testing.B, fn func(b *testing.B, c clients.Client, m *meter)) {
	s := benchServer(b)
	for _, name := range cpuClients {
		b.Run("client="+name, func(b *testing.B) {
			c, err := clients.New(b.Context(), name, s.Addr)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			obs, err := server.NewObserver(s.Addr)
			if err != nil {
				b.Fatal(err)
			}
			defer obs.Close()
			m := &meter{b: b, c: c, obs: obs}
			b.ReportAllocs()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			gc0, cpu0 := ms.NumGC, processCPU()
			fn(b, c, m)
			m.stop()
			cpu := processCPU() - cpu0
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(ms.NumGC-gc0)*1e6/float64(b.N), "GCs/Mop")
		})
	}
}

// processCPU is the user+system CPU time of this process, in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
