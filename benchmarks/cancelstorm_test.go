package benchmarks

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
	"github.com/respire-go/respire/benchmarks/internal/server"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/cancelstorm"
	"github.com/respire-go/respire/tests/harness"
)

// TestCancelStormCompare runs the cancellation storm of
// tests/cancelstorm (issue 31: 64 goroutines, GET, SET of 1 KiB and
// 128 KiB, INCR, MGET, batches of ten, MULTI/EXEC, RPUSH and BLPOP, each
// call's context cancelled or timed out at a random 0-2 ms, one in five
// left alone) against Respire, go-redis and rueidis with their default
// options, on one server and on a 3-primary cluster (both of the
// benchmarks' flavor, RESPIRE_BENCH_FLAVOR, Redis 8.0 by default), and
// prints a table:
// calls, calls ok, calls that failed while their own context was live,
// errors of ended contexts that do not match errors.Is(err, ctx.Err()),
// wrong results (late writes: a write of unknown outcome that ran after a
// later acknowledged one), calls that never returned (stuck), the longest
// a call took to return after its context ended, and the most frequent
// error kinds. A
// measurement, not a check: set RESPIRE_CANCELSTORM=1 to run it,
// RESPIRE_CANCELSTORM_DURATION (a Go duration, default 10s) for how long
// each client runs on each setup, RESPIRE_CANCELSTORM_CLIENTS (a comma
// list of respire, goredis, rueidis) and RESPIRE_CANCELSTORM_SETUPS
// (single, cluster) to run only some.
//
//	cd benchmarks && RESPIRE_CANCELSTORM=1 go test -run TestCancelStormCompare -v .
func TestCancelStormCompare(t *testing.T) {
	if os.Getenv("RESPIRE_CANCELSTORM") == "" {
		t.Skip("a measurement beside the peers: set RESPIRE_CANCELSTORM=1 to run it")
	}
	dur := 10 * time.Second
	if v := os.Getenv("RESPIRE_CANCELSTORM_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("RESPIRE_CANCELSTORM_DURATION: %v", err)
		}
		dur = d
	}
	names := []string{"respire", "goredis", "rueidis"}
	if v := os.Getenv("RESPIRE_CANCELSTORM_CLIENTS"); v != "" {
		names = strings.Split(v, ",")
	}
	setups := []string{"single", "cluster"}
	if v := os.Getenv("RESPIRE_CANCELSTORM_SETUPS"); v != "" {
		setups = strings.Split(v, ",")
	}
	var rows []string
	for _, setup := range setups {
		var addrs []string
		switch setup {
		case "single":
			addrs = []string{benchServer(t).Addr}
		case "cluster":
			hc := harness.StartCluster(t, harness.ClusterConfig{Flavor: server.FlavorFromEnv(), Replicas: -1})
			addrs = hc.Seeds()
		default:
			t.Fatalf("unknown setup %q (single, cluster)", setup)
		}
		for _, name := range names {
			c, closeFn := stormClient(t, name, setup == "cluster", addrs)
			ctx, cancel := context.WithTimeout(context.Background(), dur+2*time.Minute)
			r, err := cancelstorm.Run(ctx, c, cancelstorm.Config{
				Workers: stormWorkers, Duration: dur, Prefix: fmt.Sprintf("cstorm:%s:", name),
			})
			cancel()
			switch {
			case errors.Is(err, cancelstorm.ErrStuck):
				// Leave the client open: its stuck calls hold it.
				t.Errorf("%s on %s: %v\n%s", name, setup, err, r.StuckReport)
			case err != nil:
				closeFn()
				t.Fatalf("%s on %s: %v", name, setup, err)
			default:
				closeFn()
			}
			t.Logf("%s on %s: %s\n%s%s", name, setup, r.Summary(), r.PerOp(), r.WrongReport())
			t.Logf("%s on %s, calls that failed with their context live:\n%s\nerrors of ended contexts not matching errors.Is(err, ctx.Err()):\n%s",
				name, setup, strings.Join(cancelstorm.Top(r.LiveErrs, 10), "\n"), strings.Join(cancelstorm.Top(r.MismatchErrs, 10), "\n"))
			var late time.Duration
			for _, d := range r.MaxLate {
				late = max(late, d)
			}
			rows = append(rows, fmt.Sprintf("| %s | %s | %d | %d | %d | %d | %d | %d | %d | %v | %s |", name, setup,
				cancelstorm.Total(r.Calls), cancelstorm.Total(r.OK), cancelstorm.Total(r.Live), cancelstorm.Total(r.Mismatch),
				r.NWrong[cancelstorm.LateWrite], r.WrongTotal()-r.NWrong[cancelstorm.LateWrite], r.Stuck,
				late.Round(100*time.Microsecond), stormKinds(r)))
		}
	}
	t.Logf("cancellation storm, %d goroutines, contexts ending at a random 0-2 ms (one call in five left alone), %v per client and setup:\n"+
		"| client | setup | calls | ok | failed, context live | ended-context errors not matching errors.Is | late writes | other wrong results | stuck calls | latest return after the context ended | most frequent errors (live / not matching) |\n"+
		"|---|---|--:|--:|--:|--:|--:|--:|--:|--:|---|\n%s", stormWorkers, dur, strings.Join(rows, "\n"))
}

