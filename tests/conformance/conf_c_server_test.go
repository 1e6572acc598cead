package conformance

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// Cases for the server and connection groups: PING, ECHO, TIME, INFO,
// persistence, CONFIG, SLOWLOG, LATENCY, MEMORY, MODULE, replication.

func cInt(v int64) *int64 { return &v }

func cBool(v bool) *bool { return &v }

// cWaitInfo waits until INFO section reports field:want.
func cWaitInfo(e *Env, section, field, want string) {
	e.Helper()
	require.Eventually(e, func() bool {
		v, err := e.Srv.Do(e.Ctx, "INFO", section)
		return err == nil && strings.Contains(fmt.Sprint(v), field+":"+want+"\r")
	}, 10*time.Second, 5*time.Millisecond, "INFO %s %s:%s", section, field, want)
}

func init() {
	register(Case{
		Name:     "c_basics",
		Commands: []string{"PING", "ECHO", "TIME", "DBSIZE", "INFO", "LOLWUT", "ROLE"},
		Run: func(e *Env) {
			s, err := e.C.Ping(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "PONG", s)
			s, err = e.C.PingMessage(e.Ctx, "hi there")
			require.NoError(e, err)
			require.Equal(e, "hi there", s)

			s, err = e.C.Echo(e.Ctx, "héllo\r\nworld")
			require.NoError(e, err)
			require.Equal(e, "héllo\r\nworld", s)

			before := time.Now()
			tm, err := e.C.Time(e.Ctx)
			require.NoError(e, err)
			got := time.Unix(tm.Seconds, tm.Microseconds*1000)
			require.WithinDuration(e, before, got, 5*time.Second)
			require.GreaterOrEqual(e, tm.Microseconds, int64(0))
			require.Less(e, tm.Microseconds, int64(1_000_000))

			e.Do("SET", e.Key("k"), "v")
			n, err := e.C.DBSize(e.Ctx)
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(1))

			info, err := e.C.Info(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, info, "# Server")
			require.Contains(e, info, "redis_version:")
			info, err = e.C.Info(e.Ctx, "server", "keyspace")
			require.NoError(e, err)
			require.Contains(e, info, "# Server")
			require.Contains(e, info, "# Keyspace")
			require.NotContains(e, info, "# Memory")

			s, err = e.C.Lolwut(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, s, " ver. ")
			s, err = e.C.Lolwut(e.Ctx, &respire.LolwutOptions{Version: 5})
			require.NoError(e, err)
			require.Contains(e, s, " ver. ")

			role, err := e.C.Role(e.Ctx)
			require.NoError(e, err)
			parts, err := role.Slice()
			require.NoError(e, err)
			require.Len(e, parts, 3)
			r0, err := parts[0].Text()
			require.NoError(e, err)
			require.Equal(e, "master", r0)
			off, err := parts[1].Int64()
			require.NoError(e, err)
			require.GreaterOrEqual(e, off, int64(0))
			reps, err := parts[2].Slice()
			require.NoError(e, err)
			require.Empty(e, reps)
		},
	}, Case{
		Name:     "c_persistence",
		Commands: []string{"SAVE", "LASTSAVE", "BGSAVE", "BGREWRITEAOF"},
		Run: func(e *Env) {
			// Nothing may run in the background from an earlier case.
			cWaitInfo(e, "persistence", "rdb_bgsave_in_progress", "0")
			cWaitInfo(e, "persistence", "aof_rewrite_in_progress", "0")
			e.Do("SET", e.Key("k"), "v")
			require.NoError(e, e.C.Save(e.Ctx))
			last, err := e.C.LastSave(e.Ctx)
			require.NoError(e, err)
			require.InDelta(e, time.Now().Unix(), last, 5)

			s, err := e.C.BgSave(e.Ctx, nil)
			require.NoError(e, err)
			require.Equal(e, "Background saving started", s)
			cWaitInfo(e, "persistence", "rdb_bgsave_in_progress", "0")
			s, err = e.C.BgSave(e.Ctx, &respire.BgSaveOptions{Operation: respire.BgSaveOperationSchedule})
			require.NoError(e, err)
			require.Equal(e, "Background saving started", s)
			cWaitInfo(e, "persistence", "rdb_bgsave_in_progress", "0")
			last2, err := e.C.LastSave(e.Ctx)
			require.NoError(e, err)
			require.GreaterOrEqual(e, last2, last)

			// CANCEL came with Valkey 8.1 (nothing to cancel here).
			_, err = e.C.BgSave(e.Ctx, &respire.BgSaveOptions{Operation: respire.BgSaveOperationCancel})
			e.ServerError(err, "ERR")
			if dValkey(e) {
				require.Contains(e, err.Error(), "not in progress")
			} else {
				require.Contains(e, err.Error(), "syntax error")
			}

			s, err = e.C.BgRewriteAOF(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "Background append only file rewriting started", s)
			cWaitInfo(e, "persistence", "aof_rewrite_in_progress", "0")
		},
	}, Case{
		Name:     "c_config",
		Commands: []string{"CONFIG RESETSTAT", "CONFIG GET", "CONFIG SET", "CONFIG HELP", "CONFIG REWRITE"},
		Run: func(e *Env) {
			// First: it clears the command statistics the framework reads.
			require.NoError(e, e.C.ConfigResetStat(e.Ctx))

			m, err := e.C.ConfigGet(e.Ctx, "maxmemory-policy")
			require.NoError(e, err)
			require.Equal(e, map[string]string{"maxmemory-policy": "noeviction"}, m)
			m, err = e.C.ConfigGet(e.Ctx, "maxmemory-policy", "hz")
			require.NoError(e, err)
			require.Equal(e, map[string]string{"maxmemory-policy": "noeviction", "hz": "10"}, m)
			m, err = e.C.ConfigGet(e.Ctx, "maxmemory-p*")
			require.NoError(e, err)
			require.Equal(e, "noeviction", m["maxmemory-policy"])
			m, err = e.C.ConfigGet(e.Ctx, "no-such-parameter")
			require.NoError(e, err)
			require.Empty(e, m)

			require.NoError(e, e.C.ConfigSet(e.Ctx,
				respire.ConfigParam{Parameter: "maxmemory-policy", Value: "allkeys-lru"},
				respire.ConfigParam{Parameter: "hz", Value: "11"}))
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "maxmemory-policy", "noeviction", "hz", "10")
			m, err = e.C.ConfigGet(e.Ctx, "maxmemory-policy", "hz")
			require.NoError(e, err)
			require.Equal(e, map[string]string{"maxmemory-policy": "allkeys-lru", "hz": "11"}, m)
			require.NoError(e, e.C.ConfigSet(e.Ctx,
				respire.ConfigParam{Parameter: "maxmemory-policy", Value: "noeviction"},
				respire.ConfigParam{Parameter: "hz", Value: "10"}))
			err = e.C.ConfigSet(e.Ctx, respire.ConfigParam{Parameter: "no-such-parameter", Value: "1"})
			e.ServerError(err, "ERR")

			help, err := e.C.ConfigHelp(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, help)
			require.Contains(e, help[0], "CONFIG")

			// The harness starts servers without a configuration file.
			err = e.C.ConfigRewrite(e.Ctx)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "without a config file")
		},
	}, Case{
		Name:     "c_slowlog",
		Commands: []string{"SLOWLOG RESET", "SLOWLOG GET", "SLOWLOG LEN", "SLOWLOG HELP"},
		Run: func(e *Env) {
			e.Do("CONFIG", "SET", "slowlog-log-slower-than", "0")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "slowlog-log-slower-than", "10000")
			require.NoError(e, e.C.SlowLogReset(e.Ctx))
			// CLIENT SETNAME is refused on shared connections: the name
			// comes from Options.
			named, err := respire.Connect(e.Ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto, ClientName: "cfc-slow"})
			require.NoError(e, err)
			defer named.Close()
			_, err = named.Echo(e.Ctx, "slow-marker")
			require.NoError(e, err)
			n, err := e.C.SlowLogLen(e.Ctx)
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(2))

			entries, err := e.C.SlowLogGet(e.Ctx, &respire.SlowLogGetOptions{Count: -1})
			require.NoError(e, err)
			require.GreaterOrEqual(e, len(entries), int(n)) // SLOWLOG LEN is logged too
			var found *respire.SlowLogEntry
			for i := range entries {
				if len(entries[i].Args) == 2 && entries[i].Args[1] == "slow-marker" {
					found = &entries[i]
				}
			}
			require.NotNil(e, found, "%+v", entries)
			require.Equal(e, "ECHO", strings.ToUpper(found.Args[0]))
			require.Equal(e, "cfc-slow", found.ClientName)
			require.Contains(e, found.Client, "127.0.0.1:")
			require.GreaterOrEqual(e, found.Duration, int64(0))
			require.InDelta(e, time.Now().Unix(), found.Timestamp, 5)
			require.GreaterOrEqual(e, found.ID, int64(0))

			entries, err = e.C.SlowLogGet(e.Ctx, &respire.SlowLogGetOptions{Count: 1})
			require.NoError(e, err)
			require.Len(e, entries, 1)
			entries, err = e.C.SlowLogGet(e.Ctx, nil)
			require.NoError(e, err)
			require.NotEmpty(e, entries)

			help, err := e.C.SlowLogHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "SLOWLOG")
			e.Do("CONFIG", "SET", "slowlog-log-slower-than", "10000")
			require.NoError(e, e.C.SlowLogReset(e.Ctx))
			n, err = e.C.SlowLogLen(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
		},
	}, Case{
		Name: "c_latency",
		Commands: []string{"LATENCY RESET", "DEBUG", "LATENCY LATEST", "LATENCY HISTORY",
			"LATENCY GRAPH", "LATENCY DOCTOR", "LATENCY HISTOGRAM", "LATENCY HELP"},
		Run: func(e *Env) {
			e.Do("CONFIG", "SET", "latency-monitor-threshold", "1")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "latency-monitor-threshold", "0")
			_, err := e.C.LatencyReset(e.Ctx)
			require.NoError(e, err)

			r, err := e.C.Debug(e.Ctx, "SLEEP", "0.02")
			require.NoError(e, err)
			s, err := r.Text()
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			e.Do("SET", e.Key("obj"), "12345")
			r, err = e.C.Debug(e.Ctx, "OBJECT", e.Key("obj"))
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Contains(e, s, "encoding:int")
			_, err = e.C.Debug(e.Ctx, "NO-SUCH-SUBCOMMAND")
			e.ServerError(err, "ERR")

			latest, err := e.C.LatencyLatest(e.Ctx)
			require.NoError(e, err)
			var ev *respire.LatencyEvent
			for i := range latest {
				if latest[i].Event == "command" {
					ev = &latest[i]
				}
			}
			require.NotNil(e, ev, "%+v", latest)
			require.GreaterOrEqual(e, ev.Latest, int64(20))
			require.GreaterOrEqual(e, ev.Max, ev.Latest)
			require.InDelta(e, time.Now().Unix(), ev.Timestamp, 5)
			if dValkey(e) {
				// Valkey 8.1 adds the total and count of the samples.
				require.GreaterOrEqual(e, ev.Sum, ev.Latest)
				require.GreaterOrEqual(e, ev.Count, int64(1))
			} else {
				require.Zero(e, ev.Sum)
				require.Zero(e, ev.Count)
			}

			hist, err := e.C.LatencyHistory(e.Ctx, "command")
			require.NoError(e, err)
			require.NotEmpty(e, hist)
			require.GreaterOrEqual(e, hist[len(hist)-1].Latency, int64(20))
			require.InDelta(e, time.Now().Unix(), hist[len(hist)-1].Timestamp, 5)
			hist, err = e.C.LatencyHistory(e.Ctx, "no-such-event")
			require.NoError(e, err)
			require.Empty(e, hist)

			g, err := e.C.LatencyGraph(e.Ctx, "command")
			require.NoError(e, err)
			require.Contains(e, g, "command - high")
			_, err = e.C.LatencyGraph(e.Ctx, "no-such-event")
			e.ServerError(err, "ERR")

			doc, err := e.C.LatencyDoctor(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, doc, "command")

			_, err = e.C.Ping(e.Ctx)
			require.NoError(e, err)
			hg, err := e.C.LatencyHistogram(e.Ctx, "ping", "set")
			require.NoError(e, err)
			require.Contains(e, hg, "ping")
			require.GreaterOrEqual(e, hg["ping"].Calls, int64(1))
			require.NotEmpty(e, hg["ping"].HistogramUsec)
			var total int64
			for bucket, cum := range hg["ping"].HistogramUsec {
				require.Greater(e, bucket, int64(0))
				total = max(total, cum)
			}
			require.Equal(e, hg["ping"].Calls, total)

			help, err := e.C.LatencyHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "LATENCY")

			n, err := e.C.LatencyReset(e.Ctx, "command")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.LatencyReset(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
		},
	}, Case{
		Name: "c_memory",
		Commands: []string{"MEMORY USAGE", "MEMORY STATS", "MEMORY DOCTOR", "MEMORY MALLOC-STATS",
			"MEMORY PURGE", "MEMORY HELP"},
		Run: func(e *Env) {
			k := e.Key("m")
			e.Do("SET", k, strings.Repeat("x", 1000))
			n, err := e.C.MemoryUsage(e.Ctx, k, nil)
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(1000))
			n, err = e.C.MemoryUsage(e.Ctx, k, &respire.MemoryUsageOptions{Samples: cInt(0)})
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(1000))
			_, err = e.C.MemoryUsage(e.Ctx, e.Key("missing"), nil)
			require.ErrorIs(e, err, respire.Nil)

			st, err := e.C.MemoryStats(e.Ctx)
			require.NoError(e, err)
			peak, err := st["peak.allocated"].Int64()
			require.NoError(e, err)
			require.Greater(e, peak, int64(0))
			keys, err := st["keys.count"].Int64()
			require.NoError(e, err)
			require.GreaterOrEqual(e, keys, int64(1))
			_, err = st["dataset.percentage"].Float64()
			require.NoError(e, err)

			doc, err := e.C.MemoryDoctor(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, doc, "Sam")
			ms, err := e.C.MemoryMallocStats(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, ms)
			require.NoError(e, e.C.MemoryPurge(e.Ctx))
			help, err := e.C.MemoryHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "MEMORY")
		},
	}, Case{
		// No module file is at hand: the loading commands run (a server of
		// its own allows MODULE from loopback) and fail.
		Name:     "c_module",
		Commands: []string{"MODULE LIST", "MODULE HELP", "MODULE LOAD", "MODULE LOADEX", "MODULE UNLOAD"},
		Server:   "own",
		Config:   harness.Config{Args: []string{"enable-module-command local"}},
		Run: func(e *Env) {
			mods, err := e.C.ModuleList(e.Ctx)
			require.NoError(e, err)
			switch {
			case e.Flavor == harness.Redis80 || e.Flavor == harness.Redis86:
				// Redis 8 ships vector sets as a built-in module.
				require.Len(e, mods, 1)
				require.Equal(e, "vectorset", mods[0].Name)
				require.Equal(e, int64(1), mods[0].Ver)
				require.Empty(e, mods[0].Args)
			case e.Flavor == harness.Valkey91:
				// Valkey 9 lists its Lua engine as a module.
				require.Len(e, mods, 1)
				require.Equal(e, "lua", mods[0].Name)
				require.Empty(e, mods[0].Args)
			default:
				require.Empty(e, mods)
			}
			help, err := e.C.ModuleHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "MODULE")
			err = e.C.ModuleLoad(e.Ctx, "/nonexistent/cfc.so", "a", "b")
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "Error loading the extension")
			err = e.C.ModuleLoadEx(e.Ctx, "/nonexistent/cfc.so", &respire.ModuleLoadExOptions{
				Config: []respire.Configs{{Name: "x", Value: "1"}}, Args: []string{"a"}})
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "Error loading the extension")
			err = e.C.ModuleUnload(e.Ctx, "cfcnosuchmodule")
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "no such module")
		},
	}, Case{
		Name:     "c_replication",
		Commands: []string{"REPLICAOF", "SLAVEOF", "FAILOVER"},
		Run: func(e *Env) {
			s, err := e.C.ReplicaOf(e.Ctx, respire.ReplicaOfArgs{NoOne: true})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			s, err = e.C.SlaveOf(e.Ctx, respire.ReplicaOfArgs{NoOne: true})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			err = e.C.Failover(e.Ctx, nil)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "FAILOVER requires connected replicas")
			err = e.C.Failover(e.Ctx, &respire.FailoverOptions{Abort: true})
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "No failover in progress")
		},
	}, Case{
		// A primary (this case's server, A) and a replica (B): ROLE with a
		// replica, a FAILOVER to B, then A is pointed back and forth.
		Name:     "c_replication_pair",
		Commands: []string{"ROLE", "FAILOVER", "REPLICAOF", "SLAVEOF"},
		Server:   "own",
		// No wait for more replicas before the (diskless) full sync.
		Config: harness.Config{Args: []string{"repl-diskless-sync-delay 0"}},
		Run: func(e *Env) {
			b := harness.Start(e.T, harness.Config{Flavor: e.Flavor})
			cb, err := respire.Connect(e.Ctx, respire.Options{Addr: b.Addr, Protocol: e.Proto})
			require.NoError(e, err)
			defer cb.Close()
			hostA, portA := cSplitAddr(e, e.Srv.Addr)
			hostB, portB := cSplitAddr(e, b.Addr)
			e.Do("SET", e.Key("k"), "v")
			s, err := cb.ReplicaOf(e.Ctx, respire.ReplicaOfArgs{Host: hostA, Port: portA})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			require.Eventually(e, func() bool {
				v, err := b.Do(e.Ctx, "INFO", "replication")
				return err == nil && strings.Contains(fmt.Sprint(v), "master_link_status:up")
			}, 15*time.Second, 10*time.Millisecond)

			// ROLE of a primary: master, offset, [[ip, port, offset]].
			var reps []respire.Reply
			require.Eventually(e, func() bool {
				role, err := e.C.Role(e.Ctx)
				require.NoError(e, err)
				parts, err := role.Slice()
				require.NoError(e, err)
				reps, err = parts[2].Slice()
				require.NoError(e, err)
				return len(reps) == 1
			}, 15*time.Second, 10*time.Millisecond)
			rep, err := reps[0].Slice()
			require.NoError(e, err)
			require.Len(e, rep, 3)
			ip, _ := rep[0].Text()
			require.Equal(e, hostB, ip)
			p, err := rep[1].Int64() // a string in the reply
			require.NoError(e, err)
			require.Equal(e, portB, p)

			require.NoError(e, e.C.Failover(e.Ctx, &respire.FailoverOptions{
				TO: &respire.FailoverTarget{Host: hostB, Port: portB}, Timeout: 10 * time.Second}))
			// ROLE of a replica: slave, host, port, state, offset.
			require.Eventually(e, func() bool {
				role, err := e.C.Role(e.Ctx)
				require.NoError(e, err)
				parts, err := role.Slice()
				require.NoError(e, err)
				r0, _ := parts[0].Text()
				if r0 != "slave" {
					return false
				}
				require.Len(e, parts, 5)
				h, _ := parts[1].Text()
				require.Equal(e, hostB, h)
				p, err := parts[2].Int64()
				require.NoError(e, err)
				require.Equal(e, portB, p)
				return true
			}, 15*time.Second, 10*time.Millisecond)
			cWaitInfo(e, "replication", "master_failover_state", "no-failover")
			err = e.C.Failover(e.Ctx, nil)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "replica")

			s, err = e.C.ReplicaOf(e.Ctx, respire.ReplicaOfArgs{NoOne: true})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			s, err = e.C.SlaveOf(e.Ctx, respire.ReplicaOfArgs{Host: hostB, Port: portB})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			s, err = e.C.ReplicaOf(e.Ctx, respire.ReplicaOfArgs{Host: hostB, Port: portB})
			require.NoError(e, err)
			require.Contains(e, s, "OK Already connected")
			s, err = e.C.SlaveOf(e.Ctx, respire.ReplicaOfArgs{NoOne: true})
			require.NoError(e, err)
			require.Equal(e, "OK", s)
		},
	}, Case{
		// A server of its own: the keyspace is emptied, swapped and the
		// server shut down (and restarted so the statistics can be read).
		Name:     "c_keyspace_shutdown",
		Commands: []string{"SWAPDB", "FLUSHDB", "FLUSHALL", "SHUTDOWN"},
		Server:   "own",
		Run: func(e *Env) {
			// SHUTDOWN NOSAVE: the server exits, the reply is the
			// connection closing.
			err := e.C.Shutdown(e.Ctx, &respire.ShutdownOptions{
				SaveSelector: respire.SaveSelectorNoSave, Now: true})
			require.Error(e, err)
			var se *respire.Error
			require.False(e, errors.As(err, &se), "SHUTDOWN replied with a server error: %v", err)
			var ce *respire.ConnError
			require.ErrorAs(e, err, &ce) // "connection ... broken: unexpected EOF"
			require.Eventually(e, func() bool {
				_, err := e.Srv.Do(e.Ctx, "PING")
				return err != nil
			}, 5*time.Second, 5*time.Millisecond, "the server still answers after SHUTDOWN")
			e.Srv.Restart(e.T)
			// After the restart (which cleared the statistics): a refused
			// SHUTDOWN ABORT, which the statistics count.
			err = e.C.Shutdown(e.Ctx, &respire.ShutdownOptions{Abort: true})
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "No shutdown in progress")

			k := e.Key("k")
			e.Do("SET", k, "v")
			require.NoError(e, e.C.SwapDB(e.Ctx, 0, 1))
			n, err := e.C.DBSize(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			require.NoError(e, e.C.SwapDB(e.Ctx, 1, 0))
			v, err := e.C.Get(e.Ctx, k)
			require.NoError(e, err)
			require.Equal(e, "v", v)
			e.ServerError(e.C.SwapDB(e.Ctx, 0, 100000), "ERR")

			require.NoError(e, e.C.FlushDB(e.Ctx, nil))
			n, err = e.C.DBSize(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			e.Do("SET", k, "v")
			require.NoError(e, e.C.FlushDB(e.Ctx, &respire.FlushDBOptions{FlushType: respire.FlushModeAsync}))
			e.Do("SET", k, "v")
			require.NoError(e, e.C.FlushAll(e.Ctx, &respire.FlushAllOptions{FlushType: respire.FlushModeSync}))
			n, err = e.C.DBSize(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			require.NoError(e, e.C.FlushAll(e.Ctx, nil))
		},
	})
}

func cSplitAddr(e *Env, addr string) (string, int64) {
	e.Helper()
	h, p, err := net.SplitHostPort(addr)
	require.NoError(e, err)
	n, err := strconv.ParseInt(p, 10, 64)
	require.NoError(e, err)
	return h, n
}
