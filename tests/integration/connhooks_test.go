package integration

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/respire-go/respire/respire"
	"github.com/respire-go/respire/tests/harness"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// recordingDialer is an Options.Dialer that dials with a net.Dialer and
// records the local address of every connection it made, by the address
// dialed.
type recordingDialer struct {
	mu    sync.Mutex
	local map[string]bool     // local addresses of the connections dialed
	addrs map[string]int      // dials per address
	conns map[string]net.Conn // by local address
}

func newRecordingDialer() *recordingDialer {
	return &recordingDialer{local: map[string]bool{}, addrs: map[string]int{}, conns: map[string]net.Conn{}}
}

func (d *recordingDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.local[nc.LocalAddr().String()] = true
	d.addrs[addr]++
	w := &wrappedConn{Conn: nc}
	d.conns[nc.LocalAddr().String()] = w
	return w, nil
}

func (d *recordingDialer) dialed(local string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.local[local]
}

func (d *recordingDialer) dials(addr string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.addrs[addr]
}

// wrappedConn is what the dialer returns: the client must use it as it is.
type wrappedConn struct{ net.Conn }

// clientEntry is one line of CLIENT LIST.
type clientEntry map[string]string

func clientList(t *testing.T, do func(ctx context.Context, args ...string) (any, error)) []clientEntry {
	t.Helper()
	r, err := do(ctxT(t), "CLIENT", "LIST")
	require.NoError(t, err)
	var out []clientEntry
	for _, line := range strings.Split(strings.TrimSpace(fmt.Sprint(r)), "\n") {
		e := clientEntry{}
		for _, f := range strings.Fields(line) {
			if k, v, ok := strings.Cut(f, "="); ok {
				e[k] = v
			}
		}
		out = append(out, e)
	}
	return out
}

// named returns the CLIENT LIST entries of the connections named name.
func named(t *testing.T, do func(ctx context.Context, args ...string) (any, error), name string) []clientEntry {
	var out []clientEntry
	for _, e := range clientList(t, do) {
		if e["name"] == name {
			out = append(out, e)
		}
	}
	return out
}

// noEvictHook is an OnConnect hook that turns on CLIENT NO-EVICT, which
// CLIENT LIST shows as the flag 'e', and counts its runs.
type noEvictHook struct {
	mu   sync.Mutex
	runs int
}

func (h *noEvictHook) hook(ctx context.Context, conn *respire.SetupConn) error {
	if _, err := conn.Do(ctx, "CLIENT", "NO-EVICT", "ON"); err != nil {
		return err
	}
	h.mu.Lock()
	h.runs++
	h.mu.Unlock()
	return nil
}

// useEveryKind makes the client open each kind of connection: multiplexed
// (and batch connections, under concurrent batches), the blocking pool,
// pub/sub, WithConn.
func useEveryKind(t *testing.T, c *respire.Client, prefix string) *respire.Subscription {
	t.Helper()
	ctx := ctxT(t)
	require.NoError(t, c.Set(ctx, prefix+"k", "v", nil))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20 {
				b := c.NewBatch()
				for j := range 50 {
					b.Set(fmt.Sprintf("%s%d:%d", prefix, g, j), strings.Repeat("x", 100*i), nil)
				}
				assert.NoError(t, b.Exec(ctx))
			}
		})
	}
	wg.Wait()
	_, err := c.BLPop(ctx, 10*time.Millisecond, prefix+"list")
	require.ErrorIs(t, err, respire.Nil)
	sub, err := c.Subscribe(ctx, prefix+"ch")
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	require.NoError(t, c.WithConn(ctx, func(conn *respire.Conn) error {
		_, err := conn.Do(ctx, "PING")
		return err
	}))
	return sub
}

// checkAllDialed asserts that every connection named name that the server
// lists came from the dialer and ran the hook, and that there are at
// least min of them.
func checkAllDialed(t *testing.T, do func(ctx context.Context, args ...string) (any, error), name string, d *recordingDialer, min int) {
	t.Helper()
	es := named(t, do, name)
	assert.GreaterOrEqual(t, len(es), min, "connections named %s", name)
	for _, e := range es {
		assert.True(t, d.dialed(e["addr"]), "connection %s (cmd=%s) did not come from the dialer", e["addr"], e["cmd"])
		assert.Contains(t, e["flags"], "e", "connection %s (cmd=%s) did not run the hook's CLIENT NO-EVICT ON", e["addr"], e["cmd"])
	}
}

