package goredissuite

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// goRedisVersion is the go-redis whose suite runs: the adapter's.
const goRedisVersion = "v9.23.0"

// goRedisFiles are the suites run: commands, pub/sub, transactions.
var goRedisFiles = []string{"commands_test.go", "pubsub_test.go", "tx_test.go"}

// goRedisSkip are specs skipped on both clients: they need Redis modules
// (RediSearch, RedisJSON...), which the harness's servers do not load.
const goRedisSkip = `Modules|FT DIALECT`

// byDesign are the specs that pass on go-redis and fail through the
// adapter because the adapter refuses what they do, with the reason.
// Any other spec that passes on go-redis must pass through the adapter.
var byDesign = map[string]string{
	"Commands server should Auth":                            sharedConn + " (AUTH; Respire's error names Options.Username and Options.Password instead of the server's ERR AUTH)",
	"Commands server should hello":                           sharedConn + " (HELLO; Options.Protocol)",
	"Commands server should Select":                          sharedConn + " (SELECT in a pipeline; Options.DB or rdb.Conn())",
	"Commands keys should Move":                              sharedConn + " (SELECT in a pipeline; Options.DB or rdb.Conn())",
	"Commands server should ClientSetName and ClientGetName": sharedConn + " (CLIENT SETNAME in a pipeline; Options.ClientName or rdb.Conn())",
	"Commands server should ClientSetInfo":                   sharedConn + " (CLIENT SETINFO; the handshake sets it)",
	"PubSub should ClientSetName on PubSub connection":       "CLIENT SETNAME on a PubSub: the subscriptions share Respire's one subscriber connection, which the adapter's PubSub does not run commands on",
	"PubSub should support pattern matching":                 poolMisses,
	"PubSub should pub/sub":                                  poolMisses,
	"PubSub should sharded pub/sub":                          poolMisses,
	"Commands lists should BLPop timeout":                    poolMisses,
	"Commands lists should BLMPop timeout":                   poolMisses,
	"Commands sorted sets should BZPopMax timeout":           poolMisses,
	"Commands sorted sets should BZPopMin timeout":           poolMisses,
	"Commands sorted sets should BZMPop timeout":             poolMisses,
	"Commands server should Wait":                            ownWrites,
	"Commands server should WaitAOF":                         ownWrites,
	"Commands streams group should XGroupCreateMkStream":     "compares the error with go-redis's internal proto.RedisError value (==); the adapter's error reply is a *goredis.Error with the same message, which only go-redis's own package could tell apart",
}

const (
	sharedConn = "refused: changes the state of the connection every caller shares, an *respire.ArgError"
	ownWrites  = "refused: WAIT and WAITAOF count the acknowledgements of their own connection's writes, and sent by themselves they would run on a connection without the caller's, an *respire.ArgError (a Pipeline with the writes, or rdb.Conn())"
	poolMisses = "asserts go-redis's pool counters (PoolStats().Misses == 1, a connection dialled); the adapter dials none and reports 0"
)

// goRedisFails are the specs that fail on go-redis too, by protocol (0:
// both), with the reason: the baseline of a run through the adapter alone.
var goRedisFails = map[string]int{
	"Commands server should ConfigRewrite":             0, // the harness's server runs without a config file
	"PubSub should ClientSetName on PubSub connection": 2, // go-redis sends CLIENT SETNAME on a RESP2 subscriber connection
}

