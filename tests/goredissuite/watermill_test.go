package goredissuite

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// watermillVersion is the watermill-redisstream
// (github.com/ThreeDotsLabs/watermill-redisstream, watermill's Pub/Sub on
// Redis streams: XADD, XREADGROUP with BLOCK, XPENDING, XCLAIM, XAUTOCLAIM,
// XGROUP, consumer groups and fan-out) whose tests run.
const watermillVersion = "v1.4.5"

// watermillByDesign are watermill-redisstream's tests that pass on go-redis
// and fail through the adapter for a reason outside the adapter's
// behaviour (a parent test of one of them fails with it).
var watermillByDesign = map[string]string{
	"TestSubscriber_Read/With_DisableIndefiniteInitialBlock/should_have_blocked_client": "cancels the context of an XREADGROUP BLOCK 0 and expects the server to still list the connection as blocked (CLIENT LIST flags=b) 120 ms later, as go-redis leaves it; Respire discards a blocking command's connection when its context ends, so the server unblocks it at once",
}

// byDesignOrParent is why name (a failing test) is excused: its entry in
// byDesign, or that of a subtest of it that failed too.
func byDesignOrParent(byDesign map[string]string, failed map[string]bool, name string) (string, bool) {
	if why, ok := byDesign[name]; ok {
		return why, true
	}
	for sub, why := range byDesign {
		if failed[sub] && strings.HasPrefix(sub, name+"/") {
			return why, true
		}
	}
	return "", false
}

// TestWatermillSuite runs watermill-redisstream's own tests (its package
// tests and watermill's generic Pub/Sub conformance tests it calls) on
// go-redis and through the adapter, each run on a server of its own.
func TestWatermillSuite(t *testing.T) {
	clients := suiteClients(t)
	t.Parallel()
	built := building()
	defer built() // also when a step before the runs fails
	dir := copyModule(t, "watermill-redisstream", "github.com/ThreeDotsLabs/watermill-redisstream", watermillVersion)
	pkg := filepath.Join(dir, "pkg", "redisstream")
	require.NoError(t, copyRedirect(pkg, map[string]string{
		"watermill/addr_test.go.txt":    "zz_respire_addr_test.go",
		"watermill/goredis_test.go.txt": "zz_respire_goredis_test.go",
		"watermill/adapter_test.go.txt": "zz_respire_adapter_test.go",
	}))
	// The redirection: the tests' one constructor, at a fixed address.
	require.NoError(t, edit(filepath.Join(pkg, "pubsub_test.go"),
		"client := redis.NewClient(&redis.Options{\n\t\tAddr:        \"127.0.0.1:6379\",",
		"client := newTestClient(&redis.Options{\n\t\tAddr:        suiteAddr(),"))
	require.NoError(t, useAdapter(dir))

	for _, client := range clients {
		require.NoError(t, buildFor(client, pkg, filepath.Join(dir, client+".test")))
	}
	built()
	var mu sync.Mutex
	fails := map[string]map[string]bool{}
	outs := map[string][]byte{}
	t.Run("runs", func(t *testing.T) {
		for _, client := range clients {
			t.Run(client, func(t *testing.T) {
				t.Parallel()
				srv := harness.Start(t, harness.Config{Flavor: harness.Redis86})
				res, out := runGoTest(filepath.Join(dir, client+".test"), pkg, []string{"RESPIRE_SUITE_ADDR=" + srv.Addr}, "-test.timeout", "10m")
				t.Logf("watermill-redisstream on %s: %s", client, res)
				if res.passed+res.failed == 0 {
					t.Fatalf("no test ran:\n%s", tail(out, 4000))
				}
				mu.Lock()
				fails[client] = res.failedSet()
				outs[client] = out
				mu.Unlock()
			})
		}
	})
	got := fails["adapter"]
	base, ok := fails["go-redis"]
	if !ok {
		base = map[string]bool{} // its tests all pass on go-redis
	}
	for name := range got {
		if why, ok := byDesignOrParent(watermillByDesign, got, name); ok && !base[name] {
			t.Logf("watermill-redisstream: fails through the adapter by design: %s (%s)", name, why)
			continue
		}
		if !base[name] {
			t.Errorf("watermill-redisstream: passes on go-redis, fails through the adapter: %s", name)
		}
	}
	if t.Failed() {
		t.Logf("the adapter's run, its end:\n%s", tail(outs["adapter"], 8000))
	}
}
