// Package conformance calls every generated command method against every
// server of the spec that has it, under RESP2 and RESP3, and checks its
// typed result; on servers that lack a command it checks the
// *respire.UnsupportedError. Each case lists the spec commands it covers;
// the framework confirms from the server's INFO commandstats that each one
// really ran during the case. At the end it prints one line:
//
//	commands: spec=N generated=M exercised=K excluded=E
//
// (t.Log: visible with -v) and fails unless N = M + E and K = M.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/respire-go/respire/gen"
	"github.com/respire-go/respire/gen/spec"
	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

// Case exercises one or more commands.
type Case struct {
	// Name names the subtest; default: the first command.
	Name string
	// Commands are the spec names this case covers ("GET", "CLIENT KILL").
	// Every one must run on the server during Run (checked with INFO
	// commandstats), successfully or with an error the case asserts.
	Commands []string
	// Run calls the methods and checks their typed results.
	Run func(e *Env)
	// Probe calls the method of the case's first command once and returns
	// its error; it runs on servers that lack one of Commands, where the
	// error must be a *respire.UnsupportedError naming the command.
	Probe func(e *Env) error
	// Server picks a special server: "" the shared standalone one, "own"
	// a fresh standalone server for this case alone (for destructive
	// commands), "cluster" a one-node cluster-mode server.
	Server string
	// Config adds directives for an "own" server.
	Config harness.Config
}

var cases []Case

// register adds cases; call it from init functions.
func register(cs ...Case) { cases = append(cases, cs...) }

// Env is what a case runs with.
type Env struct {
	*testing.T
	Ctx    context.Context
	C      *respire.Client
	Flavor harness.Flavor
	Proto  int
	Srv    *harness.Server
	prefix string
}

// Key returns a key unique to this case, flavor and protocol. All keys of
// one Env share a hash tag, so multi-key commands work in cluster mode.
func (e *Env) Key(name string) string { return e.prefix + name }

// Do runs a raw command for set-up and requires it to succeed.
func (e *Env) Do(args ...any) respire.Reply {
	e.Helper()
	r, err := e.C.Do(e.Ctx, args...)
	if err != nil && !errors.Is(err, respire.Nil) {
		e.Fatalf("set-up %v: %v", args, err)
	}
	return r
}