// TestDialerAndHookOnEveryConnection: Options.Dialer opens, and
// Options.OnConnect sets up, every connection a client makes to a single
// server, a cluster's nodes, and the sentinels and master of a Sentinel
// deployment.
func TestDialerAndHookOnEveryConnection(t *testing.T) {
	t.Run("standalone", func(t *testing.T) {
		srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				d, h := newRecordingDialer(), &noEvictHook{}
				name := fmt.Sprintf("dialtest%d", proto)
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, ClientName: name,
					Dialer: d.dial, OnConnect: h.hook})
				useEveryKind(t, c, name+":")
				// Multiplexed, blocking, pub/sub, WithConn (closed now).
				checkAllDialed(t, srv.Do, name, d, 3)
				assert.Equal(t, d.dials(srv.Addr), h.runs)
			})
		}
	})
	t.Run("cluster", func(t *testing.T) {
		hc := harness.SharedCluster(t, harness.Redis80)
		d, h := newRecordingDialer(), &noEvictHook{}
		c := clusterClient(t, hc, respire.Options{ClientName: "dialtestcl", Dialer: d.dial, OnConnect: h.hook})
		useEveryKind(t, c, "dialtestcl:")
		ctx := ctxT(t)
		ssub, err := c.SSubscribe(ctx, "dialtestcl:sch")
		require.NoError(t, err)
		defer ssub.Close()
		total := 0
		for _, n := range hc.Masters() {
			checkAllDialed(t, n.Do, "dialtestcl", d, 1)
			total += len(named(t, n.Do, "dialtestcl"))
		}
		assert.GreaterOrEqual(t, total, 3+len(hc.Masters()))
	})
	t.Run("sentinel", func(t *testing.T) {
		sd := harness.StartSentinels(t, harness.SentinelConfig{Flavor: harness.Redis80})
		ctx := ctxT(t)
		require.NoError(t, sd.WaitStable(ctx))
		d, h := newRecordingDialer(), &noEvictHook{}
		opts := sentinelOpts(sd)
		opts.ClientName, opts.Dialer, opts.OnConnect = "dialtestsn", d.dial, h.hook
		c := connect(t, opts)
		useEveryKind(t, c, "dialtestsn:")
		master := sd.Node(c.SentinelMaster())
		require.NotNil(t, master)
		checkAllDialed(t, master.Do, "dialtestsn", d, 3)
		// The sentinels were dialed through it too, and what each of them
		// lists from the client's side came from it.
		seen := 0
		for _, sp := range sd.Sentinel {
			if d.dials(sp.Addr) == 0 {
				continue
			}
			seen++
			found := 0
			for _, e := range clientList(t, sp.Do) {
				if d.dialed(e["addr"]) {
					found++
				}
			}
			assert.Positive(t, found, "sentinel %s lists none of the dialer's connections", sp.Addr)
		}
		assert.Positive(t, seen, "no sentinel was dialed through the Dialer")
	})
}

// TestOnConnectErrors: a hook's refused command or error fails the dial
// with a permanent *HandshakeError at once; a hook that succeeds again lets
// the client recover.
func TestOnConnectErrors(t *testing.T) {
	srv := harness.Start(t, harness.Config{Flavor: harness.Redis80})
	bg := context.Background()

	t.Run("refused command", func(t *testing.T) {
		for _, args := range [][]any{{"SELECT", 1}, {"subscribe", "ch"}, {"CLIENT", "REPLY", "OFF"}, {"MULTI"}, {"HELLO", "3"}, {"AUTH", "x"}, {"RESET"}} {
			_, err := respire.Connect(bg, respire.Options{Addr: srv.Addr, OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
				_, err := conn.Do(ctx, args...)
				return err
			}})
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he, "%v", args)
			assert.Equal(t, "OnConnect", he.Step)
			assert.True(t, he.Permanent())
			var ae *respire.ArgError
			require.ErrorAs(t, err, &ae, "%v", args)
			assert.Contains(t, err.Error(), "refused")
			assert.Contains(t, strings.ToUpper(err.Error()), strings.ToUpper(fmt.Sprint(args[0])))
		}
	})

	t.Run("hook error at once, then recovery", func(t *testing.T) {
		errHook := errors.New("setup not ready")
		var mu sync.Mutex
		fail := true
		c, err := respire.NewClient(respire.Options{Addr: srv.Addr, MaxRetryBackoff: 20 * time.Millisecond,
			OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
				mu.Lock()
				defer mu.Unlock()
				if fail {
					return errHook
				}
				return nil
			}})
		require.NoError(t, err)
		defer c.Close()
		done := make(chan error, 1)
		go func() { _, err := c.Get(bg, "hook:k"); done <- err }()
		select {
		case err := <-done:
			require.ErrorIs(t, err, errHook)
			checkPermanent(t, err, "")
		case <-time.After(10 * time.Second):
			t.Fatal("a failing OnConnect kept the caller waiting")
		}
		mu.Lock()
		fail = false
		mu.Unlock()
		require.Eventually(t, func() bool {
			ctx, cancel := context.WithTimeout(bg, time.Second)
			defer cancel()
			_, err := c.Get(ctx, "hook:k")
			return errors.Is(err, respire.Nil)
		}, 10*time.Second, 10*time.Millisecond)
	})

	t.Run("server error reply", func(t *testing.T) {
		_, err := respire.Connect(bg, respire.Options{Addr: srv.Addr, OnConnect: func(ctx context.Context, conn *respire.SetupConn) error {
			_, err := conn.Do(ctx, "CLIENT", "NO-SUCH-SUBCOMMAND")
			return err
		}})
		var se *respire.Error
		require.ErrorAs(t, err, &se)
		assert.Equal(t, "ERR", se.Prefix)
		assert.Equal(t, "CLIENT", se.Command)
		checkPermanent(t, err, "ERR")
	})
}

