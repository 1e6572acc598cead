package goredissuite

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// asynqVersion is the asynq (github.com/hibiken/asynq, a job queue on
// go-redis: sorted sets, lists, Lua scripts, pub/sub for cancellations)
// whose tests run.
const asynqVersion = "v0.26.0"

// asynqByDesign are asynq's tests that pass on go-redis and fail through
// the adapter for a reason outside the adapter's behaviour.
var asynqByDesign = map[string]string{
	"TestServerFromRedisClient": "leaves the client it made open (asynq closes only the clients it made) and checks for leaked goroutines ignoring go-redis's pool reaper, the goroutine such a go-redis client leaves; the adapter's open client has Respire's",
}

// TestAsynqSuite runs asynq's own tests of its Redis layer (internal/rdb)
// and of its public API (clients, servers, schedulers, inspectors: the
// root package) on go-redis and through the adapter, each run on a server
// of its own. asynq's tests take the server's address from their
// -redis_addr flag.
func TestAsynqSuite(t *testing.T) {
	clients := suiteClients(t)
	t.Parallel()
	built := building()
	defer built() // also when a step before the runs fails
	dir := copyModule(t, "asynq", "github.com/hibiken/asynq", asynqVersion)
	rdb := filepath.Join(dir, "internal", "rdb")
	for pkg, pdir := range map[string]string{"rdb": rdb, "asynq": dir} {
		for from, to := range map[string]string{"goredis_test.go.txt": "zz_respire_goredis_test.go", "adapter_test.go.txt": "zz_respire_adapter_test.go"} {
			b, err := os.ReadFile(filepath.Join("redirect", "asynq", from))
			require.NoError(t, err)
			b = []byte(strings.Replace(string(b), "package PACKAGE", "package "+pkg, 1))
			require.NoError(t, os.WriteFile(filepath.Join(pdir, to), b, 0o644))
		}
	}
	require.NoError(t, copyRedirect(dir, map[string]string{
		"asynq/connopt_goredis_test.go.txt": "zz_respire_connopt_goredis_test.go",
		"asynq/connopt_adapter_test.go.txt": "zz_respire_connopt_adapter_test.go",
	}))
	// The redirection: setup's client is made by newTestClient, and
	// getRedisConnOpt's options pass through testConnOpt.
	require.NoError(t, edit(filepath.Join(rdb, "rdb_test.go"),
		"NewRDB(redis.NewClient(&redis.Options{", "NewRDB(newTestClient(tb, &redis.Options{"))
	require.NoError(t, edit(filepath.Join(dir, "asynq_test.go"),
		"r = redis.NewClient(&redis.Options{", "r = newTestClient(tb, &redis.Options{",
		"return RedisClientOpt{\n\t\tAddr: redisAddr,\n\t\tDB:   redisDB,\n\t}", "return testConnOpt(tb, RedisClientOpt{\n\t\tAddr: redisAddr,\n\t\tDB:   redisDB,\n\t})"))
	// asynq's FlushDB helper type-switches on *redis.Client and
	// *redis.ClusterClient and does nothing for any other client: the
	// adapter (a *goredis.Client) gets a branch of its own.
	require.NoError(t, edit(filepath.Join(dir, "internal", "testutil", "testutil.go"),
		"\tcase *redis.ClusterClient:\n", "\tdefault: // Respire's redirection: a client of another type (the adapter)\n"+
			"\t\tif err := r.FlushDB(context.Background()).Err(); err != nil {\n\t\t\ttb.Fatal(err)\n\t\t}\n"+
			"\tcase *redis.ClusterClient:\n"))
	require.NoError(t, useAdapter(dir))

	type run struct{ client, pkg string }
	var runs []run
	for _, client := range clients {
		for pkg, pdir := range map[string]string{"rdb": rdb, "asynq": dir} {
			require.NoError(t, buildFor(client, pdir, filepath.Join(dir, client+"-"+pkg+".test")))
			runs = append(runs, run{client, pkg})
		}
	}
	built()
	var mu sync.Mutex
	fails := map[string]map[string]bool{}
	t.Run("runs", func(t *testing.T) {
		for _, r := range runs {
			t.Run(r.client+"/"+r.pkg, func(t *testing.T) {
				t.Parallel() // each on a server of its own; asynq's tests mostly wait
				srv := harness.Start(t, harness.Config{Flavor: harness.Redis86})
				pdir := dir
				if r.pkg == "rdb" {
					pdir = rdb
				}
				res, out := runGoTest(filepath.Join(dir, r.client+"-"+r.pkg+".test"), pdir, nil, "-test.timeout", "10m", "-redis_addr", srv.Addr)
				t.Logf("asynq %s on %s: %s", r.pkg, r.client, res)
				if res.passed+res.failed == 0 {
					t.Fatalf("no test ran:\n%s", tail(out, 4000))
				}
				mu.Lock()
				fails[r.client+"/"+r.pkg] = res.failedSet()
				mu.Unlock()
			})
		}
	})
	for _, pkg := range []string{"rdb", "asynq"} {
		got, ok := fails["adapter/"+pkg]
		if !ok {
			continue
		}
		base, ok := fails["go-redis/"+pkg]
		if !ok {
			base = map[string]bool{} // asynq's tests all pass on go-redis
		}
		for name := range got {
			if why, ok := asynqByDesign[name]; ok && !base[name] {
				t.Logf("asynq %s: fails through the adapter by design: %s (%s)", pkg, name, why)
				continue
			}
			if !base[name] {
				t.Errorf("asynq %s: passes on go-redis, fails through the adapter: %s", pkg, name)
			}
		}
	}
}