// ServerError asserts err is a server error with the given prefix, which
// names the command it answers.
func (e *Env) ServerError(err error, prefix string) {
	e.Helper()
	var se *respire.Error
	require.ErrorAs(e, err, &se)
	require.Equal(e, prefix, se.Prefix, se.Message)
	require.NotEmpty(e, se.Command, "%v", err)
	require.Contains(e, err.Error(), se.Command+": "+se.Message)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// partialAllowed (RESPIRE_CONFORMANCE_PARTIAL=1) lets a run pass while
// some generated commands have no case yet, listing them; for working on
// cases. By default every generated command must be exercised.
var partialAllowed = os.Getenv("RESPIRE_CONFORMANCE_PARTIAL") != ""

func repoFile(t *testing.T, rel string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", rel)
}

// specServerOf finds the spec server a flavor runs: "redis-8.6" runs
// "redis-8.6.3". Every flavor must have one, and each its own.
func specServerOf(t *testing.T, sp *spec.Spec) map[harness.Flavor]string {
	out := map[harness.Flavor]string{}
	for _, f := range harness.AllFlavors {
		for _, id := range sp.Servers {
			if strings.HasPrefix(id, string(f)+".") {
				require.Empty(t, out[f], "flavor %s matches spec servers %s and %s", f, out[f], id)
				out[f] = id
			}
		}
		require.NotEmpty(t, out[f], "flavor %s has no server in the spec (%v): run respgen spec against it", f, sp.Servers)
	}
	return out
}

// specHas reports whether the spec lists the command name on the spec
// server id.
func specHas(sp *spec.Spec, name, id string) bool {
	c := sp.Lookup(name)
	return c != nil && slices.Contains(c.Servers, id)
}

// servers lazily starts the special servers of one flavor.
type servers struct {
	t       *testing.T // the flavor's test: servers live as long as it
	mu      sync.Mutex
	cluster *harness.Server
}

func TestConformance(t *testing.T) {
	sp, err := spec.Load(repoFile(t, "spec/commands.json"))
	require.NoError(t, err)
	reps, err := gen.LoadReplies(repoFile(t, "spec/replies.txt"))
	require.NoError(t, err)

	serverOf := specServerOf(t, sp)
	generated := map[string]bool{}
	excluded := 0
	for _, c := range sp.Commands {
		if e := reps.Entries[c.Name]; e != nil && e.Excluded != "" {
			excluded++
			continue
		}
		generated[c.Name] = true
	}
	has := func(name string, f harness.Flavor) bool { return specHas(sp, name, serverOf[f]) }
	// exercised[cmd][flavor/proto] = true
	var mu sync.Mutex
	exercised := map[string]map[string]bool{}
	unsupportedOK := map[string]map[string]bool{}
	mark := func(m map[string]map[string]bool, cmd, where string) {
		mu.Lock()
		defer mu.Unlock()
		if m[cmd] == nil {
			m[cmd] = map[string]bool{}
		}
		m[cmd][where] = true
	}
	for _, cs := range cases {
		for _, name := range cs.Commands {
			require.True(t, generated[name], "case covers %q, which is not a generated command", name)
		}
	}

	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		shared := harness.Start(t, harness.Config{Flavor: f})
		sv := servers{t: t}
		for _, proto := range []int{2, 3} {
			t.Run("resp"+strconv.Itoa(proto), func(t *testing.T) {
				where := string(f) + "/resp" + strconv.Itoa(proto)
				for i, cs := range cases {
					name := cs.Name
					if name == "" {
						name = cs.Commands[0]
					}
					t.Run(strings.ReplaceAll(name, " ", "_"), func(t *testing.T) {
						missing := ""
						for _, c := range cs.Commands {
							if !has(c, f) {
								missing = c
								break
							}
						}
						srv := shared
						switch cs.Server {
						case "own":
							cfg := cs.Config
							cfg.Flavor = f
							srv = harness.Start(t, cfg)
						case "cluster":
							srv = sv.clusterServer(t, f)
						}
						ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
						defer cancel()
						c, err := respire.Connect(ctx, respire.Options{Addr: srv.Addr, Protocol: proto})
						require.NoError(t, err)
						defer c.Close()
						e := &Env{T: t, Ctx: ctx, C: c, Flavor: f, Proto: proto, Srv: srv,
							prefix: fmt.Sprintf("{cf%d:%s:%d}:", i, f, proto)}
						if missing != "" {
							require.NotNil(t, cs.Probe, "case %s: %s lacks %s: the case needs a Probe", name, f, missing)
							err := cs.Probe(e)
							var ue *respire.UnsupportedError
							require.ErrorAs(t, err, &ue, "%s on %s", cs.Commands[0], f)
							require.ErrorIs(t, err, respire.ErrUnsupported)
							require.Contains(t, err.Error(), cs.Commands[0])
							require.Contains(t, err.Error(), ue.Server)
							mark(unsupportedOK, cs.Commands[0], where)
							return
						}
						_, err = srv.Do(ctx, "CONFIG", "RESETSTAT")
						require.NoError(t, err)
						cs.Run(e)
						if t.Failed() {
							return
						}
						ran := commandStats(t, ctx, srv)
						for _, cmd := range cs.Commands {
							require.True(t, ran[cmd], "case %s did not run %s on the server", name, cmd)
							mark(exercised, cmd, where)
						}
					})
				}
			})
		}
	})

	// Count: a command is exercised when it ran under both protocols on
	// every server of the spec that has it, and was refused as unsupported
	// on the others.
	k := 0
	var notYet []string
	for name := range generated {
		ok := true
		for _, f := range harness.AllFlavors {
			for _, proto := range []string{"/resp2", "/resp3"} {
				where := string(f) + proto
				if has(name, f) {
					ok = ok && exercised[name][where]
				} else {
					ok = ok && (unsupportedOK[name][where] || coveredUnsupportedElsewhere(name))
				}
			}
		}
		if ok {
			k++
		} else {
			notYet = append(notYet, name)
		}
	}
	sort.Strings(notYet)
	summary := fmt.Sprintf("commands: spec=%d generated=%d exercised=%d excluded=%d", len(sp.Commands), len(generated), k, excluded)
	t.Log(summary)
	require.Equal(t, len(sp.Commands), len(generated)+excluded)
	if !partialAllowed {
		require.Empty(t, notYet, "generated commands not exercised everywhere")
	} else if len(notYet) > 0 {
		t.Logf("not yet exercised everywhere (%d): %s", len(notYet), strings.Join(notYet, ", "))
	}
}

// coveredUnsupportedElsewhere: a command probed through a case whose first
// command is another one counts through that case; only first commands
// are probed.
func coveredUnsupportedElsewhere(name string) bool {
	for _, cs := range cases {
		for i, c := range cs.Commands {
			if c == name && i > 0 {
				return true
			}
		}
	}
	return false
}

// commandStats returns the spec names of the commands the server ran
// (successfully or not) since the last CONFIG RESETSTAT.
func commandStats(t *testing.T, ctx context.Context, srv *harness.Server) map[string]bool {
	v, err := srv.Do(ctx, "INFO", "commandstats")
	require.NoError(t, err)
	text := fmt.Sprint(v)
	ran := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "cmdstat_") {
			continue
		}
		name, fields, _ := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		total := 0
		for _, kv := range strings.Split(fields, ",") {
			k, val, _ := strings.Cut(kv, "=")
			if k == "calls" || k == "failed_calls" || k == "rejected_calls" {
				n, _ := strconv.Atoi(val)
				total += n
			}
		}
		if total > 0 {
			ran[strings.ToUpper(strings.ReplaceAll(name, "|", " "))] = true
		}
	}
	return ran
}

// clusterServer starts, once per flavor, a one-node cluster owning every
// slot.
func (s *servers) clusterServer(t *testing.T, f harness.Flavor) *harness.Server {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cluster != nil {
		return s.cluster
	}
	srv := harness.Start(s.t, harness.Config{Flavor: f, Args: []string{"cluster-enabled yes"}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := srv.Do(ctx, "CLUSTER", "ADDSLOTSRANGE", "0", "16383")
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		v, err := srv.Do(ctx, "CLUSTER", "INFO")
		return err == nil && strings.Contains(fmt.Sprint(v), "cluster_state:ok")
	}, 20*time.Second, 20*time.Millisecond)
	s.cluster = srv
	return srv
}
