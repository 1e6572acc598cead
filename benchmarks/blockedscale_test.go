package benchmarks

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	goredis "github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// TestBlockedScale measures what 1,000 callers blocked at once in BLPOP
// cost each client with its default options, beside the peers (issue 31,
// item 4): how many were blocked on the server at once and how many got
// their item; the connections the client holds, its Go heap and RSS, and
// the server's used_memory, before, with the callers blocked, once they are
// done, and after an idle time (RESPIRE_BLOCKEDSCALE_IDLE, a Go duration,
// default 65s: past Respire's one minute). Each client runs in a process
// of its own, against a server of its own, all at once. It is a
// measurement, not a check: set RESPIRE_BLOCKEDSCALE=1 to run it.
//
//	cd benchmarks && RESPIRE_BLOCKEDSCALE=1 go test -run TestBlockedScale -v .
func TestBlockedScale(t *testing.T) {
	if os.Getenv(blockedScaleEnv) == "" {
		t.Skipf("a measurement beside the peers: set %s=1 to run it", blockedScaleEnv)
	}
	if os.Getenv(blockedScaleChild) != "" {
		t.Skip("a child runs TestBlockedScaleChild")
	}
	names := []string{"respire", "goredis", "rueidis"}
	results := make([]scaleResult, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		srv := harness.Start(t, harness.Config{Flavor: server.FlavorFromEnv()})
		wg.Go(func() {
			cmd := exec.Command(os.Args[0], "-test.run=^TestBlockedScaleChild$", "-test.v")
			cmd.Env = append(os.Environ(), blockedScaleChild+"="+name, blockedScaleAddr+"="+srv.Addr)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Errorf("%s: %v\n%s", name, err, out)
				return
			}
			for line := range strings.Lines(string(out)) {
				if js, ok := strings.CutPrefix(strings.TrimSpace(line), scaleMarker); ok {
					if err := json.Unmarshal([]byte(js), &results[i]); err != nil {
						t.Errorf("%s: %v", name, err)
					}
					return
				}
			}
			t.Errorf("%s printed no result:\n%s", name, out)
		})
	}
	wg.Wait()
	var b strings.Builder
	fmt.Fprintf(&b, "%d callers blocked at once in BLPOP, default options, GOMAXPROCS %d\n", scaleN, runtime.GOMAXPROCS(0))
	b.WriteString("| client | blocked at once | ok | failed | conns: before / blocked / done / idle | heap MiB: before / blocked / done / idle | RSS MiB: before / blocked / done / idle | server used_memory MiB: before / blocked / idle | first error |\n")
	b.WriteString("|---|--:|--:|--:|---|---|---|---|---|\n")
	for i, r := range results {
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %s | %s | %s | %s | %s |\n", names[i], r.Blocked, r.OK, r.Failed,
			r.cols(func(p scalePoint) string { return strconv.Itoa(p.Conns) }, true),
			r.cols(func(p scalePoint) string { return mib(p.Heap) }, true),
			r.cols(func(p scalePoint) string { return mib(p.RSS) }, true),
			r.cols(func(p scalePoint) string { return mib(p.ServerMem) }, false),
			r.FirstErr)
	}
	b.WriteString("\nper caller (blocked minus before, over the callers; conns over those blocked at once):\n")
	b.WriteString("| client | conns | heap KiB | RSS KiB | server KiB |\n|---|--:|--:|--:|--:|\n")
	for i, r := range results {
		per := func(f func(scalePoint) int64) string {
			return strconv.FormatFloat(float64(f(r.Points[1])-f(r.Points[0]))/scaleN/1024, 'f', 1, 64)
		}
		fmt.Fprintf(&b, "| %s | %.2f | %s | %s | %s |\n", names[i], float64(r.Points[1].Conns-r.Points[0].Conns)/float64(max(r.Blocked, 1)),
			per(func(p scalePoint) int64 { return p.Heap }),
			per(func(p scalePoint) int64 { return p.RSS }),
			per(func(p scalePoint) int64 { return p.ServerMem }))
	}
	t.Log(b.String())
}

const (
	blockedScaleEnv   = "RESPIRE_BLOCKEDSCALE"
	blockedScaleChild = "RESPIRE_BLOCKEDSCALE_CHILD"
	blockedScaleAddr  = "RESPIRE_BLOCKEDSCALE_ADDR"
	scaleMarker       = "BLOCKEDSCALE "
	scaleN            = 1000
)