// TestClientSetInfo: the handshake names the library where the server
// knows CLIENT SETINFO (Redis 7.2+, Valkey 8+) on every kind of
// connection, goes on without it on Redis 7.0, and sends nothing with
// NoClientInfo.
func TestClientSetInfo(t *testing.T) {
	harness.ForEachFlavor(t, func(t *testing.T, f harness.Flavor) {
		srv := startFlavor(t, f, harness.Config{})
		for _, proto := range []int{2, 3} {
			t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
				ctx := ctxT(t)
				name := fmt.Sprintf("setinfo%d", proto)
				c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, ClientName: name})
				useEveryKind(t, c, name+":")
				r, err := c.Do(ctx, "CLIENT", "INFO")
				require.NoError(t, err)
				info, _ := r.Text()
				es := named(t, srv.Do, name)
				require.NotEmpty(t, es)
				if f == harness.Redis70 {
					assert.NotContains(t, info, "lib-name=")
					return
				}
				assert.Contains(t, info, "lib-name=respire ")
				assert.Contains(t, info, "lib-ver="+strings.TrimPrefix(respire.Version, "v")+" ")
				for _, e := range es {
					assert.Equal(t, "respire", e["lib-name"], "connection %s (cmd=%s)", e["addr"], e["cmd"])
					assert.Equal(t, strings.TrimPrefix(respire.Version, "v"), e["lib-ver"])
				}

				off := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, NoClientInfo: true})
				r, err = off.Do(ctx, "CLIENT", "INFO")
				require.NoError(t, err)
				info, _ = r.Text()
				assert.Contains(t, info, "lib-name= ")
				assert.Contains(t, info, "lib-ver= ")
			})
		}
	})
}

