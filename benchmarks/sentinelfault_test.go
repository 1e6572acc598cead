package benchmarks

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
)

// TestSentinelFailoverCompare fails the master of a Sentinel deployment
// (1 master, 2 replicas, 3 sentinels, down-after-milliseconds 1000,
// failover-timeout 5000, Redis 7.0) over under the load of 64 goroutines,
// each appending its own numbers to a list of its own (RPUSH) with a 1s
// deadline per call, for Respire, rueidis and go-redis with their default
// settings, one after the other on the same deployment: a SENTINEL
// FAILOVER ("graceful"), then kill -9 of the master. It prints, per
// client: the longest pause in acknowledged writes after the fault (the
// hold) and when writes came back beside the sentinels' +switch-master;
// the calls that failed, with their most common errors; and the
// acknowledged writes that the new master does not have (lost: the
// graceful failover loses none by itself, a kill loses what the master had
// not replicated yet). A measurement, not a check: set
// RESPIRE_SENTINELFAULT=1 to run it (RESPIRE_SENTINELFAULT_CLIENTS, a
// comma list, to run only some of respire, rueidis, goredis).
//
//	cd benchmarks && RESPIRE_SENTINELFAULT=1 go test -run TestSentinelFailoverCompare -v -timeout 10m .
func TestSentinelFailoverCompare(t *testing.T) {
	if os.Getenv("RESPIRE_SENTINELFAULT") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_SENTINELFAULT=1 to run it")
	}
	clients := []string{"respire", "respire-early", "rueidis", "goredis"}
	if v := os.Getenv("RESPIRE_SENTINELFAULT_CLIENTS"); v != "" {
		clients = strings.Split(v, ",")
	}
	d := harness.StartSentinels(t, harness.SentinelConfig{Flavor: harness.Redis70})
	var rows []string
	for _, fault := range []string{"graceful", "kill"} {
		for _, name := range clients {
			r := runSentinelFault(t, d, name, fault)
			rows = append(rows, fmt.Sprintf("| %s | %s | %v | %v | %v | %d | %d | %d | %s |", fault, name,
				r.switchMaster, r.hold, r.back, r.ok, r.errs, r.lost, r.kinds()))
		}
	}
	t.Logf("Sentinel failover, Redis 7.0, 1 master + 2 replicas + 3 sentinels (down-after 1s), %d goroutines of RPUSH, %v deadlines, the fault %v in, times from the fault:\n"+
		"| fault | client | +switch-master | longest pause in writes | writes back | calls ok | calls failed | acknowledged writes lost | errors |\n"+
		"|---|---|--:|--:|--:|--:|--:|--:|---|\n%s",
		sfWorkers, sfDeadline, sfFaultAfter, strings.Join(rows, "\n"))
}

const (
	sfWorkers    = 64
	sfDeadline   = time.Second
	sfFaultAfter = 2 * time.Second
	// sfAfter is how long the load goes on after +switch-master: a
	// client that still writes to the old master (which the sentinels
	// demote only seconds later) loses those writes.
	sfAfter = 4 * time.Second
)

// sfClient appends to a list (RPUSH key v), with the caller's deadline.
type sfClient struct {
	push  func(ctx context.Context, k, v string) error
	close func()
}

func openSentinelClient(t *testing.T, name string, d *harness.Sentinels) sfClient {
	ctx := context.Background()
	switch name {
	case "respire", "respire-early":
		// respire-early switches at the promotion (SwitchAtPromotion).
		so := &respire.SentinelOptions{MasterName: d.Config.MasterName, Addrs: d.Addrs(), SwitchAtPromotion: name == "respire-early"}
		c, err := respire.Connect(ctx, respire.Options{Sentinel: so})
		if err != nil {
			t.Fatal(err)
		}
		return sfClient{
			func(ctx context.Context, k, v string) error { _, err := c.RPush(ctx, k, v); return err },
			func() { c.Close() }}
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: d.Addrs(), Sentinel: rueidis.SentinelOption{MasterSet: d.Config.MasterName}})
		if err != nil {
			t.Fatal(err)
		}
		return sfClient{
			func(ctx context.Context, k, v string) error {
				return c.Do(ctx, c.B().Rpush().Key(k).Element(v).Build()).Error()
			},
			c.Close}
	case "goredis":
		c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: d.Config.MasterName, SentinelAddrs: d.Addrs()})
		return sfClient{
			func(ctx context.Context, k, v string) error { return c.RPush(ctx, k, v).Err() },
			func() { c.Close() }}
	}
	t.Fatalf("unknown client %q", name)
	return sfClient{}
}

