package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
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

// TestClusterFaultCompare kills (kill -9) or stops (SIGSTOP) a primary of
// a 3+3 Redis 7.0 cluster (node timeout 2s) under the load of 64
// goroutines of SET, GET and INCRBY on random keys, each call with a 1s
// deadline, for Respire, rueidis and go-redis with their default settings,
// each on a cluster of its own. It prints each client's timeline: when the
// replica was promoted (its ROLE), when the first write on the failed
// shard's slots came back, the last failed call on those slots after the
// promotion (callers still waiting on the dead node fail there), errors,
// and the topology fetches (CLUSTER SLOTS, SHARDS and NODES counted by the
// live nodes) from the fault to the end. A measurement, not a check: set
// RESPIRE_CLUSTERFAULT=1 to run it (RESPIRE_CLUSTERFAULT_CLIENTS, a comma
// list, to run only some of respire, rueidis, goredis).
//
//	cd benchmarks && RESPIRE_CLUSTERFAULT=1 go test -run TestClusterFaultCompare -v -timeout 20m .
func TestClusterFaultCompare(t *testing.T) {
	if os.Getenv("RESPIRE_CLUSTERFAULT") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_CLUSTERFAULT=1 to run it")
	}
	clients := []string{"respire", "rueidis", "goredis"}
	if v := os.Getenv("RESPIRE_CLUSTERFAULT_CLIENTS"); v != "" {
		clients = strings.Split(v, ",")
	}
	var rows []string
	for _, fault := range []string{"kill", "stop"} {
		for _, name := range clients {
			r := runClusterFault(t, name, fault)
			rows = append(rows, fmt.Sprintf("| %s | %s | %v | %v | %v | %d | %d | %d | %d | %s |", fault, name,
				r.promoted, r.firstBack-r.promoted, r.lastErr-r.promoted, r.ok, r.errs, r.clusterErrs, r.fetches, r.kinds()))
		}
	}
	t.Logf("cluster fault, 3+3 Redis 7.0, node timeout 2s, %d goroutines, %v deadlines, the fault at %v (times from the fault; back and last error from the promotion):\n"+
		"| fault | client | promoted | first write back | last error on its slots | calls ok | calls failed | cluster errors passed on | topology fetches | errors |\n"+
		"|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n%s",
		cfWorkers, cfDeadline, cfFaultAfter, strings.Join(rows, "\n"))
}

var debugCF = os.Getenv("RESPIRE_CLUSTERFAULT_DEBUG") != ""

const (
	cfWorkers    = 64
	cfDeadline   = time.Second
	cfFaultAfter = 3 * time.Second
	cfKeys       = 10000
)

type cfClient struct {
	set   func(ctx context.Context, k, v string) error
	get   func(ctx context.Context, k string) (string, error)
	incr  func(ctx context.Context, k string, by int64) (int64, error)
	close func()
}

// op runs the n-th call of a worker on key k, with its own deadline: a SET,
// a GET (a missing key is no error) or an INCRBY, in turn.
func (c cfClient) op(ctx context.Context, k string, n int) (write bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, cfDeadline)
	defer cancel()
	switch n % 3 {
	case 0:
		return true, c.set(ctx, k, "v"+strconv.Itoa(n))
	case 1:
		_, err = c.get(ctx, k)
		if errors.Is(err, redis.Nil) || rueidis.IsRedisNil(err) || errors.Is(err, respire.Nil) {
			err = nil
		}
		return false, err
	}
	_, err = c.incr(ctx, k+":n", 1)
	return true, err
}

func openClusterClient(t *testing.T, name string, seeds []string) cfClient {
	ctx := context.Background()
	switch name {
	case "respire":
		c, err := respire.Connect(ctx, respire.Options{Cluster: &respire.ClusterOptions{Addrs: seeds}})
		if err != nil {
			t.Fatal(err)
		}
		return cfClient{
			func(ctx context.Context, k, v string) error { return c.Set(ctx, k, v, nil) },
			c.Get,
			c.IncrBy,
			func() { c.Close() }}
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: seeds})
		if err != nil {
			t.Fatal(err)
		}
		return cfClient{
			func(ctx context.Context, k, v string) error {
				return c.Do(ctx, c.B().Set().Key(k).Value(v).Build()).Error()
			},
			func(ctx context.Context, k string) (string, error) {
				return c.Do(ctx, c.B().Get().Key(k).Build()).ToString()
			},
			func(ctx context.Context, k string, by int64) (int64, error) {
				return c.Do(ctx, c.B().Incrby().Key(k).Increment(by).Build()).AsInt64()
			},
			c.Close}
	case "goredis":
		c := redis.NewClusterClient(&redis.ClusterOptions{Addrs: seeds})
		return cfClient{
			func(ctx context.Context, k, v string) error { return c.Set(ctx, k, v, 0).Err() },
			func(ctx context.Context, k string) (string, error) { return c.Get(ctx, k).Result() },
			func(ctx context.Context, k string, by int64) (int64, error) { return c.IncrBy(ctx, k, by).Result() },
			func() { c.Close() }}
	}
	t.Fatalf("unknown client %q", name)
	return cfClient{}
}

