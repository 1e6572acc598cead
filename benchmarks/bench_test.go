package benchmarks

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"

	"github.com/respire-go/respire/benchmarks/internal/clients"
	"github.com/respire-go/respire/benchmarks/internal/fixture"
	"github.com/respire-go/respire/benchmarks/internal/server"
)

// One server per benchmark binary run, started by the first benchmark that
// needs it (so that `go test` without -bench starts none) and stopped by
// TestMain.
var (
	srvOnce sync.Once
	srv     *server.Server
	srvErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv != nil {
		srv.Close()
	}
	os.Exit(code)
}

func benchServer(b testing.TB) *server.Server {
	b.Helper()
	srvOnce.Do(func() {
		srv, srvErr = server.Start(server.FlavorFromEnv())
		if srvErr == nil {
			// A "key: value" line is file configuration in the benchmark
			// format: benchstat prints it, and separates results whose
			// values differ (so it must not hold the varying port).
			fmt.Printf("server: %s %s\n", srv.Flavor, srv.Version)
		}
	})
	if srvErr != nil {
		b.Fatal(srvErr)
	}
	return srv
}

// conc is the number of goroutines of the conc64 shapes.
const conc = 64

func BenchmarkGet1KSeq(b *testing.B)    { eachClient(b, seq(getOp(fixture.KeyGet1K, fixture.Value1K))) }
func BenchmarkGet8KSeq(b *testing.B)    { eachClient(b, seq(getOp(fixture.KeyGet8K, fixture.Value8K))) }
func BenchmarkSet1KSeq(b *testing.B)    { eachClient(b, seq(setOp(fixture.KeySet1K, fixture.Value1K))) }
func BenchmarkIncrSeq(b *testing.B)     { eachClient(b, seq(incrOp(fixture.KeyIncr))) }
func BenchmarkGet1KConc64(b *testing.B) { eachClient(b, par(getOp(fixture.KeyGet1K, fixture.Value1K))) }
func BenchmarkGet8KConc64(b *testing.B) { eachClient(b, par(getOp(fixture.KeyGet8K, fixture.Value8K))) }
func BenchmarkSet1KConc64(b *testing.B) { eachClient(b, par(setOp(fixture.KeySet1K, fixture.Value1K))) }
func BenchmarkIncrConc64(b *testing.B)  { eachClient(b, par(incrOp(fixture.KeyIncr))) }
func BenchmarkGet1KPipe32(b *testing.B) { eachClient(b, pipe(fixture.KeyGet1K, fixture.Value1K)) }
func BenchmarkGet8KPipe32(b *testing.B) { eachClient(b, pipe(fixture.KeyGet8K, fixture.Value8K)) }

// width is the number of commands per pipeline of the pipe32 shapes.
const width = 32

// An op runs one command and checks its reply. It returns a description of
// what was wrong, or nil. Each goroutine calls mk once for its own op, so
// that an op may keep per-goroutine state.
type op func(ctx context.Context, c clients.Client) error
type opMaker func() op

func getOp(key, want string) opMaker {
	return func() op {
		return func(ctx context.Context, c clients.Client) error {
			if ck, ok := c.(clients.Checker); ok {
				return ck.GetCheck(ctx, key, want)
			}
			v, err := c.Get(ctx, key)
			if err != nil {
				return err
			}
			if v != want {
				return fmt.Errorf("GET %s: %d bytes differ from the %d written", key, len(v), len(want))
			}
			return nil
		}
	}
}

func setOp(key, value string) opMaker {
	return func() op {
		return func(ctx context.Context, c clients.Client) error {
			return c.Set(ctx, key, value)
		}
	}
}

// incrOp checks that the counter only grows, as seen by each goroutine.
func incrOp(key string) opMaker {
	return func() op {
		var last int64
		return func(ctx context.Context, c clients.Client) error {
			v, err := c.Incr(ctx, key)
			if err != nil {
				return err
			}
			if v <= last {
				return fmt.Errorf("INCR %s: %d after %d", key, v, last)
			}
			last = v
			return nil
		}
	}
}

