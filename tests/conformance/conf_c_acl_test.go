package conformance

import (
	"context"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// ACL cases: a user is created, inspected, exercised and removed again.

func cUserName(e *Env) string {
	return "cfc-" + strings.NewReplacer(".", "", "-", "").Replace(string(e.Flavor)) + "-" + string(rune('0'+e.Proto))
}

func init() {
	register(Case{
		Name: "c_acl",
		Commands: []string{"ACL SETUSER", "ACL GETUSER", "ACL DRYRUN", "ACL USERS", "ACL LIST", "ACL WHOAMI",
			"ACL CAT", "ACL GENPASS", "ACL LOG", "ACL DELUSER", "ACL LOAD", "ACL SAVE", "ACL HELP"},
		Run: func(e *Env) {
			user := cUserName(e)
			defer e.Srv.Do(e.Ctx, "ACL", "DELUSER", user)
			require.NoError(e, e.C.ACLSetUser(e.Ctx, user, "reset", "on", ">s3cret", "~cfc:*", "&chan*", "+get", "+set"))
			require.NoError(e, e.C.ACLSetUser(e.Ctx, user, "(~other:* +hget)"))
			err := e.C.ACLSetUser(e.Ctx, user, "+nosuchcommand")
			e.ServerError(err, "ERR")

			u, err := e.C.ACLGetUser(e.Ctx, user)
			require.NoError(e, err)
			require.Contains(e, u.Flags, "on")
			require.Len(e, u.Passwords, 1)
			require.Len(e, u.Passwords[0], 64) // SHA-256, hex
			require.Contains(e, u.Commands, "+get")
			require.Contains(e, u.Commands, "+set")
			require.Equal(e, "~cfc:*", u.Keys)
			require.Equal(e, "&chan*", u.Channels)
			require.Len(e, u.Selectors, 1)
			require.Equal(e, "~other:*", u.Selectors[0].Keys)
			require.Contains(e, u.Selectors[0].Commands, "+hget")
			_, err = e.C.ACLGetUser(e.Ctx, "cfc-no-such-user")
			require.ErrorIs(e, err, respire.Nil)

			s, err := e.C.ACLDryRun(e.Ctx, user, "get", "cfc:x")
			require.NoError(e, err)
			require.Equal(e, "OK", s)
			s, err = e.C.ACLDryRun(e.Ctx, user, "del", "cfc:x")
			require.NoError(e, err)
			require.Contains(e, s, "no permissions")
			_, err = e.C.ACLDryRun(e.Ctx, "cfc-no-such-user", "get", "x")
			e.ServerError(err, "ERR")

			users, err := e.C.ACLUsers(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, users, "default")
			require.Contains(e, users, user)
			list, err := e.C.ACLList(e.Ctx)
			require.NoError(e, err)
			require.Len(e, list, len(users))
			var line string
			for _, l := range list {
				if strings.HasPrefix(l, "user "+user+" ") {
					line = l
				}
			}
			require.Contains(e, line, " on ")
			require.Contains(e, line, "~cfc:*")

			who, err := e.C.ACLWhoAmI(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "default", who)

			cats, err := e.C.ACLCat(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, cats, "keyspace")
			require.Contains(e, cats, "string")
			cmds, err := e.C.ACLCat(e.Ctx, &respire.ACLCatOptions{Category: "string"})
			require.NoError(e, err)
			require.Contains(e, cmds, "get")
			require.NotContains(e, cmds, "hget")
			_, err = e.C.ACLCat(e.Ctx, &respire.ACLCatOptions{Category: "nosuchcategory"})
			e.ServerError(err, "ERR")

			p, err := e.C.ACLGenPass(e.Ctx, nil)
			require.NoError(e, err)
			require.Regexp(e, "^[0-9a-f]{64}$", p)
			p, err = e.C.ACLGenPass(e.Ctx, &respire.ACLGenPassOptions{Bits: 32})
			require.NoError(e, err)
			require.Regexp(e, "^[0-9a-f]{8}$", p)

			// A failed log-in makes an ACL LOG entry.
			require.NoError(e, e.C.ACLLogReset(e.Ctx))
			ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Second)
			bad, err := respire.Connect(ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto,
				Username: user, Password: "wrong", FailFast: true})
			cancel()
			if err == nil {
				bad.Close()
			}
			require.Error(e, err)
			log, err := e.C.ACLLog(e.Ctx, &respire.ACLLogOptions{Count: 10})
			require.NoError(e, err)
			require.NotEmpty(e, log)
			ent := log[0]
			require.Equal(e, user, ent.Username)
			require.Equal(e, "auth", ent.Reason)
			require.Equal(e, "toplevel", ent.Context)
			require.Contains(e, []string{"AUTH", "HELLO"}, strings.ToUpper(ent.Object)) // the client logs in with HELLO
			require.GreaterOrEqual(e, ent.Count, int64(1))
			require.GreaterOrEqual(e, ent.AgeSeconds, 0.0)
			require.Less(e, ent.AgeSeconds, 60.0)
			require.Contains(e, ent.ClientInfo, "addr=127.0.0.1:")
			if e.Flavor == harness.Redis70 {
				// entry-id and the time stamps came with Redis 7.2.
				require.Zero(e, ent.EntryID)
				require.Zero(e, ent.TimestampCreated)
				require.Zero(e, ent.TimestampLastUpdated)
			} else {
				require.GreaterOrEqual(e, ent.EntryID, int64(0))
				require.InDelta(e, time.Now().UnixMilli(), ent.TimestampCreated, 60_000)
				require.GreaterOrEqual(e, ent.TimestampLastUpdated, ent.TimestampCreated)
			}
			log, err = e.C.ACLLog(e.Ctx, nil)
			require.NoError(e, err)
			require.NotEmpty(e, log)
			require.NoError(e, e.C.ACLLogReset(e.Ctx))
			log, err = e.C.ACLLog(e.Ctx, nil)
			require.NoError(e, err)
			require.Empty(e, log)

			n, err := e.C.ACLDelUser(e.Ctx, user, "cfc-no-such-user")
			require.NoError(e, err)
			require.Equal(e, int64(1), n)

			// The harness servers run without an ACL file.
			err = e.C.ACLLoad(e.Ctx)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "not configured to use an ACL file")
			err = e.C.ACLSave(e.Ctx)
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "not configured to use an ACL file")

			help, err := e.C.ACLHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "ACL")
		},
	})
}
