package conformance

import (
	"strings"

	"github.com/respire-go/respire/respire"
	"github.com/stretchr/testify/require"
)

// COMMANDLOG (Valkey 8.1 only): one case per command, each probed on the
// servers that lack it. The thresholds are lowered for a moment and set
// back to their defaults.

var (
	cLogSlow    = respire.CommandLogGetTypeSlow
	cLogRequest = respire.CommandLogGetTypeLargeRequest
	cLogReply   = respire.CommandLogGetTypeLargeReply
)

func init() {
	register(Case{
		Name:     "c_commandlog_get",
		Commands: []string{"COMMANDLOG GET"},
		Probe: func(e *Env) error {
			_, err := e.C.CommandLogGet(e.Ctx, 1, cLogSlow)
			return err
		},
		Run: func(e *Env) {
			// CLIENT SETNAME is refused on shared connections: the name
			// comes from Options. Connected first, so that its handshake's
			// replies are not logged.
			named, err := respire.Connect(e.Ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto, ClientName: "cfc-log"})
			require.NoError(e, err)
			defer named.Close()
			e.Do("CONFIG", "SET", "commandlog-reply-larger-than", "100")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "commandlog-reply-larger-than", "1048576")
			e.Do("COMMANDLOG", "RESET", "large-reply")
			msg := strings.Repeat("r", 120) // the log keeps arguments up to 128 bytes
			_, err = named.Echo(e.Ctx, msg)
			require.NoError(e, err)
			e.Do("CONFIG", "SET", "commandlog-reply-larger-than", "1048576")

			entries, err := e.C.CommandLogGet(e.Ctx, -1, cLogReply)
			require.NoError(e, err)
			require.Len(e, entries, 1, "%+v", entries)
			ent := entries[0]
			require.Equal(e, []string{"echo", msg}, []string{strings.ToLower(ent.Args[0]), ent.Args[1]})
			require.GreaterOrEqual(e, ent.Value, int64(120)) // reply bytes
			require.Equal(e, "cfc-log", ent.ClientName)
			require.Contains(e, ent.Client, "127.0.0.1:")
			require.Greater(e, ent.Timestamp, int64(0))
			require.GreaterOrEqual(e, ent.ID, int64(0))

			entries, err = e.C.CommandLogGet(e.Ctx, 5, cLogRequest)
			require.NoError(e, err)
			require.Empty(e, entries)
			_, err = e.C.CommandLogGet(e.Ctx, 1, respire.CommandLogGetType("no-such-type"))
			e.ServerError(err, "ERR")
		},
	}, Case{
		Name:     "c_commandlog_len",
		Commands: []string{"COMMANDLOG LEN"},
		Probe: func(e *Env) error {
			_, err := e.C.CommandLogLen(e.Ctx, cLogSlow)
			return err
		},
		Run: func(e *Env) {
			e.Do("CONFIG", "SET", "commandlog-request-larger-than", "100")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "commandlog-request-larger-than", "1048576")
			e.Do("COMMANDLOG", "RESET", "large-request")
			_, err := e.C.Echo(e.Ctx, strings.Repeat("q", 500))
			require.NoError(e, err)
			_, err = e.C.Echo(e.Ctx, strings.Repeat("q", 600))
			require.NoError(e, err)
			e.Do("CONFIG", "SET", "commandlog-request-larger-than", "1048576")
			n, err := e.C.CommandLogLen(e.Ctx, cLogRequest)
			require.NoError(e, err)
			require.Equal(e, int64(2), n)
			e.Do("COMMANDLOG", "RESET", "large-request")
			n, err = e.C.CommandLogLen(e.Ctx, cLogRequest)
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
		},
	}, Case{
		Name:     "c_commandlog_reset",
		Commands: []string{"COMMANDLOG RESET"},
		Probe:    func(e *Env) error { return e.C.CommandLogReset(e.Ctx, cLogSlow) },
		Run: func(e *Env) {
			e.Do("CONFIG", "SET", "commandlog-execution-slower-than", "0")
			defer e.Srv.Do(e.Ctx, "CONFIG", "SET", "commandlog-execution-slower-than", "10000")
			_, err := e.C.Echo(e.Ctx, "x")
			require.NoError(e, err)
			e.Do("CONFIG", "SET", "commandlog-execution-slower-than", "10000")
			n, err := e.Do("COMMANDLOG", "LEN", "slow").Int64()
			require.NoError(e, err)
			require.GreaterOrEqual(e, n, int64(1))
			require.NoError(e, e.C.CommandLogReset(e.Ctx, cLogSlow))
			n, err = e.Do("COMMANDLOG", "LEN", "slow").Int64()
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			require.NoError(e, e.C.CommandLogReset(e.Ctx, cLogReply))
		},
	}, Case{
		Name:     "c_commandlog_help",
		Commands: []string{"COMMANDLOG HELP"},
		Probe: func(e *Env) error {
			_, err := e.C.CommandLogHelp(e.Ctx)
			return err
		},
		Run: func(e *Env) {
			help, err := e.C.CommandLogHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "COMMANDLOG")
			require.Greater(e, len(help), 3)
		},
	})
}