// eachClient runs fn as a sub-benchmark per client, named client=NAME so
// that benchstat can put clients in columns (-col /client); benchstat only
// projects sub-benchmark parts of the key=value form. Each gets a client of
// its own, connected outside the timed region.
func eachClient(b *testing.B, fn func(b *testing.B, c clients.Client, m *meter)) {
	s := benchServer(b)
	for _, name := range clients.Names {
		b.Run("client="+name, func(b *testing.B) {
			ctx := context.Background()
			c, err := clients.New(ctx, name, s.Addr)
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
			fn(b, c, m)
			m.stop()
		})
	}
}

// meter reports, beside the timing, the server's commands per read and,
// for Respire, the bytes each parse pass found, between start (called
// after the warm-up, with the timer reset) and stop.
type meter struct {
	b      *testing.B
	c      clients.Client
	obs    *server.Observer
	before server.Counters
	io     clients.IO
}

func (m *meter) start() {
	var err error
	if m.before, err = m.obs.Counters(); err != nil {
		m.b.Fatal(err)
	}
	if rs, ok := m.c.(clients.IOStatser); ok {
		m.io = rs.IOStats()
	}
	m.b.ResetTimer()
}

func (m *meter) stop() {
	m.b.StopTimer()
	after, err := m.obs.Counters()
	if err != nil {
		m.b.Fatal(err)
	}
	m.b.ReportMetric(server.CommandsPerRead(m.before, after), "srvcmds/read")
	if rs, ok := m.c.(clients.IOStatser); ok {
		io := rs.IOStats()
		if v := clients.Per(io.ParseBytes-m.io.ParseBytes, io.ParseReads-m.io.ParseReads); v > 0 {
			m.b.ReportMetric(v, "B/parse")
		}
		if v := clients.Per(io.SocketBytes-m.io.SocketBytes, io.SocketReads-m.io.SocketReads); v > 0 {
			m.b.ReportMetric(v, "B/sockread")
		}
		if v := clients.Per(io.Commands-m.io.Commands, io.Writes-m.io.Writes); v > 0 {
			m.b.ReportMetric(v, "cmds/write")
		}
	}
}

// seq runs op b.N times on one goroutine.
func seq(mk opMaker) func(b *testing.B, c clients.Client, m *meter) {
	return func(b *testing.B, c clients.Client, m *meter) {
		ctx := context.Background()
		o := mk()
		if err := o(ctx, c); err != nil { // warm up, and fail fast
			b.Fatal(err)
		}
		m.start()
		for range b.N {
			if err := o(ctx, c); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// par runs op b.N times in total on conc goroutines.
func par(mk opMaker) func(b *testing.B, c clients.Client, m *meter) { return parN(mk, conc) }

// parN runs op b.N times in total on callers goroutines.
func parN(mk opMaker, callers int) func(b *testing.B, c clients.Client, m *meter) {
	return func(b *testing.B, c clients.Client, m *meter) {
		ctx := context.Background()
		// Fill connection pools before timing: one op on each goroutine.
		var wg sync.WaitGroup
		errs := make(chan error, callers)
		for range callers {
			wg.Go(func() {
				if err := mk()(ctx, c); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
		procs := runtime.GOMAXPROCS(0)
		b.SetParallelism((callers + procs - 1) / procs)
		m.start()
		b.RunParallel(func(pb *testing.PB) {
			o := mk()
			for pb.Next() {
				if err := o(ctx, c); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
}

// pipe runs b.N GETs of key on one goroutine, width per pipeline (the last
// pipeline may be shorter), and checks every value. ns/op is per GET.
func pipe(key, want string) func(b *testing.B, c clients.Client, m *meter) {
	return func(b *testing.B, c clients.Client, m *meter) {
		ctx := context.Background()
		keys := make([]string, width)
		vals := make([]string, width)
		for i := range keys {
			keys[i] = key
		}
		ck, _ := c.(clients.Checker)
		ok := func(_ int, v []byte) bool { return string(v) == want }
		run := func(n int) {
			if ck != nil {
				if err := ck.GetPipeCheck(ctx, keys[:n], ok); err != nil {
					b.Fatal(err)
				}
				return
			}
			clear(vals[:n])
			if err := c.GetPipe(ctx, keys[:n], vals[:n]); err != nil {
				b.Fatal(err)
			}
			for _, v := range vals[:n] {
				if v != want {
					b.Fatalf("GET %s: %d bytes differ from the %d written", key, len(v), len(want))
				}
			}
		}
		run(width) // warm up, and fail fast
		m.start()
		for left := b.N; left > 0; left -= width {
			run(min(left, width))
		}
	}
}