type cfResult struct {
	promoted, firstBack, lastErr time.Duration
	ok, errs, clusterErrs        int64
	fetches                      int64
	kindsMu                      sync.Mutex
	errKinds                     map[string]int
}

func (r *cfResult) kinds() string {
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

func runClusterFault(t *testing.T, name, fault string) *cfResult {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: harness.Redis70, NodeTimeout: 2 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	victim := hc.Masters()[0]
	replica := hc.ReplicasOf(victim)[0]
	slots := map[int]bool{}
	for s := range harness.SlotCount {
		if hc.MasterOf(s) == victim {
			slots[s] = true
		}
	}
	keys := make([]string, cfKeys)
	onVictim := make([]bool, cfKeys)
	for i := range keys {
		keys[i] = "cf:" + strconv.Itoa(i)
		onVictim[i] = slots[harness.SlotOf(keys[i])]
	}
	c := openClusterClient(t, name, hc.Seeds())
	defer c.close()

	r := &cfResult{errKinds: map[string]int{}}
	start := time.Now()
	var faultAt, promotedAt atomic.Int64 // unix nanos
	var firstBack, lastErr atomic.Int64  // unix nanos
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range cfWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 7))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				i := rng.IntN(cfKeys)
				k := keys[i]
				started := time.Now().UnixNano()
				write, err := c.op(ctx, k, n)
				now := time.Now().UnixNano()
				if err == nil {
					atomic.AddInt64(&r.ok, 1)
					if write && onVictim[i] && promotedAt.Load() != 0 && firstBack.Load() == 0 {
						firstBack.CompareAndSwap(0, now)
					}
					continue
				}
				atomic.AddInt64(&r.errs, 1)
				msg := err.Error()
				if strings.Contains(msg, "CLUSTERDOWN") || strings.Contains(msg, "TRYAGAIN") {
					atomic.AddInt64(&r.clusterErrs, 1)
				}
				if len(msg) > 70 {
					msg = msg[:70]
				}
				r.kindsMu.Lock()
				r.errKinds[msg]++
				r.kindsMu.Unlock()
				if onVictim[i] && promotedAt.Load() != 0 {
					if debugCF && now-promotedAt.Load() > int64(100*time.Millisecond) {
						t.Logf("late error: started %v after the promotion, ended %v after: %v", time.Duration(started-promotedAt.Load()), time.Duration(now-promotedAt.Load()), err)
					}
					for {
						l := lastErr.Load()
						if now <= l || lastErr.CompareAndSwap(l, now) {
							break
						}
					}
				}
			}
		}()
	}
	select {
	case <-time.After(cfFaultAfter):
	case <-ctx.Done():
	}
	before := clusterFetches(ctx, hc, victim)
	faultAt.Store(time.Now().UnixNano())
	if fault == "kill" {
		hc.Kill(victim)
	} else if err := hc.Pause(victim); err != nil {
		t.Fatal(err)
	}
	for promotedAt.Load() == 0 && ctx.Err() == nil {
		v, err := replica.Do(ctx, "ROLE")
		if err == nil && strings.HasPrefix(fmt.Sprint(v), "[master") {
			promotedAt.Store(time.Now().UnixNano())
			break
		}
		time.Sleep(2 * time.Millisecond) // polling the server: there is no event to await
	}
	select {
	case <-time.After(4 * time.Second):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	r.fetches = clusterFetches(ctx, hc, victim) - before
	if fault == "stop" {
		_ = hc.Resume(victim)
	}
	f, p := faultAt.Load(), promotedAt.Load()
	r.promoted = time.Duration(p - f).Round(time.Millisecond)
	if b := firstBack.Load(); b != 0 {
		r.firstBack = time.Duration(b - f).Round(time.Millisecond)
	}
	r.lastErr = r.promoted
	if l := lastErr.Load(); l != 0 {
		r.lastErr = time.Duration(l - f).Round(time.Millisecond)
	}
	t.Logf("%s %s: ran %v; promoted %v after the fault; writes back %v after it; last error on its slots %v after it; ok %d, failed %d, fetches %d",
		fault, name, time.Since(start).Round(time.Millisecond), r.promoted, r.firstBack-r.promoted, r.lastErr-r.promoted, r.ok, r.errs, r.fetches)
	return r
}

// clusterFetches sums the CLUSTER SLOTS, SHARDS and NODES calls the nodes
// but skip have served.
func clusterFetches(ctx context.Context, hc *harness.Cluster, skip *harness.ClusterNode) int64 {
	var n int64
	for _, node := range hc.Nodes {
		if node == skip {
			continue
		}
		v, err := node.Do(ctx, "INFO", "commandstats")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			for _, cmd := range []string{"cmdstat_cluster|slots:", "cmdstat_cluster|shards:", "cmdstat_cluster|nodes:"} {
				if rest, ok := strings.CutPrefix(strings.TrimSpace(line), cmd); ok {
					calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
					c, _ := strconv.ParseInt(calls, 10, 64)
					n += c
				}
			}
		}
	}
	return n
}