// TestCredentialsRotateUnderLoad: an ACL user's password changes while 32
// goroutines run commands (single, batched, blocking, pub/sub): the server
// takes the new password, the provider gives it, Reauthenticate, the old
// password is removed. No call fails, and new connections authenticate
// with the new password. Then a switch to another user shows that every
// live connection was sent AUTH; a wrong password is refused at once.
func TestCredentialsRotateUnderLoad(t *testing.T) {
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			srv := harness.Start(t, harness.Config{Flavor: harness.Redis80, Users: []harness.User{
				{Name: "app", Password: "old-secret", Rules: "~* &* +@all"},
				{Name: "app2", Password: "second-secret", Rules: "~* &* +@all"},
			}})
			ctx := ctxT(t)
			var creds atomic.Pointer[[2]string]
			creds.Store(&[2]string{"app", "old-secret"})
			provider := func(context.Context) (string, string, error) {
				c := creds.Load()
				return c[0], c[1], nil
			}
			name := fmt.Sprintf("rotate%d", proto)
			c := connect(t, respire.Options{Addr: srv.Addr, Protocol: proto, ClientName: name, Credentials: provider})

			var ok, failed atomic.Int64
			var firstErr atomic.Value
			fail := func(err error) {
				failed.Add(1)
				firstErr.CompareAndSwap(nil, err)
			}
			stop := make(chan struct{})
			var wg sync.WaitGroup
			for g := range 32 {
				wg.Go(func() {
					key := fmt.Sprintf("%s:%d", name, g)
					for n := int64(1); ; n++ {
						select {
						case <-stop:
							return
						default:
						}
						switch g % 4 {
						case 0, 1:
							v, err := c.Incr(ctx, key)
							if err != nil || v != n {
								fail(fmt.Errorf("INCR %s = %d, %v; want %d", key, v, err, n))
								return
							}
						case 2:
							b := c.NewBatch()
							var fs []*respire.Future[int64]
							for range 5 {
								fs = append(fs, b.Incr(key))
							}
							if err := b.Exec(ctx); err != nil {
								fail(err)
								return
							}
							for i, f := range fs {
								if v, err := f.Result(); err != nil || v != 5*(n-1)+int64(i)+1 {
									fail(fmt.Errorf("batch INCR %s = %d, %v", key, v, err))
									return
								}
							}
						case 3:
							if _, err := c.BLPop(ctx, 5*time.Millisecond, key); !errors.Is(err, respire.Nil) {
								fail(fmt.Errorf("BLPOP: %v", err))
								return
							}
						}
						ok.Add(1)
					}
				})
			}
			sub, err := c.Subscribe(ctx, name+":ch")
			require.NoError(t, err)
			defer sub.Close()
			wg.Go(func() {
				for n := 1; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := c.Publish(ctx, name+":ch", fmt.Sprint(n)); err != nil {
						fail(fmt.Errorf("PUBLISH: %v", err))
						return
					}
					m, err := sub.Next(ctx)
					if err != nil || m.Gap != nil || m.Payload != fmt.Sprint(n) {
						fail(fmt.Errorf("pub/sub message %d: %+v, %v", n, m, err))
						return
					}
					ok.Add(1)
				}
			})
			progress := func(more int64) {
				t.Helper()
				want := ok.Load() + more
				require.Eventually(t, func() bool { return ok.Load() >= want || failed.Load() > 0 },
					30*time.Second, time.Millisecond)
			}
			progress(2000)

			_, err = srv.Do(ctx, "ACL", "SETUSER", "app", ">new-secret")
			require.NoError(t, err)
			creds.Store(&[2]string{"app", "new-secret"})
			require.NoError(t, c.Reauthenticate(ctx))
			_, err = srv.Do(ctx, "ACL", "SETUSER", "app", "<old-secret")
			require.NoError(t, err)
			progress(2000)
			close(stop)
			wg.Wait()
			require.Zero(t, failed.Load(), "first failure: %v", firstErr.Load())

			// Every connection of the client again, now with only the
			// new password valid.
			_, err = srv.Do(ctx, "CLIENT", "KILL", "USER", "app")
			require.NoError(t, err)
			require.Eventually(t, func() bool {
				v, err := c.Get(ctx, name+":0")
				return err == nil && v != ""
			}, 10*time.Second, 5*time.Millisecond)
			useEveryKind(t, c, name+":after:")
			es := named(t, srv.Do, name)
			require.NotEmpty(t, es)
			for _, e := range es {
				assert.Equal(t, "app", e["user"])
			}
			log, err := srv.Do(ctx, "ACL", "LOG")
			require.NoError(t, err)
			assert.Empty(t, log, "the server logged refused authentications")

			// Another user: CLIENT LIST shows which connections were sent
			// AUTH (all but a RESP2 subscriber, which the server does not
			// let re-authenticate).
			_, err = c.BLPop(ctx, time.Millisecond, name+":list") // an idle pool connection
			require.ErrorIs(t, err, respire.Nil)
			creds.Store(&[2]string{"app2", "second-secret"})
			require.NoError(t, c.Reauthenticate(ctx))
			kinds := map[string]int{}
			for _, e := range named(t, srv.Do, name) {
				if proto == 2 && e["sub"] != "0" {
					assert.Equal(t, "app", e["user"], "the RESP2 subscriber")
					continue
				}
				assert.Equal(t, "app2", e["user"], "connection %s (cmd=%s flags=%s)", e["addr"], e["cmd"], e["flags"])
				kinds[e["flags"]]++
			}
			// Multiplexed (and batch) connections, the pool's, the
			// subscriber: all there.
			assert.GreaterOrEqual(t, kinds["N"], 2, "%v", kinds)
			if proto == 3 {
				assert.Equal(t, 1, kinds["P"], "%v", kinds)
			}

			// A refused credential: an error at once, the connections as
			// they were.
			creds.Store(&[2]string{"app2", "wrong"})
			err = c.Reauthenticate(ctx)
			var he *respire.HandshakeError
			require.ErrorAs(t, err, &he)
			assert.True(t, he.Permanent())
			var se *respire.Error
			require.ErrorAs(t, err, &se)
			assert.Equal(t, "WRONGPASS", se.Prefix)
			_, err = c.Get(ctx, name+":0")
			require.NoError(t, err)
			_, err = respire.Connect(ctx, respire.Options{Addr: srv.Addr, Protocol: proto, Credentials: provider})
			checkPermanent(t, err, "WRONGPASS")
		})
	}
}