// stormWorkers is the storm's goroutines, as in the measurement.
const stormWorkers = 64

// stormKinds is the two most frequent error kinds of calls that failed
// with their context live, then of ended-context errors not matching it.
func stormKinds(r *cancelstorm.Result) string {
	short := func(m map[string]int) string {
		var out []string
		for _, l := range cancelstorm.Top(m, 2) {
			if n, kind, ok := strings.Cut(strings.TrimSpace(l), "  "); ok {
				out = append(out, n+"× "+strings.ReplaceAll(kind, "respire: ", ""))
			}
		}
		if len(out) == 0 {
			return "-"
		}
		return strings.Join(out, "; ")
	}
	return strings.ReplaceAll(short(r.LiveErrs)+" / "+short(r.MismatchErrs), "|", "\\|")
}

// stormClient connects client name, with its default options, to the
// server at addrs[0] or to the cluster whose nodes are addrs.
func stormClient(t *testing.T, name string, cluster bool, addrs []string) (cancelstorm.Client, func()) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch name {
	case "respire":
		opts := respire.Options{Addr: addrs[0]}
		if cluster {
			opts = respire.Options{Cluster: &respire.ClusterOptions{Addrs: addrs}}
		}
		c, err := respire.Connect(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		return cancelstorm.Respire(c), func() { c.Close() }
	case "goredis":
		var c redis.UniversalClient
		if cluster {
			c = redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
		} else {
			c = redis.NewClient(&redis.Options{Addr: addrs[0]})
		}
		if err := c.Ping(ctx).Err(); err != nil {
			t.Fatal(err)
		}
		return goRedisStorm{c}, func() { c.Close() }
	case "rueidis":
		c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: addrs})
		if err != nil {
			t.Fatal(err)
		}
		return rueidisStorm{c}, c.Close
	}
	t.Fatalf("unknown client %q (respire, goredis, rueidis)", name)
	return nil, nil
}

// goRedisStorm is go-redis (Client or ClusterClient) behind
// cancelstorm.Client: pipelines for batches, TxPipeline for MULTI/EXEC.
type goRedisStorm struct{ c redis.UniversalClient }

func (g goRedisStorm) Get(ctx context.Context, key string) (string, error) {
	return g.c.Get(ctx, key).Result()
}

func (g goRedisStorm) Set(ctx context.Context, key, value string) error {
	return g.c.Set(ctx, key, value, 0).Err()
}

func (g goRedisStorm) Incr(ctx context.Context, key string) (int64, error) {
	return g.c.Incr(ctx, key).Result()
}

func (g goRedisStorm) MGet(ctx context.Context, keys []string) ([]string, error) {
	vs, err := g.c.MGet(ctx, keys...).Result()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v.(string)
	}
	return out, nil
}

// goRedisRun queues cmds on p, runs it and copies the results back.
func goRedisRun(ctx context.Context, p redis.Pipeliner, cmds []cancelstorm.Cmd) error {
	queued := make([]redis.Cmder, len(cmds))
	for i, x := range cmds {
		switch x.Kind {
		case cancelstorm.CmdSet:
			queued[i] = p.Set(ctx, x.Key, x.Value, 0)
		case cancelstorm.CmdIncr:
			queued[i] = p.Incr(ctx, x.Key)
		case cancelstorm.CmdGet:
			queued[i] = p.Get(ctx, x.Key)
		}
	}
	_, err := p.Exec(ctx)
	for i := range cmds {
		x := &cmds[i]
		x.Err = queued[i].Err()
		switch q := queued[i].(type) {
		case *redis.IntCmd:
			x.Int = q.Val()
		case *redis.StringCmd:
			x.Str = q.Val()
		}
	}
	return err
}

func (g goRedisStorm) Batch(ctx context.Context, cmds []cancelstorm.Cmd) error {
	return goRedisRun(ctx, g.c.Pipeline(), cmds)
}

func (g goRedisStorm) Tx(ctx context.Context, cmds []cancelstorm.Cmd) error {
	return goRedisRun(ctx, g.c.TxPipeline(), cmds)
}

func (g goRedisStorm) RPush(ctx context.Context, list, value string) error {
	return g.c.RPush(ctx, list, value).Err()
}

