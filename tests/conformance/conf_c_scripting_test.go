package conformance

import (
	"crypto/sha1"
	"encoding/hex"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// Scripting cases (EVAL*, SCRIPT *, FCALL*, FUNCTION *) and COMMAND *.

func cSha1(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

const cLib = "#!lua name=cfclib\n" +
	"redis.register_function('cfc_echo', function(keys, args) return args[1] end)\n" +
	"redis.register_function{function_name='cfc_get', callback=function(keys, args) return redis.call('GET', keys[1]) end, flags={'no-writes'}, description='reads a key'}\n"

func init() {
	register(Case{
		Name: "c_script",
		Commands: []string{"EVAL", "EVAL_RO", "SCRIPT LOAD", "SCRIPT EXISTS", "EVALSHA", "EVALSHA_RO",
			"SCRIPT KILL", "SCRIPT FLUSH", "SCRIPT HELP"},
		Run: func(e *Env) {
			k := e.Key("s")
			r, err := e.C.Eval(e.Ctx, "redis.call('SET', KEYS[1], ARGV[1]); return {KEYS[1], ARGV[1], 7}", []string{k}, "val")
			require.NoError(e, err)
			parts, err := r.Slice()
			require.NoError(e, err)
			require.Len(e, parts, 3)
			s, _ := parts[0].Text()
			require.Equal(e, k, s)
			s, _ = parts[1].Text()
			require.Equal(e, "val", s)
			n, err := parts[2].Int64()
			require.NoError(e, err)
			require.Equal(e, int64(7), n)
			_, err = e.C.Eval(e.Ctx, "return redis.error_reply('CFCERR custom')", nil)
			e.ServerError(err, "CFCERR")
			// Arguments of any type Do takes, sent as Do sends them.
			r, err = e.C.Eval(e.Ctx, "return ARGV[1] .. '|' .. ARGV[2] .. '|' .. ARGV[3]", nil, 42, 1.5, true)
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Equal(e, "42|1.5|1", s)
			_, err = e.C.Eval(e.Ctx, "return 1", nil, struct{}{})
			var ae *respire.ArgError
			require.ErrorAs(e, err, &ae, "an unsupported type fails before sending")

			r, err = e.C.EvalRO(e.Ctx, "return redis.call('GET', KEYS[1])", []string{k})
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Equal(e, "val", s)
			_, err = e.C.EvalRO(e.Ctx, "return redis.call('DEL', KEYS[1])", []string{k})
			require.Error(e, err)

			script := "return ARGV[1] .. '!'"
			sha, err := e.C.ScriptLoad(e.Ctx, script)
			require.NoError(e, err)
			require.Equal(e, cSha1(script), sha)
			ex, err := e.C.ScriptExists(e.Ctx, sha, strings.Repeat("0", 40))
			require.NoError(e, err)
			require.Equal(e, []bool{true, false}, ex)

			r, err = e.C.EvalSha(e.Ctx, sha, nil, "x")
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Equal(e, "x!", s)
			r, err = e.C.EvalShaRO(e.Ctx, sha, []string{k}, "y")
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Equal(e, "y!", s)
			_, err = e.C.EvalSha(e.Ctx, strings.Repeat("0", 40), nil)
			e.ServerError(err, "NOSCRIPT")

			err = e.C.ScriptKill(e.Ctx)
			e.ServerError(err, "NOTBUSY")

			require.NoError(e, e.C.ScriptFlush(e.Ctx, &respire.ScriptFlushOptions{FlushType: respire.FlushModeSync}))
			ex, err = e.C.ScriptExists(e.Ctx, sha)
			require.NoError(e, err)
			require.Equal(e, []bool{false}, ex)
			require.NoError(e, e.C.ScriptFlush(e.Ctx, nil))

			help, err := e.C.ScriptHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "SCRIPT")
		},
	}, Case{
		Name:     "c_script_show",
		Commands: []string{"SCRIPT SHOW"},
		Probe: func(e *Env) error {
			_, err := e.C.ScriptShow(e.Ctx, strings.Repeat("0", 40))
			return err
		},
		Run: func(e *Env) {
			script := "return 'cfc-show'"
			sha := e.Do("SCRIPT", "LOAD", script)
			shaText, err := sha.Text()
			require.NoError(e, err)
			s, err := e.C.ScriptShow(e.Ctx, shaText)
			require.NoError(e, err)
			require.Equal(e, script, s)
			_, err = e.C.ScriptShow(e.Ctx, strings.Repeat("0", 40))
			e.ServerError(err, "NOSCRIPT")
		},
	}, Case{
		Name: "c_function",
		Commands: []string{"FUNCTION FLUSH", "FUNCTION LOAD", "FCALL", "FCALL_RO", "FUNCTION LIST",
			"FUNCTION STATS", "FUNCTION DUMP", "FUNCTION DELETE", "FUNCTION RESTORE", "FUNCTION KILL",
			"FUNCTION HELP"},
		Run: func(e *Env) {
			require.NoError(e, e.C.FunctionFlush(e.Ctx, &respire.FunctionFlushOptions{FlushType: respire.FlushModeSync}))
			defer e.Srv.Do(e.Ctx, "FUNCTION", "FLUSH")
			name, err := e.C.FunctionLoad(e.Ctx, cLib, nil)
			require.NoError(e, err)
			require.Equal(e, "cfclib", name)
			_, err = e.C.FunctionLoad(e.Ctx, cLib, nil)
			e.ServerError(err, "ERR")
			name, err = e.C.FunctionLoad(e.Ctx, cLib, &respire.FunctionLoadOptions{Replace: true})
			require.NoError(e, err)
			require.Equal(e, "cfclib", name)

			k := e.Key("f")
			e.Do("SET", k, "fv")
			r, err := e.C.FCall(e.Ctx, "cfc_echo", nil, "hi")
			require.NoError(e, err)
			s, err := r.Text()
			require.NoError(e, err)
			require.Equal(e, "hi", s)
			r, err = e.C.FCallRO(e.Ctx, "cfc_get", []string{k})
			require.NoError(e, err)
			s, err = r.Text()
			require.NoError(e, err)
			require.Equal(e, "fv", s)
			_, err = e.C.FCallRO(e.Ctx, "cfc_echo", nil, "x") // not flagged no-writes
			e.ServerError(err, "ERR")

			libs, err := e.C.FunctionList(e.Ctx, &respire.FunctionListOptions{LibraryName: "cfc*", WithCode: true})
			require.NoError(e, err)
			require.Len(e, libs, 1)
			lib := libs[0]
			require.Equal(e, "cfclib", lib.LibraryName)
			require.Equal(e, "LUA", strings.ToUpper(lib.Engine))
			require.Equal(e, cLib, lib.LibraryCode)
			require.Len(e, lib.Functions, 2)
			fns := map[string]respire.FunctionInfo{}
			for _, f := range lib.Functions {
				fns[f.Name] = f
			}
			require.False(e, fns["cfc_echo"].Description.Valid)
			require.Empty(e, fns["cfc_echo"].Flags)
			require.True(e, fns["cfc_get"].Description.Valid)
			require.Equal(e, "reads a key", fns["cfc_get"].Description.V)
			require.Equal(e, []string{"no-writes"}, fns["cfc_get"].Flags)
			libs, err = e.C.FunctionList(e.Ctx, nil)
			require.NoError(e, err)
			require.Len(e, libs, 1)
			require.Empty(e, libs[0].LibraryCode)

			st, err := e.C.FunctionStats(e.Ctx)
			require.NoError(e, err)
			require.Nil(e, st.RunningScript)
			lua, ok := st.Engines["LUA"]
			require.True(e, ok, "%+v", st.Engines)
			require.Equal(e, int64(1), lua.LibrariesCount)
			require.Equal(e, int64(2), lua.FunctionsCount)

			dump, err := e.C.FunctionDump(e.Ctx)
			require.NoError(e, err)
			require.NotEmpty(e, dump)
			require.NoError(e, e.C.FunctionDelete(e.Ctx, "cfclib"))
			e.ServerError(e.C.FunctionDelete(e.Ctx, "cfclib"), "ERR")
			libs, err = e.C.FunctionList(e.Ctx, nil)
			require.NoError(e, err)
			require.Empty(e, libs)

			require.NoError(e, e.C.FunctionRestore(e.Ctx, dump, nil))
			e.ServerError(e.C.FunctionRestore(e.Ctx, dump, nil), "ERR") // the library exists
			require.NoError(e, e.C.FunctionRestore(e.Ctx, dump, &respire.FunctionRestoreOptions{Policy: respire.FunctionRestorePolicyReplace}))
			require.NoError(e, e.C.FunctionRestore(e.Ctx, dump, &respire.FunctionRestoreOptions{Policy: respire.FunctionRestorePolicyFlush}))
			libs, err = e.C.FunctionList(e.Ctx, &respire.FunctionListOptions{WithCode: true})
			require.NoError(e, err)
			require.Len(e, libs, 1)
			require.Equal(e, cLib, libs[0].LibraryCode)
			r, err = e.C.FCall(e.Ctx, "cfc_echo", nil, "again")
			require.NoError(e, err)
			s, _ = r.Text()
			require.Equal(e, "again", s)

			e.ServerError(e.C.FunctionKill(e.Ctx), "NOTBUSY")
			require.NoError(e, e.C.FunctionFlush(e.Ctx, nil))
			libs, err = e.C.FunctionList(e.Ctx, nil)
			require.NoError(e, err)
			require.Empty(e, libs)

			help, err := e.C.FunctionHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "FUNCTION")
		},
	}, Case{
		// A script and a function that spin until killed, run from a
		// second client; with a low busy threshold the server answers
		// FUNCTION STATS and the KILL commands meanwhile.
		Name:     "c_script_busy",
		Commands: []string{"FUNCTION STATS", "FUNCTION KILL", "SCRIPT KILL", "EVAL", "FCALL"},
		Run: func(e *Env) {
			e.Do("CONFIG", "SET", "busy-reply-threshold", "10")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "busy-reply-threshold", "5000")
			defer e.Srv.Do(e.Ctx, "FUNCTION", "DELETE", "cfcspin")
			defer e.Srv.Do(e.Ctx, "SCRIPT", "KILL")
			defer e.Srv.Do(e.Ctx, "FUNCTION", "KILL")
			e.Do("FUNCTION", "LOAD", "REPLACE", "#!lua name=cfcspin\n"+
				"redis.register_function{function_name='cfc_spin', callback=function(keys, args) local i = 0 while true do i = i + 1 end end, flags={'no-writes'}}")
			c2, err := respire.Connect(e.Ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto})
			require.NoError(e, err)
			defer c2.Close()

			done := make(chan error, 1)
			go func() { _, err := c2.FCall(e.Ctx, "cfc_spin", nil, "a1"); done <- err }()
			var st respire.FunctionStats
			require.Eventually(e, func() bool {
				st, err = e.C.FunctionStats(e.Ctx)
				require.NoError(e, err)
				return st.RunningScript != nil
			}, 10*time.Second, 5*time.Millisecond)
			require.Equal(e, "cfc_spin", st.RunningScript.Name)
			require.Equal(e, []string{"fcall", "cfc_spin", "0", "a1"}, lowerFirst(st.RunningScript.Command))
			require.GreaterOrEqual(e, st.RunningScript.DurationMs, int64(0))
			require.Equal(e, int64(1), st.Engines["LUA"].FunctionsCount)
			e.ServerError(e.C.ScriptKill(e.Ctx), "BUSY") // a function runs, not a script
			require.NoError(e, e.C.FunctionKill(e.Ctx))
			err = <-done
			require.Error(e, err)
			require.Contains(e, err.Error(), "killed")

			go func() { _, err := c2.Eval(e.Ctx, "local i = 0 while true do i = i + 1 end", nil); done <- err }()
			require.Eventually(e, func() bool {
				err := e.C.ScriptKill(e.Ctx)
				if err == nil {
					return true
				}
				e.ServerError(err, "NOTBUSY")
				return false
			}, 10*time.Second, 5*time.Millisecond)
			err = <-done
			require.Error(e, err)
			require.Contains(e, err.Error(), "killed")
			st, err = e.C.FunctionStats(e.Ctx)
			require.NoError(e, err)
			require.Nil(e, st.RunningScript)
		},
	}, Case{
		Name: "c_command",
		Commands: []string{"COMMAND", "COMMAND COUNT", "COMMAND DOCS", "COMMAND INFO", "COMMAND GETKEYS",
			"COMMAND GETKEYSANDFLAGS", "COMMAND LIST", "COMMAND HELP"},
		Run: func(e *Env) {
			all, err := e.C.Command(e.Ctx)
			require.NoError(e, err)
			cmds, err := all.Slice()
			require.NoError(e, err)
			n, err := e.C.CommandCount(e.Ctx)
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(200))
			require.Equal(e, n, int64(len(cmds)))

			docs, err := e.C.CommandDocs(e.Ctx, "get", "nosuchcommand")
			require.NoError(e, err)
			m, err := docs.Map()
			require.NoError(e, err)
			require.Len(e, m, 1)
			get, err := m["get"].Map()
			require.NoError(e, err)
			summary, err := get["summary"].Text()
			require.NoError(e, err)
			require.NotEmpty(e, summary)
			grp, err := get["group"].Text()
			require.NoError(e, err)
			require.Equal(e, "string", grp)

			info, err := e.C.CommandInfo(e.Ctx, "get", "nosuchcommand")
			require.NoError(e, err)
			infos, err := info.Slice()
			require.NoError(e, err)
			require.Len(e, infos, 2)
			require.True(e, infos[1].IsNull())
			gi, err := infos[0].Slice()
			require.NoError(e, err)
			require.GreaterOrEqual(e, len(gi), 10)
			s, err := gi[0].Text()
			require.NoError(e, err)
			require.Equal(e, "get", s)
			arity, err := gi[1].Int64()
			require.NoError(e, err)
			require.Equal(e, int64(2), arity)

			keys, err := e.C.CommandGetKeys(e.Ctx, "SET", "ka", "v")
			require.NoError(e, err)
			require.Equal(e, []string{"ka"}, keys)
			keys, err = e.C.CommandGetKeys(e.Ctx, "MSET", "k1", "v1", "k2", "v2")
			require.NoError(e, err)
			require.Equal(e, []string{"k1", "k2"}, keys)
			_, err = e.C.CommandGetKeys(e.Ctx, "PING")
			e.ServerError(err, "ERR")

			kf, err := e.C.CommandGetKeysAndFlags(e.Ctx, "LMOVE", "src", "dst", "LEFT", "RIGHT")
			require.NoError(e, err)
			require.Len(e, kf, 2)
			require.Equal(e, "src", kf[0].Key)
			require.Subset(e, kf[0].Flags, []string{"RW", "access", "delete"})
			require.Equal(e, "dst", kf[1].Key)
			require.Subset(e, kf[1].Flags, []string{"RW", "insert"})

			names, err := e.C.CommandList(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, names, "get")
			require.Contains(e, names, "client|list")
			require.GreaterOrEqual(e, len(names), int(n))
			names, err = e.C.CommandList(e.Ctx, &respire.CommandListOptions{FilterBy: respire.FilterBy{ACLCat: "hyperloglog"}})
			require.NoError(e, err)
			require.Contains(e, names, "pfadd")
			require.NotContains(e, names, "get")
			names, err = e.C.CommandList(e.Ctx, &respire.CommandListOptions{FilterBy: respire.FilterBy{Pattern: "xa*"}})
			require.NoError(e, err)
			want := []string{"xack", "xadd", "xautoclaim"}
			if e.Flavor == harness.Redis86 {
				want = append(want, "xackdel") // Redis 8.2
			}
			require.ElementsMatch(e, want, names)
			names, err = e.C.CommandList(e.Ctx, &respire.CommandListOptions{FilterBy: respire.FilterBy{Module: "cfcnosuchmodule"}})
			require.NoError(e, err)
			require.Empty(e, names)

			help, err := e.C.CommandHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "COMMAND")
		},
	})
}

// lowerFirst lower-cases the command name of an argument list.
func lowerFirst(args []string) []string {
	out := append([]string(nil), args...)
	if len(out) > 0 {
		out[0] = strings.ToLower(out[0])
	}
	return out
}