// scalePoint is one reading: the client's connections (the server's
// connected_clients, less the observer's), its Go heap in use and RSS, and
// the server's used_memory.
type scalePoint struct {
	Conns                int
	Heap, RSS, ServerMem int64
}

type scaleResult struct {
	Blocked, OK, Failed int
	FirstErr            string
	// Points: before, blocked, done, idle.
	Points [4]scalePoint
}

func (r *scaleResult) cols(f func(scalePoint) string, done bool) string {
	var s []string
	for i, p := range r.Points {
		if i == 2 && !done {
			continue
		}
		s = append(s, f(p))
	}
	return strings.Join(s, " / ")
}

func mib(n int64) string { return strconv.FormatFloat(float64(n)/(1<<20), 'f', 1, 64) }

// TestBlockedScaleChild is one client's part of TestBlockedScale.
func TestBlockedScaleChild(t *testing.T) {
	name, addr := os.Getenv(blockedScaleChild), os.Getenv(blockedScaleAddr)
	if name == "" {
		t.Skip("run by TestBlockedScale")
	}
	idle := 65 * time.Second
	if v := os.Getenv("RESPIRE_BLOCKEDSCALE_IDLE"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatal(err)
		}
		idle = d
	}
	obs, err := redis.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer obs.Close()
	info := func(field string) int64 {
		s, err := redis.String(obs.Do("INFO"))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(s, "\r\n") {
			if v, ok := strings.CutPrefix(line, field+":"); ok {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
		t.Fatalf("INFO has no %s", field)
		return 0
	}
	read := func() scalePoint {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return scalePoint{Conns: int(info("connected_clients")) - 1, Heap: int64(ms.HeapInuse), RSS: rss(), ServerMem: info("used_memory")}
	}

	ctx := context.Background()
	blpop, closeClient := blockingClient(t, name, addr)
	var r scaleResult
	r.Points[0] = read()

	var ok, failed atomic.Int64
	var firstErr atomic.Pointer[string]
	var wg sync.WaitGroup
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	for range scaleN {
		wg.Go(func() {
			if err := blpop(cctx, "blockedscale:list"); err != nil {
				failed.Add(1)
				s := err.Error()
				firstErr.CompareAndSwap(nil, &s)
				return
			}
			ok.Add(1)
		})
	}
	// Blocked at once: all of them, or as many as the client lets block
	// (the count stays put for 3 s).
	last, since := -1, time.Now()
	for {
		n := int(info("blocked_clients"))
		if n != last {
			last, since = n, time.Now()
		}
		if n == scaleN || time.Since(since) > 3*time.Second {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	r.Blocked = last
	r.Points[1] = read()

	items := make([]any, 0, scaleN+1)
	items = append(items, "blockedscale:list")
	for i := range scaleN {
		items = append(items, i)
	}
	if _, err := obs.Do("RPUSH", items...); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	r.OK, r.Failed = int(ok.Load()), int(failed.Load())
	if p := firstErr.Load(); p != nil {
		r.FirstErr = *p
	}
	r.Points[2] = read()
	time.Sleep(idle)
	r.Points[3] = read()
	closeClient()
	js, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(scaleMarker + string(js))
}

// blockingClient returns BLPOP (30 s) and Close of client name, with its
// default options.
func blockingClient(t *testing.T, name, addr string) (func(ctx context.Context, key string) error, func()) {
	switch name {
	case "respire":
		c, err := respire.Connect(context.Background(), respire.Options{Addr: addr})
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, key string) error {
			_, err := c.BLPop(ctx, 30*time.Second, key)
			return err
		}, func() { c.Close() }
	case "goredis":
		c := goredis.NewClient(&goredis.Options{Addr: addr})
		if err := c.Ping(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, key string) error {
			return c.BLPop(ctx, 30*time.Second, key).Err()
		}, func() { c.Close() }
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
		if err != nil {
			t.Fatal(err)
		}
		return func(ctx context.Context, key string) error {
			return c.Do(ctx, c.B().Blpop().Key(key).Timeout(30).Build()).Error()
		}, c.Close
	}
	t.Fatalf("unknown client %q", name)
	return nil, nil
}

// rss returns the process's resident set size, 0 where /proc does not
// tell.
func rss() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