// TestGoRedisSuite runs go-redis's own command, pub/sub and transaction
// suites on go-redis and through the adapter, RESP2 and RESP3, each run on
// a server of its own.
func TestGoRedisSuite(t *testing.T) {
	clients := suiteClients(t)
	t.Parallel()
	built := building()
	defer built() // also when a step before the runs fails
	dir := copyModule(t, "go-redis", "github.com/redis/go-redis/v9", goRedisVersion)
	require.NoError(t, copyRedirect(dir, map[string]string{
		"goredis_test.go.txt": "zz_respire_test.go",
		"gored_test.go.txt":   "zz_respire_goredis_test.go",
		"adapter_test.go.txt": "zz_respire_adapter_test.go",
	}))
	// The redirection: the suite's clients are made by newTestClient and
	// held as *testClient (the redirect files say what they are).
	require.NoError(t, edit(filepath.Join(dir, "commands_test.go"),
		"redis.NewClient(", "newTestClient(",
		"var rawClient *redis.Client", "var rawClient *testClient",
		"newUniversalSubject(rawClient)", "newTestSubject(rawClient)",
		"skipIfClientTrackingUnavailable(ctx, rawClient)", "skipIfTrackingUnavailable(ctx, rawClient)"))
	for _, f := range []string{"pubsub_test.go", "tx_test.go"} {
		require.NoError(t, edit(filepath.Join(dir, f),
			"redis.NewClient(", "newTestClient(",
			"var client *redis.Client", "var client *testClient"))
	}
	require.NoError(t, useAdapter(dir))

	bins := map[string]string{"go-redis": filepath.Join(dir, "goredis.test"), "adapter": filepath.Join(dir, "adapter.test")}
	for _, client := range clients {
		require.NoError(t, buildFor(client, dir, bins[client]))
	}

	focus := `/(` + strings.Join(goRedisFiles, "|") + `)$`
	focus = strings.ReplaceAll(focus, ".", `\.`)
	built()
	var mu sync.Mutex
	results := map[string]result{}
	t.Run("runs", func(t *testing.T) {
		for _, proto := range []int{2, 3} {
			for _, client := range clients {
				name := fmt.Sprintf("%s/resp%d", client, proto)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					srv := harness.Start(t, harness.Config{Flavor: harness.Redis86, Args: []string{"enable-debug-command yes", "enable-module-command yes"}})
					cmd := exec.Command(bins[client], "-test.run", "^TestGinkgoSuite$",
						"-ginkgo.focus-file", focus, "-ginkgo.skip", goRedisSkip, "-ginkgo.no-color",
						"-ginkgo.flake-attempts", "2") // some specs wait on timers, which a loaded machine can miss
					cmd.Dir = dir
					cmd.Env = append(os.Environ(),
						"RESPIRE_SUITE_ADDR="+srv.Addr,
						fmt.Sprintf("RESPIRE_SUITE_PROTO=%d", proto),
						"RE_CLUSTER=true", // no ring, sentinel or cluster servers at go-redis's fixed ports
						"REDIS_VERSION=8.6")
					out, _ := cmd.CombinedOutput()
					r, err := parseGinkgo(out)
					if err != nil {
						t.Fatalf("%v:\n%s", err, tail(out, 4000))
					}
					t.Logf("%s: %s", name, r)
					mu.Lock()
					results[name] = r
					mu.Unlock()
				})
			}
		}
	})
	for _, proto := range []int{2, 3} {
		got, ok := results[fmt.Sprintf("adapter/resp%d", proto)]
		if !ok {
			continue
		}
		baseFail := map[string]bool{}
		if base, ok := results[fmt.Sprintf("go-redis/resp%d", proto)]; ok {
			for _, f := range base.failures {
				baseFail[f] = true
				if p, ok := goRedisFails[f]; !ok || p != 0 && p != proto {
					t.Logf("resp%d: fails on go-redis, not listed in goRedisFails: %s", proto, f)
				}
			}
		} else {
			for f, p := range goRedisFails {
				if p == 0 || p == proto {
					baseFail[f] = true
				}
			}
		}
		for f := range baseFail {
			t.Logf("resp%d: fails on go-redis too: %s", proto, f)
		}
		for _, f := range got.failures {
			switch why, ok := byDesign[f]; {
			case baseFail[f]:
			case ok:
				t.Logf("resp%d: refused by design: %s (%s)", proto, f, why)
			default:
				t.Errorf("resp%d: passes on go-redis, fails through the adapter: %s", proto, f)
			}
		}
	}
}

// tail is the end of out, for a failure message.
func tail(out []byte, n int) []byte {
	if len(out) > n {
		return out[len(out)-n:]
	}
	return out
}