type sfResult struct {
	switchMaster, hold, back time.Duration
	ok, errs, lost           int64
	kindsMu                  sync.Mutex
	errKinds                 map[string]int
}

func (r *sfResult) kinds() string {
	type kv struct {
		k string
		n int
	}
	var all []kv
	for k, n := range r.errKinds {
		all = append(all, kv{k, n})
	}
	slices.SortFunc(all, func(a, b kv) int { return b.n - a.n })
	var parts []string
	for i, e := range all {
		if i == 3 {
			break
		}
		parts = append(parts, fmt.Sprintf("%d× %s", e.n, e.k))
	}
	return strings.Join(parts, "; ")
}

func runSentinelFault(t *testing.T, d *harness.Sentinels, name, fault string) *sfResult {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := d.WaitStable(ctx); err != nil {
		t.Fatalf("the deployment did not settle: %v", err)
	}
	old, err := d.MasterAddr(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := openSentinelClient(t, name, d)
	defer c.close()
	prefix := fmt.Sprintf("sf:%s:%s:%d", name, fault, time.Now().UnixNano())
	r := &sfResult{errKinds: map[string]int{}}
	acked := make([][]int, sfWorkers)
	var mu sync.Mutex
	var okEnds []time.Time
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range sfWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := prefix + ":" + strconv.Itoa(w)
			var ends []time.Time
			defer func() { mu.Lock(); okEnds = append(okEnds, ends...); mu.Unlock() }()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				cctx, cancel := context.WithTimeout(ctx, sfDeadline)
				err := c.push(cctx, key, strconv.Itoa(n))
				cancel()
				if err == nil {
					atomic.AddInt64(&r.ok, 1)
					acked[w] = append(acked[w], n)
					ends = append(ends, time.Now())
					continue
				}
				atomic.AddInt64(&r.errs, 1)
				msg := err.Error()
				if len(msg) > 160 {
					msg = msg[:160]
				}
				r.kindsMu.Lock()
				r.errKinds[msg]++
				r.kindsMu.Unlock()
			}
		}()
	}
	select {
	case <-time.After(sfFaultAfter):
	case <-ctx.Done():
	}
	t0 := time.Now()
	if fault == "kill" {
		d.Node(old).Kill()
	} else if err := d.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	ev, err := d.Events.Wait(ctx, t0, "+switch-master", d.Config.MasterName)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-time.After(time.Until(ev.At.Add(sfAfter))):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	r.switchMaster = ev.At.Sub(t0).Round(time.Millisecond)
	slices.SortFunc(okEnds, func(a, b time.Time) int { return a.Compare(b) })
	prev := t0
	for _, e := range okEnds {
		if e.Before(t0) {
			continue
		}
		if g := e.Sub(prev); g > r.hold {
			r.hold, r.back = g.Round(time.Millisecond), e.Sub(t0).Round(time.Millisecond)
		}
		prev = e
	}
	master, err := d.Master(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for w := range sfWorkers {
		v, err := master.Do(ctx, "LRANGE", prefix+":"+strconv.Itoa(w), "0", "-1")
		if err != nil {
			t.Fatal(err)
		}
		have := map[string]bool{}
		if l, ok := v.([]any); ok {
			for _, e := range l {
				have[fmt.Sprint(e)] = true
			}
		}
		for _, n := range acked[w] {
			if !have[strconv.Itoa(n)] {
				r.lost++
			}
		}
	}
	t.Logf("%s %s: +switch-master %v after the fault; longest pause in writes %v, back at %v; ok %d, failed %d, lost %d; errors: %s",
		fault, name, r.switchMaster, r.hold, r.back, r.ok, r.errs, r.lost, r.kinds())
	return r
}
