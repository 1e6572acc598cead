package conformance

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/require"
)

// CLIENT cases. The case's client has one multiplexed connection; blocking
// commands run on a connection of its blocking pool.

// cBlockedID waits for the one connection blocked in BLPOP and returns its id.
func cBlockedID(e *Env) int64 {
	e.Helper()
	re := regexp.MustCompile(`(?m)^id=(\d+) .* flags=[A-Za-z]*b[A-Za-z]* .*cmd=blpop`)
	var id int64
	require.Eventually(e, func() bool {
		list, err := e.C.ClientList(e.Ctx, nil)
		if err != nil {
			return false
		}
		m := re.FindAllStringSubmatch(list, -1)
		if len(m) != 1 {
			return false
		}
		id, _ = strconv.ParseInt(m[0][1], 10, 64)
		return true
	}, 5*time.Second, 2*time.Millisecond)
	return id
}

func init() {
	register(Case{
		Name: "c_client",
		Commands: []string{"CLIENT GETNAME", "CLIENT ID", "CLIENT INFO", "CLIENT LIST",
			"CLIENT GETREDIR", "CLIENT TRACKINGINFO", "CLIENT PAUSE", "CLIENT UNPAUSE",
			"CLIENT HELP"},
		Run: func(e *Env) {
			name, err := e.C.ClientGetName(e.Ctx)
			if err != nil {
				require.ErrorIs(e, err, respire.Nil)
			} else {
				require.Equal(e, "", name)
			}
			// CLIENT SETNAME and NO-EVICT change a connection every caller
			// shares: they come from Options, and Do refuses them.
			_, err = e.C.Do(e.Ctx, "CLIENT", "SETNAME", "cfc-name")
			var ae *respire.ArgError
			require.ErrorAs(e, err, &ae)
			named, err := respire.Connect(e.Ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto, ClientName: "cfc-name",
				OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
					_, err := conn.Do(ctx, "CLIENT", "NO-EVICT", "ON")
					return err
				}})
			require.NoError(e, err)
			defer named.Close()
			name, err = named.ClientGetName(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, "cfc-name", name)

			id, err := named.ClientID(e.Ctx)
			require.NoError(e, err)
			require.Greater(e, id, int64(0))
			info, err := named.ClientInfo(e.Ctx)
			require.NoError(e, err)
			require.True(e, strings.HasPrefix(info, "id="+strconv.FormatInt(id, 10)+" "), info)
			require.Contains(e, info, " name=cfc-name ")
			require.Contains(e, info, " resp="+strconv.Itoa(e.Proto))
			require.Regexp(e, ` flags=[A-Za-z]*e`, info, "CLIENT NO-EVICT ON from OnConnect")

			list, err := e.C.ClientList(e.Ctx, nil)
			require.NoError(e, err)
			require.Contains(e, list, "id="+strconv.FormatInt(id, 10)+" ")
			list, err = e.C.ClientList(e.Ctx, &respire.ClientListOptions{ID: []int64{id}})
			require.NoError(e, err)
			require.Len(e, strings.Split(strings.TrimSpace(list), "\n"), 1)
			require.Contains(e, list, " name=cfc-name ")
			list, err = e.C.ClientList(e.Ctx, &respire.ClientListOptions{Type: respire.ClientListClientTypePubSub})
			require.NoError(e, err)
			require.NotContains(e, list, "name=cfc-name ")

			// The filters of Valkey 8.1.
			list, err = named.ClientList(e.Ctx, &respire.ClientListOptions{User: "default", SkipMe: cBool(false)})
			if dValkey(e) {
				require.NoError(e, err)
				require.Contains(e, list, "id="+strconv.FormatInt(id, 10)+" ")
				list, err = named.ClientList(e.Ctx, &respire.ClientListOptions{SkipMe: cBool(true)})
				require.NoError(e, err)
				require.NotContains(e, list, "id="+strconv.FormatInt(id, 10)+" ")
			} else {
				dUnsupportedArg(e, err, "CLIENT LIST", "USER")
			}

			redir, err := e.C.ClientGetRedir(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, int64(-1), redir)
			ti, err := e.C.ClientTrackingInfo(e.Ctx)
			require.NoError(e, err)
			require.Equal(e, []string{"off"}, ti.Flags)
			require.Equal(e, int64(-1), ti.Redirect)
			require.Empty(e, ti.Prefixes)

			// A short pause of writes; reads go on meanwhile.
			require.NoError(e, e.C.ClientPause(e.Ctx, 50*time.Millisecond, &respire.ClientPauseOptions{Mode: respire.ClientPauseModeWrite}))
			defer e.Srv.Do(e.Ctx, "CLIENT", "UNPAUSE")
			_, err = e.C.Ping(e.Ctx)
			require.NoError(e, err)
			require.NoError(e, e.C.ClientUnpause(e.Ctx))
			require.NoError(e, e.C.ClientPause(e.Ctx, 20*time.Millisecond, nil))
			start := time.Now()
			e.Do("SET", e.Key("p"), "1") // waits for the pause to end
			require.GreaterOrEqual(e, time.Since(start), 10*time.Millisecond)

			help, err := e.C.ClientHelp(e.Ctx)
			require.NoError(e, err)
			require.Contains(e, help[0], "CLIENT")
		},
	}, Case{
		Name:     "c_client_unblock_kill",
		Commands: []string{"CLIENT UNBLOCK", "CLIENT KILL"},
		Run: func(e *Env) {
			k := e.Key("blk")
			own, err := e.C.ClientID(e.Ctx)
			require.NoError(e, err)
			ok, err := e.C.ClientUnblock(e.Ctx, own, nil)
			require.NoError(e, err)
			require.False(e, ok)

			// Unblock as by a timeout: BLPOP returns a null.
			done := make(chan error, 1)
			go func() { _, err := e.C.BLPop(e.Ctx, 20*time.Second, k); done <- err }()
			id := cBlockedID(e)
			ok, err = e.C.ClientUnblock(e.Ctx, id, &respire.ClientUnblockOptions{UnblockType: respire.UnblockTypeTimeout})
			require.NoError(e, err)
			require.True(e, ok)
			require.ErrorIs(e, <-done, respire.Nil)

			// Unblock with an error: BLPOP returns UNBLOCKED.
			go func() { _, err := e.C.BLPop(e.Ctx, 20*time.Second, k); done <- err }()
			id = cBlockedID(e)
			ok, err = e.C.ClientUnblock(e.Ctx, id, &respire.ClientUnblockOptions{UnblockType: respire.UnblockTypeError})
			require.NoError(e, err)
			require.True(e, ok)
			e.ServerError(<-done, "UNBLOCKED")

			// CLIENT KILL of a second client's connection.
			ctx, cancel := context.WithTimeout(e.Ctx, 5*time.Second)
			defer cancel()
			c2, err := respire.Connect(ctx, respire.Options{Addr: e.Srv.Addr, Protocol: e.Proto, FailFast: true})
			require.NoError(e, err)
			defer c2.Close()
			id2, err := c2.ClientID(ctx)
			require.NoError(e, err)
			n, err := e.C.ClientKill(e.Ctx, respire.ClientKillFilter{ID: id2})
			require.NoError(e, err)
			require.Equal(e, int64(1), n)
			n, err = e.C.ClientKill(e.Ctx, respire.ClientKillFilter{ID: id2})
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			n, err = e.C.ClientKill(e.Ctx, respire.ClientKillFilter{Type: respire.ClientKillClientTypePubSub},
				respire.ClientKillFilter{SkipMe: cBool(true)})
			require.NoError(e, err)
			require.Equal(e, int64(0), n)
			// MAXAGE came with Redis 7.4; on Redis 7.0 the client refuses
			// it before anything is sent.
			n, err = e.C.ClientKill(e.Ctx, respire.ClientKillFilter{MaxAge: 1_000_000 * time.Second},
				respire.ClientKillFilter{SkipMe: cBool(true)})
			if e.Flavor == harness.Redis70 {
				dUnsupportedArg(e, err, "CLIENT KILL", "MAXAGE")
			} else {
				require.NoError(e, err)
				require.Equal(e, int64(0), n)
			}
			err = e.C.ClientKillOldFormat(e.Ctx, "192.0.2.1:1")
			e.ServerError(err, "ERR")
			require.Contains(e, err.Error(), "No such client")
			// The killed client's connection is gone.
			_, err = c2.Ping(ctx)
			if err != nil {
				var se *respire.Error
				require.False(e, errors.As(err, &se), "%v", err)
			}
		},
	})
}