// BLPop sends BLPOP through Do: go-redis's BLPop rounds a timeout under a
// second up to one second (and logs it).
func (g goRedisStorm) BLPop(ctx context.Context, list string, timeout time.Duration) (string, string, error) {
	kv, err := g.c.Do(ctx, "BLPOP", list, strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)).StringSlice()
	return blpopReply(kv, errors.Is(err, redis.Nil), err)
}

// blpopReply turns BLPOP's reply, kv, into BLPop's results; nilReply says
// the server's timeout passed.
func blpopReply(kv []string, nilReply bool, err error) (string, string, error) {
	switch {
	case nilReply:
		return "", "", nil
	case err != nil:
		return "", "", err
	case len(kv) != 2:
		return "", "", fmt.Errorf("BLPOP: %d elements", len(kv))
	}
	return kv[0], kv[1], nil
}

func (goRedisStorm) NotSent(error) bool { return false }

func (goRedisStorm) IsNil(err error) bool { return errors.Is(err, redis.Nil) }

// rueidisStorm is rueidis behind cancelstorm.Client: DoMulti for batches,
// DoMulti between MULTI and EXEC for transactions.
type rueidisStorm struct{ c rueidis.Client }

func (r rueidisStorm) Get(ctx context.Context, key string) (string, error) {
	return r.c.Do(ctx, r.c.B().Get().Key(key).Build()).ToString()
}

func (r rueidisStorm) Set(ctx context.Context, key, value string) error {
	return r.c.Do(ctx, r.c.B().Set().Key(key).Value(value).Build()).Error()
}

func (r rueidisStorm) Incr(ctx context.Context, key string) (int64, error) {
	return r.c.Do(ctx, r.c.B().Incr().Key(key).Build()).AsInt64()
}

func (r rueidisStorm) MGet(ctx context.Context, keys []string) ([]string, error) {
	vs, err := r.c.Do(ctx, r.c.B().Mget().Key(keys...).Build()).ToArray()
	if err != nil {
		return nil, err
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i], _ = v.ToString() // "" for a nil
	}
	return out, nil
}

func (r rueidisStorm) build(cmds []cancelstorm.Cmd) rueidis.Commands {
	out := make(rueidis.Commands, len(cmds))
	for i, x := range cmds {
		switch x.Kind {
		case cancelstorm.CmdSet:
			out[i] = r.c.B().Set().Key(x.Key).Value(x.Value).Build()
		case cancelstorm.CmdIncr:
			out[i] = r.c.B().Incr().Key(x.Key).Build()
		case cancelstorm.CmdGet:
			out[i] = r.c.B().Get().Key(x.Key).Build()
		}
	}
	return out
}

// rueidisSettle copies one reply into x.
func rueidisSettle(x *cancelstorm.Cmd, m rueidis.RedisMessage, err error) {
	if err != nil {
		x.Err = err
		return
	}
	switch x.Kind {
	case cancelstorm.CmdSet:
		x.Err = m.Error()
	case cancelstorm.CmdIncr:
		x.Int, x.Err = m.AsInt64()
	case cancelstorm.CmdGet:
		x.Str, x.Err = m.ToString()
	}
}

func (r rueidisStorm) Batch(ctx context.Context, cmds []cancelstorm.Cmd) error {
	var first error
	for i, res := range r.c.DoMulti(ctx, r.build(cmds)...) {
		m, err := res.ToMessage()
		rueidisSettle(&cmds[i], m, err)
		if first == nil && cmds[i].Err != nil {
			first = cmds[i].Err
		}
	}
	return first
}

func (r rueidisStorm) Tx(ctx context.Context, cmds []cancelstorm.Cmd) error {
	all := append(rueidis.Commands{r.c.B().Multi().Build()}, r.build(cmds)...)
	all = append(all, r.c.B().Exec().Build())
	res := r.c.DoMulti(ctx, all...)
	for _, q := range res[:len(res)-1] {
		if err := q.Error(); err != nil {
			return err
		}
	}
	replies, err := res[len(res)-1].ToArray()
	if err != nil {
		return err
	}
	if len(replies) != len(cmds) {
		return fmt.Errorf("EXEC: %d replies for %d commands", len(replies), len(cmds))
	}
	for i, m := range replies {
		rueidisSettle(&cmds[i], m, nil)
	}
	return nil
}

func (r rueidisStorm) RPush(ctx context.Context, list, value string) error {
	return r.c.Do(ctx, r.c.B().Rpush().Key(list).Element(value).Build()).Error()
}

func (r rueidisStorm) BLPop(ctx context.Context, list string, timeout time.Duration) (string, string, error) {
	kv, err := r.c.Do(ctx, r.c.B().Blpop().Key(list).Timeout(timeout.Seconds()).Build()).AsStrSlice()
	return blpopReply(kv, rueidis.IsRedisNil(err), err)
}

func (rueidisStorm) NotSent(error) bool { return false }

func (rueidisStorm) IsNil(err error) bool { return rueidis.IsRedisNil(err) }