// TestClusterMigrateCompare moves 1,024 slots from one primary to another
// and back with atomic slot migration (Valkey 9.1 CLUSTER MIGRATESLOTS,
// Redis 8.6 CLUSTER MIGRATION IMPORT) under the load of
// TestClusterFaultCompare (64 goroutines, random keys, 1s deadlines), on
// a cluster of 3 primaries without replicas per client and flavor, and
// prints each client's calls, errors, the MOVED and ASK the servers
// answered and the topology fetches they served. Set RESPIRE_CLUSTERFAULT=1
// to run it.
//
//	cd benchmarks && RESPIRE_CLUSTERFAULT=1 go test -run TestClusterMigrateCompare -v .
func TestClusterMigrateCompare(t *testing.T) {
	if os.Getenv("RESPIRE_CLUSTERFAULT") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_CLUSTERFAULT=1 to run it")
	}
	clients := []string{"respire", "rueidis", "goredis"}
	if v := os.Getenv("RESPIRE_CLUSTERFAULT_CLIENTS"); v != "" {
		clients = strings.Split(v, ",")
	}
	var rows []string
	for _, f := range []harness.Flavor{harness.Valkey91, harness.Redis86} {
		for _, name := range clients {
			rows = append(rows, runClusterMigrate(t, f, name))
		}
	}
	t.Logf("atomic migration of 1,024 slots there and back, 3 primaries, %d goroutines, %v deadlines:\n"+
		"| server | client | migration time | calls ok | calls failed | MOVED | ASK | topology fetches | errors |\n"+
		"|---|---|--:|--:|--:|--:|--:|--:|---|\n%s", cfWorkers, cfDeadline, strings.Join(rows, "\n"))
}

func runClusterMigrate(t *testing.T, f harness.Flavor, name string) string {
	hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: f, Replicas: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ms := hc.Masters()
	from, to := ms[0], ms[1]
	var slots []int
	for s := range harness.SlotCount {
		if len(slots) < 1024 && hc.MasterOf(s) == from {
			slots = append(slots, s)
		}
	}
	keys := make([]string, cfKeys)
	for i := range keys {
		keys[i] = "cm:" + strconv.Itoa(i)
	}
	c := openClusterClient(t, name, hc.Seeds())
	defer c.close()
	var ok, failed atomic.Int64
	var mu sync.Mutex
	kinds := map[string]int{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range cfWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 11))
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				k := keys[rng.IntN(cfKeys)]
				_, err := c.op(ctx, k, n)
				if err == nil {
					ok.Add(1)
					continue
				}
				failed.Add(1)
				msg := err.Error()
				if len(msg) > 70 {
					msg = msg[:70]
				}
				mu.Lock()
				kinds[msg]++
				mu.Unlock()
			}
		}()
	}
	select {
	case <-time.After(2 * time.Second):
	case <-ctx.Done():
	}
	beforeFetches := clusterFetches(ctx, hc, nil)
	beforeMoved, beforeAsk := clusterRedirects(ctx, hc)
	start := time.Now()
	if err := hc.MigrateSlotsAtomic(ctx, from, to, slots); err != nil {
		t.Error(err)
	}
	if err := hc.MigrateSlotsAtomic(ctx, to, from, slots); err != nil {
		t.Error(err)
	}
	took := time.Since(start)
	select {
	case <-time.After(time.Second):
	case <-ctx.Done():
	}
	close(stop)
	wg.Wait()
	fetches := clusterFetches(ctx, hc, nil) - beforeFetches
	moved, ask := clusterRedirects(ctx, hc)
	r := &cfResult{errKinds: kinds}
	row := fmt.Sprintf("| %s | %s | %v | %d | %d | %d | %d | %d | %s |", f, name, took.Round(time.Millisecond),
		ok.Load(), failed.Load(), moved-beforeMoved, ask-beforeAsk, fetches, r.kinds())
	t.Log(row)
	return row
}

// clusterRedirects sums the MOVED and ASK error replies the nodes served
// (INFO errorstats).
func clusterRedirects(ctx context.Context, hc *harness.Cluster) (moved, ask int64) {
	for _, node := range hc.Nodes {
		v, err := node.Do(ctx, "INFO", "errorstats")
		if err != nil {
			continue
		}
		for _, line := range strings.Split(fmt.Sprint(v), "\n") {
			line = strings.TrimSpace(line)
			for prefix, sum := range map[string]*int64{"errorstat_MOVED:count=": &moved, "errorstat_ASK:count=": &ask} {
				if rest, ok := strings.CutPrefix(line, prefix); ok {
					n, _ := strconv.ParseInt(rest, 10, 64)
					*sum += n
				}
			}
		}
	}
	return moved, ask
}
